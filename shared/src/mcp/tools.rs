//! The tools the MCP server offers a site's key: every template's (knowledge search,
//! reading a conversation, sending a message to the assistant) and the template's own
//! ([`TemplateTools`]: a template declares them in its folder, and the templates' registry,
//! `Template::mcp_tools`, hands them to the Worker, which passes them in). Each is
//! scoped to the key's site by the Worker, which runs them; this module lists them, checks
//! their arguments against the schemas it publishes, and shapes their results.
//!
//! A call the server cannot run — an unknown tool, arguments that do not fit the schema, a
//! conversation the key cannot see — is answered with a *tool error* (`isError: true`, the
//! reason as text), as the official SDKs' servers do, so a client's model can read it and
//! correct itself; protocol errors are kept for malformed `tools/call` requests.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

pub use super::call::{
    DEFAULT_SEARCH_LIMIT, MAX_ID_CHARS, MAX_MESSAGE_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT,
    ToolCall,
};
use super::rpc::{INVALID_PARAMS, RpcError};

/// A template's own MCP tools, offered after every template's: what its folder declares.
#[derive(Debug, Clone, Copy)]
pub struct TemplateTools {
    /// Its tools, as `tools/list` lists them.
    pub list: fn() -> Vec<Value>,
    /// The call of one of its tools (a name [`TemplateTools::list`] names) with these
    /// arguments, or the text of the tool error that answers it.
    pub parse: fn(&str, Map<String, Value>) -> Result<ToolCall, String>,
    /// What the server's instructions add about them (`", and look up …"`), or `""`.
    pub instructions: &'static str,
}

impl TemplateTools {
    /// No tools of its own.
    pub const NONE: Self = Self {
        list: Vec::new,
        parse: |name, _| Err(format!("Unknown tool: {name}")),
        instructions: "",
    };
}

/// The tools a site offers whose template has `own` tools, as `tools/list` lists them.
pub fn list(own: &TemplateTools) -> Vec<Value> {
    let mut tools = alloc::vec![
        tool(
            "search_knowledge",
            "Search the site's knowledge",
            "Search the documents this site has uploaded, the way its assistant does before \
             answering. Returns the best-matching passages with their document titles and \
             scores.",
            json!({
                "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                          "description": "What to look for, in the visitor's words."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                          "default": DEFAULT_SEARCH_LIMIT,
                          "description": "How many passages at most."},
            }),
            &["query"],
            true,
        ),
        tool(
            "get_conversation",
            "Read a conversation",
            "Read the messages of one of this site's stored conversations, oldest first.",
            json!({
                "conversation_id": {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS,
                                    "description": "The conversation's id."},
            }),
            &["conversation_id"],
            true,
        ),
        tool(
            "send_message",
            "Ask the site's assistant",
            "Send a message to this site's assistant and get its answer. With \
             conversation_id the turn continues that stored conversation (and is stored); \
             without it the turn is stateless: answered on this message alone, nothing \
             stored.",
            json!({
                "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_CHARS,
                            "description": "The visitor's message."},
                "conversation_id": {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS,
                                    "description": "A stored conversation to continue."},
            }),
            &["message"],
            false,
        ),
    ];
    tools.extend((own.list)());
    tools
}

/// A tool as `tools/list` lists it: an object schema of `properties` (no others),
/// `required`, and its annotations (never open-world).
pub fn tool(
    name: &str,
    title: &str,
    description: &str,
    properties: Value,
    required: &[&str],
    read_only: bool,
) -> Value {
    json!({
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        },
        "annotations": {"title": title, "readOnlyHint": read_only, "openWorldHint": false},
    })
}

/// `tools/call`'s params: the tool's name and its arguments (`{}` when absent). A request
/// without a name is a protocol error.
pub fn call_params(params: Option<&Value>) -> Result<(&str, Map<String, Value>), RpcError> {
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::new(INVALID_PARAMS, "Invalid params: `name` is required."))?;
    let arguments = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: `arguments` must be an object.",
            ));
        }
    };
    Ok((name, arguments))
}

