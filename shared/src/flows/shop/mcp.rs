//! `shop`'s own MCP tool: the warranty lookup (read-only), which the Worker runs over the
//! site's warranty records.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use super::warranty::{SERIAL_MAX_CHARS, SERIAL_MIN_CHARS, is_valid_serial};
use crate::mcp::tools::{TemplateTools, ToolCall, text, tool};

/// `shop`'s tools, as the registry hands them to the MCP server.
pub const TOOLS: TemplateTools = TemplateTools {
    list,
    parse,
    instructions: ", and look up product warranties by serial number",
};

/// The tool `shop` adds to `tools/list`.
pub fn list() -> Vec<Value> {
    alloc::vec![tool(
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
    )]
}

/// The call of `shop` tool `name` (the one [`list`] names), or the tool error's text.
pub fn parse(name: &str, mut arguments: Map<String, Value>) -> Result<ToolCall, String> {
    let invalid = |why: String| format!("Invalid arguments for {name}: {why}");
    let serial = text(arguments.remove("serial"), "serial", SERIAL_MAX_CHARS).map_err(invalid)?;
    if !is_valid_serial(&serial) {
        return Err(invalid(format!(
            "`serial` must be {SERIAL_MIN_CHARS} to {SERIAL_MAX_CHARS} letters, digits or '-'."
        )));
    }
    if let Some(extra) = arguments.keys().next() {
        return Err(invalid(format!("unknown argument `{extra}`.")));
    }
    Ok(ToolCall::LookupWarranty { serial })
}
