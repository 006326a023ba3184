//! The bodies of `aggregate_data`, `get_top_items`, `compare_periods` and
//! `execute_aggregation`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::super::budget::Budget;
use super::super::eval::{evaluate_capped, get};
use super::super::pipeline::{MAX_LIMIT, Owned, validate};
use super::super::sql::AggregateQuery;
use crate::agent::ToolError;
use crate::boundary::DataConnection;

use super::{DataTools, MAX_ROWS_READ, comparison, compute, day_end, grouped, operation};

impl DataTools<'_> {
    pub(super) async fn aggregate(&self, args: &Value) -> Result<Value, ToolError> {
        let conn = self.connection(args)?;
        let op = operation(args)?;
        let field = self.operand(conn, args, op)?;
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

    pub(super) async fn top(&self, args: &Value) -> Result<Value, ToolError> {
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
                super::super::eval::compare(get(b, f).unwrap_or(&null), get(a, f).unwrap_or(&null))
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

    pub(super) async fn compare(&self, args: &Value) -> Result<Value, ToolError> {
        let conn = self.connection(args)?;
        let op = operation(args)?;
        let field = self.operand(conn, args, op)?;
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

    pub(super) async fn pipeline(&self, args: &Value) -> Result<Value, ToolError> {
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
        // `truncated`: the row cap cut rows the pipeline as written would have kept, at
        // whatever stage the sanitizer imposed it (a clamped `$limit`, or the final one).
        let (mut result, capped) =
            evaluate_capped(&checked.stages, &checked.capped, rows, &lookup, &mut budget)
                .map_err(ToolError::new)?;
        let truncated = capped || result.len() > MAX_LIMIT as usize;
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
