//! The data agent's five tools (seed signatures, TEMPLATES.md §1.2.7). They take the
//! user's connections from the turn, never from arguments; every simple tool builds a
//! validated pipeline and runs the one executor, so there is one isolation point.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::budget::Budget;
use super::eval::{evaluate_within, get, matches, number, to_json};
use super::pipeline::{MAX_LIMIT, Owned, validate};
use super::sql::{AggregateQuery, AggregateRow};
use crate::agent::{Tool, ToolError, ToolFuture};
use crate::boundary::{DataConnection, DataRows};

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

    async fn aggregate(&self, args: &Value) -> Result<Value, ToolError> {
        let conn = self.connection(args)?;
        let op = operation(args)?;
        let field = self.field(conn, args, "field", op == "count")?;
        let group_by = self.field(conn, args, "group_by", false)?;
        let range = self.range(conn, args, "date_from", "date_to")?;
        if let Some(out) = self
            .aggregate_in_store(conn, op, field, group_by, args.get("filters"), range)
            .await?
        {
            return Ok(out);
        }
        let rows = self.filtered(conn, args.get("filters"), range).await?;
        let Some(group_by) = group_by else {
            let (value, row_count) = compute(op, field, rows.iter());
            return Ok(json!({"operation": op, "field": field, "value": value,
                             "row_count": row_count}));
        };
        let groups = grouped(op, field, group_by, &rows);
        Ok(json!({"operation": op, "field": field, "group_by": group_by, "groups": groups}))
    }

    /// The SQL path: when the filters are plain equalities and the store can run it.
    async fn aggregate_in_store(
        &self,
        conn: &DataConnection,
        op: &str,
        field: Option<&str>,
        group_by: Option<&str>,
        filters: Option<&Value>,
        range: Option<(&str, &str, &str)>,
    ) -> Result<Option<Value>, ToolError> {
        let mut equals = Vec::new();
        match filters {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    if k.starts_with('$') || !(v.is_string() || v.is_number()) {
                        return Ok(None);
                    }
                    equals.push((k.clone(), v.clone()));
                }
            }
            Some(_) => return Ok(None),
        }
        // min/max over non-numbers follow the evaluator's type order: not in SQL.
        let numeric = field.is_none_or(|f| {
            conn.fields
                .iter()
                .any(|x| x.name == f && x.kind == "number")
        });
        if (op == "min" || op == "max") && !numeric {
            return Ok(None);
        }
        let query = AggregateQuery {
            operation: op.into(),
            field: field.map(Into::into),
            group_by: group_by.map(Into::into),
            equals,
            range: range.map(|(f, a, b)| (f.into(), a.into(), day_end(b))),
            field_numeric: field.is_some() && numeric,
            group_scalar: group_by.is_some_and(|g| {
                conn.fields
                    .iter()
                    .any(|x| x.name == g && matches!(x.kind.as_str(), "string" | "number" | "date"))
            }),
        };
        let rows = self
            .source
            .aggregate(&conn.id, &query)
            .await
            .map_err(|_| ToolError::new("could not read the data set; try again"))?;
        let Some(rows) = rows else {
            return Ok(None);
        };
        let Some(group_by) = group_by else {
            let first = rows.first();
            let value = first.map_or(Value::Null, |r| r.value.clone());
            let count = first.map_or(0, |r| r.row_count);
            return Ok(Some(
                json!({"operation": op, "field": field, "value": value,
                                  "row_count": count}),
            ));
        };
        let groups: Vec<Value> = rows
            .into_iter()
            .map(|r| json!({"group": r.group, "value": r.value, "row_count": r.row_count}))
            .collect();
        Ok(Some(
            json!({"operation": op, "field": field, "group_by": group_by, "groups": groups}),
        ))
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

    async fn top(&self, args: &Value) -> Result<Value, ToolError> {
        let conn = self.connection(args)?;
        let sort_field = args.get("sort_field").and_then(Value::as_str);
        let order = args
            .get("sort_order")
            .and_then(Value::as_str)
            .unwrap_or("desc");
        if order != "asc" && order != "desc" {
            return Err(ToolError::new("sort_order must be \"asc\" or \"desc\""));
        }
        let limit = match args.get("limit") {
            None | Some(Value::Null) => 10,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=MAX_LIMIT).contains(&n) => n as usize,
                _ => return Err(ToolError::new("limit must be an integer from 1 to 1000")),
            },
        };
        let group_by = self.field(conn, args, "group_by", false)?;
        let rows = self.filtered(conn, args.get("filters"), None).await?;
        let mut items: Vec<Value> = if let Some(group_by) = group_by {
            let aggregate = self.field(conn, args, "aggregate_field", false)?;
            let op = if aggregate.is_some() { "sum" } else { "count" };
            grouped(op, aggregate, group_by, &rows)
                .into_iter()
                .map(|g| json!({"group": g["group"], "value": g["value"]}))
                .collect()
        } else {
            let Some(f) = sort_field else {
                return Err(ToolError::new("sort_field is required"));
            };
            self.field(conn, args, "sort_field", true)?;
            let mut rows = rows;
            rows.sort_by(|a, b| {
                let null = Value::Null;
                super::eval::compare(get(b, f).unwrap_or(&null), get(a, f).unwrap_or(&null))
            });
            rows
        };
        if order == "asc" {
            items.reverse();
        }
        items.truncate(limit);
        Ok(
            json!({"items": items, "sort_field": sort_field, "sort_order": order,
                  "limit": limit}),
        )
    }

    async fn compare(&self, args: &Value) -> Result<Value, ToolError> {
        let conn = self.connection(args)?;
        let op = operation(args)?;
        let field = self.field(conn, args, "field", op == "count")?;
        let date_field = self
            .field(conn, args, "date_field", true)?
            .unwrap_or_default();
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| ToolError::new(format!("{k} is required (YYYY-MM-DD)")))
        };
        let p1 = (text("period1_from")?, text("period1_to")?);
        let p2 = (text("period2_from")?, text("period2_to")?);
        let group_by = self.field(conn, args, "group_by", false)?;
        let rows1 = self
            .filtered(conn, None, Some((date_field, p1.0, p1.1)))
            .await?;
        let rows2 = self
            .filtered(conn, None, Some((date_field, p2.0, p2.1)))
            .await?;
        let mut out = json!({"operation": op, "field": field,
            "period1": {"from": p1.0, "to": p1.1}, "period2": {"from": p2.0, "to": p2.1}});
        let (v1, _) = compute(op, field, rows1.iter());
        let (v2, _) = compute(op, field, rows2.iter());
        let change = comparison(&v1, &v2);
        for (k, v) in change {
            out[k] = v;
        }
        if let Some(group_by) = group_by {
            let g1 = grouped(op, field, group_by, &rows1);
            let g2 = grouped(op, field, group_by, &rows2);
            let mut keys: Vec<Value> = g1.iter().chain(&g2).map(|g| g["group"].clone()).collect();
            keys.dedup();
            let mut seen: Vec<Value> = Vec::new();
            let mut groups = Vec::new();
            for key in keys {
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key.clone());
                let find = |gs: &[Value]| {
                    gs.iter()
                        .find(|g| g["group"] == key)
                        .map_or(Value::Null, |g| g["value"].clone())
                };
                let mut g = json!({ "group": key });
                for (k, v) in comparison(&find(&g1), &find(&g2)) {
                    g[k] = v;
                }
                groups.push(g);
            }
            out["groups"] = Value::Array(groups);
        }
        Ok(out)
    }

    async fn pipeline(&self, args: &Value) -> Result<Value, ToolError> {
        let conn = self.connection(args)?;
        let pipeline = args
            .get("pipeline")
            .ok_or_else(|| ToolError::new("pipeline is required (a JSON array of stages)"))?;
        let owned: Vec<Owned<'_>> = self
            .connections
            .iter()
            .map(|c| Owned {
                id: &c.id,
                name: &c.name,
            })
            .collect();
        let checked = validate(pipeline, &owned).map_err(ToolError::new)?;
        // Every data set the call reads is loaded whole (its own, then each distinct
        // `$lookup` target): bound them together.
        let mut read: Vec<&DataConnection> = Vec::from([conn]);
        for (i, id) in checked.lookups.iter().enumerate() {
            let first = !checked.lookups[..i].contains(id);
            if let Some(c) = self
                .connections
                .iter()
                .find(|c| c.id == *id)
                .filter(|_| first)
            {
                read.push(c);
            }
        }
        let total: u64 = read.iter().map(|c| c.row_count).sum();
        if total > MAX_ROWS_READ {
            return Err(ToolError::new(format!(
                "this pipeline would read {total} rows from {} data sets; at most \
                 {MAX_ROWS_READ} rows per call: $lookup from a smaller data set, or use \
                 aggregate_data",
                read.len()
            )));
        }
        let rows = self.rows(conn).await?;
        let mut joined: Vec<(String, Vec<Value>)> = Vec::new();
        for id in &checked.lookups {
            if joined.iter().any(|(j, _)| j == id) {
                continue;
            }
            let Some(target) = self.connections.iter().find(|c| c.id == *id) else {
                continue;
            };
            joined.push((id.clone(), self.rows(target).await?));
        }
        let lookup = |id: &str| -> &[Value] {
            joined
                .iter()
                .find(|(j, _)| j == id)
                .map_or(&[], |(_, r)| r.as_slice())
        };
        // One budget per tool call: time as work units, memory as bytes produced.
        let mut budget = Budget::default();
        let mut result =
            evaluate_within(&checked.stages, rows, &lookup, &mut budget).map_err(ToolError::new)?;
        let truncated = result.len() > MAX_LIMIT as usize;
        result.truncate(MAX_LIMIT as usize);
        Ok(
            json!({"rows": result.len(), "row_count": result.len(), "truncated": truncated})
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.insert("rows".into(), Value::Array(result));
                    Value::Object(o)
                })
                .unwrap_or_default(),
        )
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

