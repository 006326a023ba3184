//! The data agent's five tools (seed signatures, TEMPLATES.md §1.2.7). They take the
//! user's connections from the turn, never from arguments; every simple tool builds a
//! validated pipeline and runs the one executor, so there is one isolation point.
//!
//! The tools' bodies are in `calls`, the row computations they share in `compute`;
//! this file holds the tool set, argument checks and the tools' descriptions.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::budget::Budget;
use super::eval::{evaluate_within, matches};
use super::pipeline::{Owned, validate};
use super::sql::{AggregateQuery, AggregateRow};
use crate::agent::{Tool, ToolError, ToolFuture};
use crate::boundary::{DataConnection, DataRows};

mod calls;
mod compute;

pub use compute::{comparison, compute, grouped};

/// Tool names (seed).
pub const TOOL_NAMES: [&str; 5] = [
    "get_data_schema",
    "aggregate_data",
    "get_top_items",
    "compare_periods",
    "execute_aggregation",
];
/// Rows one `execute_aggregation` call may load across the data sets it reads (its own
/// and its `$lookup` targets: two at the 50,000-row cap).
pub const MAX_ROWS_READ: u64 = 100_000;
/// Operations of `aggregate_data` and `compare_periods` (seed; case-sensitive).
pub const OPERATIONS: [&str; 5] = ["sum", "count", "avg", "min", "max"];

/// Loads the rows of one of the user's connections (bounded): the platform's loader,
/// already scoped to site and user.
pub trait RowSource {
    /// Rows of connection `id`.
    fn load<'a>(&'a self, id: &'a str) -> crate::boundary::DataFuture<'a, DataRows>;

    /// Runs `query` where the rows live (`Ok(None)`: not here; the default).
    fn aggregate<'a>(
        &'a self,
        _id: &'a str,
        _query: &'a AggregateQuery,
    ) -> crate::boundary::DataFuture<'a, Option<Vec<AggregateRow>>> {
        Box::pin(async { Ok(None) })
    }
}

/// The data tools of one turn: the user's connections and where their rows come from.
pub struct DataTools<'a> {
    /// The requesting user's connections.
    pub connections: &'a [DataConnection],
    /// The row loader.
    pub source: &'a dyn RowSource,
}

impl core::fmt::Debug for DataTools<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DataTools")
            .field("connections", &self.connections.len())
            .finish_non_exhaustive()
    }
}

impl core::fmt::Debug for DataTool<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

/// One of the five tools, bound to the turn's data.
pub struct DataTool<'a> {
    name: &'static str,
    data: &'a DataTools<'a>,
}

impl<'a> DataTools<'a> {
    /// The five tools, in the seed's order.
    pub fn tools(&'a self) -> Vec<DataTool<'a>> {
        TOOL_NAMES
            .iter()
            .map(|name| DataTool { name, data: self })
            .collect()
    }

    fn connection(&self, args: &Value) -> Result<&'a DataConnection, ToolError> {
        let name = args
            .get("connection_name")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("connection_name is required"))?;
        self.connections
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.connections.iter().map(|c| c.name.as_str()).collect();
                ToolError::new(format!(
                    "Connection '{name}' not found. Available: {}",
                    names.join(", ")
                ))
            })
    }

    async fn rows(&self, connection: &DataConnection) -> Result<Vec<Value>, ToolError> {
        let loaded = self
            .source
            .load(&connection.id)
            .await
            .map_err(|_| ToolError::new("could not read the data set; try again"))?;
        if loaded.over_cap {
            return Err(ToolError::new(
                "dataset too large for ad-hoc pipelines; use aggregate_data",
            ));
        }
        Ok(loaded.rows)
    }

    /// Runs `name` on `args`.
    pub async fn run(&self, name: &str, args: Value) -> Result<Value, ToolError> {
        match name {
            "get_data_schema" => self.schema(&args),
            "aggregate_data" => self.aggregate(&args).await,
            "get_top_items" => self.top(&args).await,
            "compare_periods" => self.compare(&args).await,
            "execute_aggregation" => self.pipeline(&args).await,
            other => Err(ToolError::new(format!("unknown tool: {other}"))),
        }
    }

    fn schema(&self, args: &Value) -> Result<Value, ToolError> {
        let chosen: Vec<&DataConnection> = match args.get("connection_name") {
            Some(Value::String(_)) => Vec::from([self.connection(args)?]),
            _ => self.connections.iter().collect(),
        };
        let list: Vec<Value> = chosen
            .iter()
            .map(|c| {
                json!({"name": c.name, "description": c.description,
                            "row_count": c.row_count, "fields": c.fields})
            })
            .collect();
        Ok(json!({ "connections": list }))
    }

    fn field<'f>(
        &self,
        conn: &DataConnection,
        args: &'f Value,
        key: &str,
        required: bool,
    ) -> Result<Option<&'f str>, ToolError> {
        match args.get(key) {
            None | Some(Value::Null) if !required => Ok(None),
            Some(Value::String(f)) => {
                if conn.fields.iter().any(|x| x.name == *f) {
                    Ok(Some(f))
                } else {
                    let names: Vec<&str> = conn.fields.iter().map(|x| x.name.as_str()).collect();
                    Err(ToolError::new(format!(
                        "Field '{f}' not found in '{}'. Available: {}",
                        conn.name,
                        names.join(", ")
                    )))
                }
            }
            _ => Err(ToolError::new(format!("{key} is required (a field name)"))),
        }
    }

    /// The `field` an operation works on (TEMPLATES.md §1.2.7): optional for `count`
    /// (without one it counts rows), required by `sum`, `avg`, `min` and `max`.
    fn operand<'f>(
        &self,
        conn: &DataConnection,
        args: &'f Value,
        op: &str,
    ) -> Result<Option<&'f str>, ToolError> {
        let field = self.field(conn, args, "field", false)?;
        if field.is_none() && op != "count" {
            return Err(ToolError::new(format!(
                "field is required for operation '{op}' (a field name); only count works \
                 without one (it counts rows)"
            )));
        }
        Ok(field)
    }

    /// Rows of `conn` passing `filters` and the optional date range.
    async fn filtered(
        &self,
        conn: &DataConnection,
        filters: Option<&Value>,
        range: Option<(&str, &str, &str)>,
    ) -> Result<Vec<Value>, ToolError> {
        let mut stages = Vec::new();
        if let Some(f) = filters.filter(|f| !f.is_null()) {
            if !f.is_object() {
                return Err(ToolError::new("filters must be an object"));
            }
            stages.push(json!({ "$match": f }));
        }
        if let Some((field, from, to)) = range {
            stages.push(json!({ "$match": { field: { "$gte": from, "$lte": day_end(to) } } }));
        }
        let owned = [Owned {
            id: &conn.id,
            name: &conn.name,
        }];
        let checked = validate(&Value::Array(stages), &owned).map_err(ToolError::new)?;
        let mut stages = checked.stages;
        stages.pop(); // the row cap applies to results, not to what is aggregated
        let rows = self.rows(conn).await?;
        let none = |_: &str| -> &[Value] { &[] };
        evaluate_within(&stages, rows, &none, &mut Budget::default()).map_err(ToolError::new)
    }

    fn range<'f>(
        &self,
        conn: &DataConnection,
        args: &'f Value,
        from: &str,
        to: &str,
    ) -> Result<Option<(&'f str, &'f str, &'f str)>, ToolError> {
        let field = self.field(conn, args, "date_field", false)?;
        let text = |k: &str| args.get(k).and_then(Value::as_str);
        match (field, text(from), text(to)) {
            (None, None, None) => Ok(None),
            (Some(f), a, b) if a.is_some() || b.is_some() => Ok(Some((
                f,
                a.unwrap_or("0000-01-01"),
                b.unwrap_or("9999-12-31"),
            ))),
            (Some(_), None, None) => Ok(None),
            _ => Err(ToolError::new(format!("{from}/{to} need date_field"))),
        }
    }
}

