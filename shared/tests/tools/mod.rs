//! Two small tools over a sales sheet, for the ReAct and engine tests: one that fails on a
//! wrong argument (its error goes back to the model), one that always answers.

use concierge_core::agent::{Tool, ToolError, ToolFuture};
use serde_json::{Value, json};

/// Sums a column; only `revenue` exists.
pub struct SumColumn;

impl Tool for SumColumn {
    fn name(&self) -> &str {
        "sum_column"
    }
    fn description(&self) -> &str {
        "Sums one column of the sales sheet."
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{"column":{"type":"string"}},"required":["column"]})
    }
    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        Box::pin(async move {
            match arguments["column"].as_str() {
                Some("revenue") => Ok(json!({"sum": 1200})),
                Some(other) => Err(ToolError::new(format!(
                    "unknown column: {other}; columns: revenue"
                ))),
                None => Err(ToolError::new("missing argument: column")),
            }
        })
    }
}

/// Lists the sheets.
pub struct ListSheets;

impl Tool for ListSheets {
    fn name(&self) -> &str {
        "list_sheets"
    }
    fn description(&self) -> &str {
        "Lists the synced sheets."
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{}})
    }
    fn call(&self, _arguments: Value) -> ToolFuture<'_> {
        Box::pin(async { Ok(json!(["sales"])) })
    }
}