/// `op` over `field` of `rows`: the value and how many rows were considered.
pub fn compute<'r>(
    op: &str,
    field: Option<&str>,
    rows: impl Iterator<Item = &'r Value>,
) -> (Value, usize) {
    let rows: Vec<&Value> = rows.collect();
    let values = || rows.iter().filter_map(|r| field.and_then(|f| get(r, f)));
    let nums = || values().filter_map(number).collect::<Vec<f64>>();
    let value = match op {
        "count" => match field {
            None => Value::from(rows.len()),
            Some(_) => Value::from(values().filter(|v| !v.is_null()).count()),
        },
        "sum" => to_json(nums().iter().sum()),
        "avg" => {
            let n = nums();
            if n.is_empty() {
                Value::Null
            } else {
                to_json(n.iter().sum::<f64>() / n.len() as f64)
            }
        }
        "min" => values()
            .filter(|v| !v.is_null())
            .min_by(|a, b| super::eval::compare(a, b))
            .cloned()
            .unwrap_or(Value::Null),
        "max" => values()
            .filter(|v| !v.is_null())
            .max_by(|a, b| super::eval::compare(a, b))
            .cloned()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    };
    (value, rows.len())
}

/// Groups `rows` by `group_by`, `op` over `field` per group, sorted by value descending.
pub fn grouped(op: &str, field: Option<&str>, group_by: &str, rows: &[Value]) -> Vec<Value> {
    // Keys by their JSON text (one B-tree look-up per row), kept in first-seen order so
    // ties in value keep the order the rows gave them.
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut keys: Vec<(Value, Vec<&Value>)> = Vec::new();
    for row in rows {
        let key = get(row, group_by).unwrap_or(&Value::Null);
        let text = key.to_string();
        match index.get(&text) {
            Some(&i) => keys[i].1.push(row),
            None => {
                index.insert(text, keys.len());
                keys.push((key.clone(), Vec::from([row])));
            }
        }
    }
    let mut groups: Vec<Value> = keys
        .into_iter()
        .map(|(key, members)| {
            let (value, n) = compute(op, field, members.into_iter());
            json!({"group": key, "value": value, "row_count": n})
        })
        .collect();
    groups.sort_by(|a, b| super::eval::compare(&b["value"], &a["value"]));
    groups.truncate(MAX_LIMIT as usize);
    groups
}

/// `period1_value`, `period2_value`, `difference` (= p2 − p1) and `percentage_change`
/// (= (p2 − p1) / p1 × 100; `null` when p1 is 0 or missing).
pub fn comparison(v1: &Value, v2: &Value) -> [(&'static str, Value); 4] {
    let (a, b) = (number(v1), number(v2));
    let difference = match (a, b) {
        (Some(a), Some(b)) => to_json(b - a),
        _ => Value::Null,
    };
    let change = match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => to_json((b - a) / a * 100.0),
        _ => Value::Null,
    };
    [
        ("period1_value", v1.clone()),
        ("period2_value", v2.clone()),
        ("difference", difference),
        ("percentage_change", change),
    ]
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