/// `to` as the end of its day when it is a bare date (inclusive ranges).
fn day_end(to: &str) -> String {
    if to.len() == 10 {
        format!("{to}T23:59:59.999")
    } else {
        to.to_string()
    }
}

fn operation(args: &Value) -> Result<&str, ToolError> {
    let op = args
        .get("operation")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if OPERATIONS.contains(&op) {
        Ok(op)
    } else {
        Err(ToolError::new(format!(
            "operation '{op}' is not supported; use one of: {}",
            OPERATIONS.join(", ")
        )))
    }
}

fn description(name: &str) -> &'static str {
    match name {
        "get_data_schema" => "Xem danh sách connections và fields",
        "aggregate_data" => "Tính sum/count/avg/min/max với filters và group_by",
        "get_top_items" => "Lấy top N items theo field",
        "compare_periods" => "So sánh 2 khoảng thời gian",
        _ => "Chạy MongoDB aggregation pipeline tùy chỉnh",
    }
}

fn parameters(name: &str) -> Value {
    let s = json!({"type": "string"});
    let conn = json!({"type": "string", "description": "connection name"});
    let filters = json!({"type": "object", "description": "Mongo-style filter"});
    let op = json!({"type": "string", "enum": OPERATIONS});
    match name {
        "get_data_schema" => json!({"type": "object", "properties": {"connection_name": conn}}),
        "aggregate_data" => json!({"type": "object", "required": ["connection_name", "operation"],
            "properties": {"connection_name": conn, "operation": op, "field": s, "group_by": s,
            "filters": filters, "date_field": s, "date_from": s, "date_to": s}}),
        "get_top_items" => json!({"type": "object", "required": ["connection_name", "sort_field"],
            "properties": {"connection_name": conn, "sort_field": s,
            "sort_order": {"type": "string", "enum": ["asc", "desc"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000}, "group_by": s,
            "aggregate_field": s, "filters": filters}}),
        "compare_periods" => json!({"type": "object", "required": ["connection_name", "operation",
            "date_field", "period1_from", "period1_to", "period2_from", "period2_to"],
            "properties": {"connection_name": conn, "operation": op, "field": s, "date_field": s,
            "period1_from": s, "period1_to": s, "period2_from": s, "period2_to": s,
            "group_by": s}}),
        _ => json!({"type": "object", "required": ["connection_name", "pipeline"],
            "properties": {"connection_name": conn,
            "pipeline": {"type": "array", "items": {"type": "object"}}, "description": s}}),
    }
}

impl Tool for DataTool<'_> {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        description(self.name)
    }
    fn parameters(&self) -> Value {
        parameters(self.name)
    }
    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        Box::pin(async move {
            let result = self.data.run(self.name, arguments).await?;
            Ok(super::cap::cap_result(result, super::cap::MAX_RESULT_CHARS))
        })
    }
}

/// Whether `row` passes `filter` (the `$match` semantics), for tests.
pub fn row_matches(row: &Value, filter: &Value) -> bool {
    matches(row, filter)
}