/// The call of tool `name` with `arguments` on a site whose template has `own` tools, or
/// the text of the tool error that answers it.
pub fn parse_call(
    own: &TemplateTools,
    name: &str,
    mut arguments: Map<String, Value>,
) -> Result<ToolCall, String> {
    let known = list(own)
        .iter()
        .any(|tool| tool["name"].as_str() == Some(name));
    if !known {
        return Err(format!("Unknown tool: {name}"));
    }
    if (own.list)().iter().any(|t| t["name"] == name) {
        return (own.parse)(name, arguments);
    }
    let invalid = |why: String| format!("Invalid arguments for {name}: {why}");
    let mut take = |key: &str| arguments.remove(key);
    let call = match name {
        "search_knowledge" => ToolCall::SearchKnowledge {
            query: text(take("query"), "query", MAX_QUERY_CHARS).map_err(invalid)?,
            limit: match take("limit") {
                None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
                Some(limit) => limit
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| (1..=MAX_SEARCH_LIMIT).contains(n))
                    .ok_or_else(|| {
                        invalid(format!(
                            "`limit` must be an integer from 1 to {MAX_SEARCH_LIMIT}."
                        ))
                    })?,
            },
        },
        "get_conversation" => ToolCall::GetConversation {
            conversation_id: text(take("conversation_id"), "conversation_id", MAX_ID_CHARS)
                .map_err(invalid)?,
        },
        "send_message" => ToolCall::SendMessage {
            message: text(take("message"), "message", MAX_MESSAGE_CHARS).map_err(invalid)?,
            conversation_id: match take("conversation_id") {
                None | Some(Value::Null) => None,
                id => Some(text(id, "conversation_id", MAX_ID_CHARS).map_err(invalid)?),
            },
        },
        _ => return Err(format!("Unknown tool: {name}")),
    };
    if let Some(extra) = arguments.keys().next() {
        return Err(invalid(format!("unknown argument `{extra}`.")));
    }
    Ok(call)
}

/// A required string argument: trimmed, 1 to `max_chars` characters; else the reason
/// ("`key` is required.", …).
pub fn text(value: Option<Value>, key: &str, max_chars: usize) -> Result<String, String> {
    match value {
        None | Some(Value::Null) => Err(format!("`{key}` is required.")),
        Some(Value::String(text)) => {
            let trimmed = text.trim();
            if trimmed.is_empty() || trimmed.chars().count() > max_chars {
                Err(format!("`{key}` must be 1 to {max_chars} characters."))
            } else {
                Ok(trimmed.to_string())
            }
        }
        Some(_) => Err(format!("`{key}` must be a string.")),
    }
}

/// A tool's result: `structured` as structured content, and its JSON text as the content
/// older clients read.
pub fn result(structured: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
        "isError": false,
    })
}

/// A tool error: `message` as the content, for the client's model to read.
pub fn error(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_call_without_a_name_or_with_non_object_arguments_is_a_protocol_error() {
        assert_eq!(call_params(None).unwrap_err().code, INVALID_PARAMS);
        let params = json!({"name": "x", "arguments": [1]});
        assert_eq!(call_params(Some(&params)).unwrap_err().code, INVALID_PARAMS);
        let params = json!({"name": "x"});
        assert_eq!(call_params(Some(&params)).unwrap().0, "x");
    }

    #[test]
    fn results_carry_text_and_structured_content_and_errors_are_flagged() {
        let ok = result(json!({"found": true}));
        assert_eq!(ok["isError"], false);
        assert_eq!(ok["structuredContent"]["found"], true);
        let text: Value = serde_json::from_str(ok["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["found"], true);
        let failed = error("Unknown tool: x");
        assert_eq!(failed["isError"], true);
        assert_eq!(failed["content"][0]["text"], "Unknown tool: x");
    }
}
