//! The reference evaluator of validated pipelines (TEMPLATES.md §1.3): the allowed subset
//! of Mongo's aggregation semantics over JSON rows, pure Rust. Rows come from the loader,
//! which reads only the requesting user's connections; a pipeline can only narrow them.
//!
//! The stages are in `stages`, `$lookup`'s join in `join`; this file runs a pipeline.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::budget::{Budget, Exceeded};
use super::pipeline::MAX_LIMIT;
use super::query;
use super::regex::Patterns;
pub use super::value::{compare, equal, get, number, rank, round, to_json};

mod join;
mod stages;

use join::join;
use stages::{group, project, sort, unwind};

/// Runs validated `stages` over `rows`; `lookup` gives the rows of a connection id. The
/// reference semantics, without a bound (tests); tools use [`evaluate_within`].
pub fn evaluate(
    stages: &[Value],
    rows: Vec<Value>,
    lookup: &dyn Fn(&str) -> Vec<Value>,
) -> Result<Vec<Value>, String> {
    let mut joined: Vec<(String, Vec<Value>)> = Vec::new();
    for stage in stages {
        let from = stage.pointer("/$lookup/from").and_then(Value::as_str);
        if let Some(from) = from.filter(|f| !joined.iter().any(|(id, _)| id == f)) {
            joined.push((from.into(), lookup(from)));
        }
    }
    let foreign = |id: &str| -> &[Value] {
        joined
            .iter()
            .find(|(j, _)| j == id)
            .map_or(&[], |(_, r)| r.as_slice())
    };
    evaluate_within(stages, rows, &foreign, &mut Budget::unlimited())
}

/// Runs validated `stages` over `rows` within `budget`; `lookup` gives the rows of a
/// connection id (borrowed: a `$lookup` copies only the rows it joins). Over budget →
/// `Err` with the sentence the model reads ([`Exceeded`]).
pub fn evaluate_within<'f>(
    stages: &[Value],
    rows: Vec<Value>,
    lookup: &dyn Fn(&str) -> &'f [Value],
    budget: &mut Budget,
) -> Result<Vec<Value>, String> {
    evaluate_capped(stages, &[], rows, lookup, budget).map(|(rows, _)| rows)
}

/// [`evaluate_within`], also telling whether a `$limit` at one of the `capped` positions
/// (the row cap the sanitizer imposed, [`Sanitized::capped`](super::pipeline::Sanitized))
/// cut rows: the result is then truncated.
pub fn evaluate_capped<'f>(
    stages: &[Value],
    capped: &[usize],
    rows: Vec<Value>,
    lookup: &dyn Fn(&str) -> &'f [Value],
    budget: &mut Budget,
) -> Result<(Vec<Value>, bool), String> {
    run(stages, capped, rows, lookup, budget).map_err(|e| match e {
        Failure::Over(over) => over.to_string(),
        Failure::Invalid(message) => message,
    })
}

/// Why an evaluation stopped.
enum Failure {
    /// The budget ran out.
    Over(Exceeded),
    /// A stage the validator should have refused.
    Invalid(String),
}

impl From<Exceeded> for Failure {
    fn from(e: Exceeded) -> Self {
        Self::Over(e)
    }
}

fn run<'f>(
    stages: &[Value],
    capped: &[usize],
    rows: Vec<Value>,
    lookup: &dyn Fn(&str) -> &'f [Value],
    budget: &mut Budget,
) -> Result<(Vec<Value>, bool), Failure> {
    let mut docs = rows;
    let mut truncated = false;
    let mut patterns = Patterns::default();
    stages.iter().for_each(|s| patterns.collect(s));
    for (position, stage) in stages.iter().enumerate() {
        let Some((name, body)) = stage.as_object().and_then(|o| o.iter().next()) else {
            continue;
        };
        docs = match name.as_str() {
            "$match" => {
                let mut kept = Vec::new();
                for d in docs {
                    budget.row()?;
                    if query::matches(&d, body, &patterns, budget)? {
                        kept.push(d);
                    }
                }
                kept
            }
            "$group" => group(&docs, body, budget)?,
            "$sort" => sort(docs, body, budget)?,
            "$limit" => {
                let n = body.as_u64().unwrap_or(MAX_LIMIT).min(MAX_LIMIT) as usize;
                truncated |= docs.len() > n && capped.contains(&position);
                docs.truncate(n);
                docs
            }
            "$project" => {
                let mut out = Vec::with_capacity(docs.len());
                for d in &docs {
                    out.push(project(d, body, budget)?);
                }
                out
            }
            "$count" => {
                let mut out = Map::new();
                out.insert(body.as_str().unwrap_or("count").into(), docs.len().into());
                if docs.is_empty() {
                    vec![]
                } else {
                    vec![Value::Object(out)]
                }
            }
            "$unwind" => unwind(docs, body, budget)?,
            "$lookup" => join(docs, body, lookup, budget)?,
            other => {
                return Err(Failure::Invalid(alloc::format!(
                    "Stage {other} is not allowed"
                )));
            }
        };
        if docs.len() > 200_000 {
            return Err(Failure::Invalid(
                "pipeline produced too many intermediate rows".into(),
            ));
        }
    }
    Ok((docs, truncated))
}

fn set(doc: &mut Value, path: &str, value: Value) {
    if let Value::Object(map) = doc {
        map.insert(path.to_string(), value);
    }
}

/// Whether `doc` passes the query `filter` (no bound).
pub fn matches(doc: &Value, filter: &Value) -> bool {
    query::matches(doc, filter, &Patterns::of(filter), &mut Budget::unlimited()).unwrap_or(false)
}

/// Evaluates an aggregation expression against `doc` (no bound).
pub fn expr(doc: &Value, e: &Value) -> Value {
    super::expr::expr(doc, e, &mut Budget::unlimited()).unwrap_or(Value::Null)
}
