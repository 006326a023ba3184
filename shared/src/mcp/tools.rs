//! The tools the MCP server offers a site's key: every template's (knowledge search,
//! reading a conversation, sending a message to the assistant) and the template's own
//! read-only tools (`shop`: warranty lookup). Each is scoped to the key's site by the
//! Worker, which runs them; this module lists them, checks their arguments against the
//! schemas it publishes, and shapes their results.
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
use crate::flows::shop::warranty::{SERIAL_MAX_CHARS, SERIAL_MIN_CHARS, is_valid_serial};
use crate::template::Template;

/// The tools a site running `template` offers, as `tools/list` lists them.
pub fn list(template: Template) -> Vec<Value> {
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
    if template == Template::Shop {
        tools.push(tool(
            "lookup_warranty",
            "Look up a warranty",
            "Look up the warranty record of a product by its serial number: the product and \
             the last day of its warranty.",
            json!({
                "serial": {"type": "string", "minLength": SERIAL_MIN_CHARS,
                           "maxLength": SERIAL_MAX_CHARS, "pattern": "^[A-Za-z0-9-]+$",
                           "description": "The serial number, e.g. 0979825281."},
            }),
            &["serial"],
            true,
        ));
    }
    if template == Template::Guarded {
        tools.extend(super::guarded_tools::list());
    }
    tools
}

fn tool(
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

/// The call of tool `name` with `arguments` on a site running `template`, or the text of
/// the tool error that answers it.
pub fn parse_call(
    template: Template,
    name: &str,
    mut arguments: Map<String, Value>,
) -> Result<ToolCall, String> {
    let known = list(template)
        .iter()
        .any(|tool| tool["name"].as_str() == Some(name));
    if !known {
        return Err(format!("Unknown tool: {name}"));
    }
    if template == Template::Guarded
        && super::guarded_tools::list()
            .iter()
            .any(|t| t["name"] == name)
    {
        return super::guarded_tools::parse(name, arguments);
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
        _ => {
            let serial = text(take("serial"), "serial", SERIAL_MAX_CHARS).map_err(invalid)?;
            if !is_valid_serial(&serial) {
                return Err(invalid(format!(
                    "`serial` must be {SERIAL_MIN_CHARS} to {SERIAL_MAX_CHARS} letters, digits \
                     or '-'."
                )));
            }
            ToolCall::LookupWarranty { serial }
        }
    };
    if let Some(extra) = arguments.keys().next() {
        return Err(invalid(format!("unknown argument `{extra}`.")));
    }
    Ok(call)
}

/// A required string argument: trimmed, 1 to `max_chars` characters.
fn text(value: Option<Value>, key: &str, max_chars: usize) -> Result<String, String> {
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

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn every_tool_has_an_object_schema_and_shop_adds_its_warranty_lookup() {
        let shop = list(Template::Shop);
        let names: Vec<&str> = shop.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "search_knowledge",
                "get_conversation",
                "send_message",
                "lookup_warranty"
            ]
        );
        for tool in &shop {
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object");
            for required in schema["required"].as_array().unwrap() {
                let key = required.as_str().unwrap();
                assert!(schema["properties"].get(key).is_some(), "{key}");
            }
        }
        let analyst = list(Template::Analyst);
        assert!(analyst.iter().all(|t| t["name"] != "lookup_warranty"));
    }

    #[test]
    fn arguments_that_fit_become_calls() {
        let call = parse_call(
            Template::Shop,
            "search_knowledge",
            args(json!({"query": " đổi trả "})),
        );
        assert_eq!(
            call,
            Ok(ToolCall::SearchKnowledge {
                query: "đổi trả".into(),
                limit: DEFAULT_SEARCH_LIMIT
            })
        );
        let call = parse_call(
            Template::Shop,
            "send_message",
            args(json!({"message": "hi", "conversation_id": "c1"})),
        );
        assert_eq!(
            call,
            Ok(ToolCall::SendMessage {
                message: "hi".into(),
                conversation_id: Some("c1".into())
            })
        );
        let call = parse_call(
            Template::Shop,
            "lookup_warranty",
            args(json!({"serial": "0979825281"})),
        );
        assert_eq!(
            call,
            Ok(ToolCall::LookupWarranty {
                serial: "0979825281".into()
            })
        );
    }

    #[test]
    fn unknown_tools_and_arguments_off_the_schema_are_tool_errors_naming_the_problem() {
        let cases = [
            ("no_such_tool", json!({}), "Unknown tool: no_such_tool"),
            ("search_knowledge", json!({}), "`query` is required"),
            (
                "search_knowledge",
                json!({"query": 5}),
                "`query` must be a string",
            ),
            (
                "search_knowledge",
                json!({"query": "  "}),
                "`query` must be 1 to",
            ),
            (
                "search_knowledge",
                json!({"query": "a", "limit": 0}),
                "`limit`",
            ),
            (
                "search_knowledge",
                json!({"query": "a", "limit": 9}),
                "`limit`",
            ),
            (
                "search_knowledge",
                json!({"query": "a", "limit": "2"}),
                "`limit`",
            ),
            (
                "search_knowledge",
                json!({"query": "a", "top": 2}),
                "unknown argument `top`",
            ),
            (
                "get_conversation",
                json!({"conversation_id": ""}),
                "`conversation_id`",
            ),
            (
                "send_message",
                json!({"conversation_id": "c"}),
                "`message` is required",
            ),
            (
                "lookup_warranty",
                json!({"serial": "AB 12"}),
                "`serial` must be 3 to 32",
            ),
        ];
        for (name, arguments, expected) in cases {
            let error = parse_call(Template::Shop, name, args(arguments)).expect_err(name);
            assert!(error.contains(expected), "{name}: {error}");
        }
        let error = parse_call(
            Template::Analyst,
            "lookup_warranty",
            args(json!({"serial": "ABC"})),
        );
        assert_eq!(error, Err("Unknown tool: lookup_warranty".to_string()));
    }

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
