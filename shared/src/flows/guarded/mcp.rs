//! `guarded`'s MCP tools (seed 004's memory and tool servers, as MCP tools): the web search
//! under the seed's name, and the memory views. Each maps onto the seed's JSON-RPC method
//! (`POST /jsonrpc`), which the Worker runs for both surfaces.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::mcp::tools::{MAX_ID_CHARS, MAX_QUERY_CHARS, TemplateTools, ToolCall};

/// `guarded`'s tools, as the registry hands them to the MCP server.
pub const TOOLS: TemplateTools = TemplateTools {
    list,
    parse,
    instructions: "",
};

/// The longest message `memory_add_message` stores, in characters.
pub const MAX_CONTENT_CHARS: usize = 32_000;

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
        "inputSchema": {"type": "object", "properties": properties, "required": required,
                        "additionalProperties": false},
        "annotations": {"title": title, "readOnlyHint": read_only, "openWorldHint": name == "duckduckgo_search"},
    })
}

fn conversation_id() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS,
           "description": "The conversation's id."})
}

/// The tools `guarded` adds to `tools/list`.
pub fn list() -> Vec<Value> {
    alloc::vec![
        tool(
            "duckduckgo_search",
            "Search the web",
            "Search the web with the site's search provider (the seed's tool name, whatever \
             the provider). Returns up to 5 results as `Title:` / `Content:` / `Link:` text.",
            json!({"query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}}),
            &["query"],
            true,
        ),
        tool(
            "memory_get_context",
            "Recent messages",
            "The most recent messages of a conversation (at most 6, compressed ones left out).",
            json!({"conversation_id": conversation_id(),
                   "max_messages": {"type": "integer", "minimum": 0, "default": 6}}),
            &["conversation_id"],
            true,
        ),
        tool(
            "memory_get_summary",
            "Conversation summary",
            "The conversation's accumulated summary (\"\" when none).",
            json!({"conversation_id": conversation_id()}),
            &["conversation_id"],
            true,
        ),
        tool(
            "memory_add_message",
            "Add a message",
            "Store a user or assistant message in a conversation.",
            json!({"conversation_id": conversation_id(),
                   "role": {"type": "string", "enum": ["user", "assistant"]},
                   "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS}}),
            &["conversation_id", "role", "content"],
            false,
        ),
        tool(
            "memory_get_all_messages",
            "Full history",
            "Every message of a conversation, compressed ones included.",
            json!({"conversation_id": conversation_id()}),
            &["conversation_id"],
            true,
        ),
    ]
}

/// The call of `guarded` tool `name` (one [`list`] names), or the tool error's text.
pub fn parse(name: &str, arguments: Map<String, Value>) -> Result<ToolCall, String> {
    let invalid = |why: &str| format!("Invalid arguments for {name}: {why}");
    let allowed: &[&str] = match name {
        "duckduckgo_search" => &["query"],
        "memory_get_context" => &["conversation_id", "max_messages"],
        "memory_add_message" => &["conversation_id", "role", "content"],
        _ => &["conversation_id"],
    };
    if let Some(extra) = arguments.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(invalid(&format!("unknown argument `{extra}`.")));
    }
    let string = |key: &str, max: usize| match arguments.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= max => Ok(s.clone()),
        _ => Err(invalid(&format!(
            "`{key}` must be a string of 1 to {max} characters."
        ))),
    };
    let (method, params) = match name {
        "duckduckgo_search" => (
            "tool-server/tools/call",
            json!({"name": "duckduckgo_search",
                   "arguments": {"query": string("query", MAX_QUERY_CHARS)?.trim()}}),
        ),
        "memory_get_context" => {
            let max = match arguments.get("max_messages") {
                None | Some(Value::Null) => 6,
                Some(value) => value
                    .as_u64()
                    .ok_or_else(|| invalid("`max_messages` must be a non-negative integer."))?,
            };
            (
                "memory-server/memory/get_context",
                json!({"conversation_id": string("conversation_id", MAX_ID_CHARS)?, "max_messages": max}),
            )
        }
        "memory_add_message" => {
            let role = string("role", 16)?;
            if role != "user" && role != "assistant" {
                return Err(invalid("`role` must be \"user\" or \"assistant\"."));
            }
            (
                "memory-server/memory/add_message",
                json!({"conversation_id": string("conversation_id", MAX_ID_CHARS)?, "role": role,
                       "content": string("content", MAX_CONTENT_CHARS)?}),
            )
        }
        "memory_get_summary" => (
            "memory-server/memory/get_summary",
            json!({"conversation_id": string("conversation_id", MAX_ID_CHARS)?}),
        ),
        _ => (
            "memory-server/memory/get_all_messages",
            json!({"conversation_id": string("conversation_id", MAX_ID_CHARS)?}),
        ),
    };
    Ok(ToolCall::Guarded { method, params })
}
