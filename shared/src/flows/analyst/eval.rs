//! The reference evaluator of validated pipelines (TEMPLATES.md §1.3): the allowed subset
//! of Mongo's aggregation semantics over JSON rows, pure Rust. Rows come from the loader,
//! which reads only the requesting user's connections; a pipeline can only narrow them.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;
use serde_json::{Map, Value};

use super::budget::{Budget, COMPARE_UNITS, Exceeded, NODE_UNITS, SLOT_BYTES, object_bytes, size};
use super::expr::accumulate;
use super::pipeline::MAX_LIMIT;
use super::query;
use super::regex::Patterns;
pub use super::value::{compare, equal, get, number, rank, round, to_json};

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
    run(stages, rows, lookup, budget).map_err(|e| match e {
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
    rows: Vec<Value>,
    lookup: &dyn Fn(&str) -> &'f [Value],
    budget: &mut Budget,
) -> Result<Vec<Value>, Failure> {
    let mut docs = rows;
    let mut patterns = Patterns::default();
    stages.iter().for_each(|s| patterns.collect(s));
    for stage in stages {
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
    Ok(docs)
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

fn group(docs: &[Value], body: &Value, budget: &mut Budget) -> Result<Vec<Value>, Failure> {
    let null = Value::Null;
    let id = body.get("_id").unwrap_or(&null);
    let mut groups: BTreeMap<String, (Value, Vec<&Value>)> = BTreeMap::new();
    for doc in docs {
        budget.row()?;
        let key = super::expr::expr(doc, id, budget)?;
        let text = serde_json::to_string(&key).unwrap_or_default();
        budget.scan(text.len() as u64)?;
        // A member costs a pointer; a new group its key twice (value and text).
        budget.bytes(8)?;
        match groups.get_mut(&text) {
            Some(group) => group.1.push(doc),
            None => {
                budget.bytes(text.len() as u64 + SLOT_BYTES * 4)?;
                groups.insert(text, (key, Vec::from([doc])));
            }
        }
    }
    let fields: Vec<(&String, &Value)> = body
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(field, _)| *field != "_id")
        .collect();
    let mut out = Vec::with_capacity(groups.len());
    for (key, members) in groups.into_values() {
        budget.bytes(object_bytes(fields.len() + 1))?;
        let mut row = Map::new();
        row.insert("_id".into(), key);
        for (field, acc) in &fields {
            let Some((op, arg)) = acc.as_object().and_then(|o| o.iter().next()) else {
                return Err(Failure::Invalid(alloc::format!(
                    "$group field '{field}' needs an accumulator"
                )));
            };
            row.insert((*field).clone(), accumulate(&members, op, arg, budget)?);
        }
        out.push(Value::Object(row));
    }
    Ok(out)
}

fn sort(docs: Vec<Value>, body: &Value, budget: &mut Budget) -> Result<Vec<Value>, Failure> {
    let keys: Vec<(&str, bool)> = body
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_i64() == Some(-1)))
        .collect();
    let (n, width) = (docs.len(), keys.len());
    // The keys are read once per row (not twice per comparison), then a merge sort
    // compares at most n·⌈log2 n⌉ times, each over up to every key: all charged first.
    let log = u64::from(usize::BITS - n.leading_zeros());
    let cells = (n * width) as u64;
    budget.work(cells.saturating_mul(NODE_UNITS))?;
    budget.work(cells.saturating_mul(log).saturating_mul(COMPARE_UNITS))?;
    budget.bytes(8 * (cells + n as u64))?;
    let values: Vec<&Value> = docs
        .iter()
        .flat_map(|d| keys.iter().map(move |(k, _)| get(d, k).unwrap_or(&NULL)))
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&values[a * width..][..width], &values[b * width..][..width]);
        for ((x, y), (_, desc)) in ra.iter().zip(rb).zip(&keys) {
            let o = compare(x, y);
            if o != Ordering::Equal {
                return if *desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    });
    drop(values);
    let mut slots: Vec<Option<Value>> = docs.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

fn project(doc: &Value, body: &Value, budget: &mut Budget) -> Result<Value, Exceeded> {
    budget.row()?;
    let empty = Map::new();
    let spec = body.as_object().unwrap_or(&empty);
    let flag = |v: &Value| match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => Some(n.as_f64() != Some(0.0)),
        _ => None,
    };
    let exclusion = spec
        .iter()
        .filter(|(k, _)| *k != "_id")
        .all(|(_, v)| flag(v) == Some(false))
        && spec.keys().any(|k| k != "_id");
    let mut out = Map::new();
    if exclusion {
        let fields = doc.as_object().map_or(0, Map::len);
        budget.bytes(object_bytes(fields))?;
        for (k, v) in doc.as_object().into_iter().flatten() {
            budget.node()?;
            if spec.get(k).and_then(flag) != Some(false) {
                budget.bytes(k.len() as u64)?;
                out.insert(k.clone(), budget.clone_of(v)?);
            }
        }
        return Ok(Value::Object(out));
    }
    budget.bytes(object_bytes(spec.len() + 1))?;
    if let (true, Some(id)) = (
        spec.get("_id").and_then(flag) != Some(false),
        doc.get("_id"),
    ) {
        out.insert("_id".into(), budget.clone_of(id)?);
    }
    for (k, v) in spec {
        budget.node()?;
        budget.bytes(k.len() as u64)?;
        match flag(v) {
            Some(true) => {
                if let Some(value) = get(doc, k) {
                    out.insert(k.clone(), budget.clone_of(value)?);
                }
            }
            Some(false) => {}
            None => {
                out.insert(k.clone(), super::expr::expr(doc, v, budget)?);
            }
        }
    }
    Ok(Value::Object(out))
}

fn unwind(docs: Vec<Value>, body: &Value, budget: &mut Budget) -> Result<Vec<Value>, Exceeded> {
    let (path, keep) = match body {
        Value::String(s) => (s.as_str(), false),
        other => (
            other
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            other
                .get("preserveNullAndEmptyArrays")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    };
    let field = path.trim_start_matches('$');
    let top_level = !field.contains('.');
    let mut out = Vec::new();
    for mut doc in docs {
        budget.row()?;
        let items = match get(&doc, field) {
            Some(Value::Array(items)) if !items.is_empty() => {
                if top_level {
                    // A top-level array is taken out of the row: each copy is the row
                    // without it, and the last item reuses the row itself.
                    Vec::new()
                } else {
                    budget.bytes(SLOT_BYTES * items.len() as u64)?;
                    items.clone()
                }
            }
            Some(Value::Array(_)) | Some(Value::Null) | None => {
                if keep {
                    out.push(doc);
                }
                continue;
            }
            Some(_) => {
                out.push(doc);
                continue;
            }
        };
        let items = match (top_level, doc.as_object_mut()) {
            (true, Some(map)) => match map.remove(field) {
                Some(Value::Array(items)) => items,
                _ => items,
            },
            _ => items,
        };
        let copy = size(&doc);
        budget.bytes(SLOT_BYTES * items.len() as u64)?;
        let last = items.len().saturating_sub(1);
        for (i, item) in items.into_iter().enumerate() {
            budget.row()?;
            let mut d = if i == last {
                core::mem::take(&mut doc)
            } else {
                budget.bytes(copy)?;
                doc.clone()
            };
            set(&mut d, field, item);
            out.push(d);
        }
    }
    Ok(out)
}

/// The value of a missing field (`'static`, so a join index can borrow it).
static NULL: Value = Value::Null;

/// A scalar join key (numbers by value, as [`equal`] compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key<'a> {
    Null,
    Number(u64),
    Text(&'a str),
    Bool(bool),
}

/// `value`'s scalar key, or `None` for documents and arrays (compared structurally).
fn key(value: &Value) -> Option<Key<'_>> {
    match value {
        Value::Null => Some(Key::Null),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            // -0 equals 0.
            Some(Key::Number(if x == 0.0 { 0 } else { x.to_bits() }))
        }
        Value::String(s) => Some(Key::Text(s)),
        Value::Bool(b) => Some(Key::Bool(*b)),
        Value::Object(_) | Value::Array(_) => None,
    }
}

/// `$lookup`: an index of the foreign rows by `foreignField` (missing counts as null, as
/// Mongo does), then each row's `localField` looked up in it; every joined row is a copy,
/// charged before it is made.
fn join<'f>(
    docs: Vec<Value>,
    body: &Value,
    lookup: &dyn Fn(&str) -> &'f [Value],
    budget: &mut Budget,
) -> Result<Vec<Value>, Exceeded> {
    let text = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default();
    let foreign = lookup(text("from"));
    let (local, field, alias) = (text("localField"), text("foreignField"), text("as"));
    let mut index: BTreeMap<Key<'f>, Vec<usize>> = BTreeMap::new();
    let mut structured: Vec<usize> = Vec::new();
    budget.bytes(8 * foreign.len() as u64)?;
    for (i, f) in foreign.iter().enumerate() {
        budget.node()?;
        match key(get(f, field).unwrap_or(&NULL)) {
            Some(k) => index.entry(k).or_default().push(i),
            None => structured.push(i),
        }
    }
    let probe = u64::from(usize::BITS - foreign.len().leading_zeros());
    let mut out = Vec::with_capacity(docs.len());
    for mut d in docs {
        budget.row()?;
        budget.work(probe)?;
        let wanted = get(&d, local).unwrap_or(&NULL);
        let hits: Vec<usize> = match key(wanted) {
            Some(k) => index.get(&k).cloned().unwrap_or_default(),
            None => {
                budget.work(structured.len() as u64)?;
                structured
                    .iter()
                    .copied()
                    .filter(|&i| equal(get(&foreign[i], field).unwrap_or(&NULL), wanted))
                    .collect()
            }
        };
        budget.bytes(SLOT_BYTES * hits.len() as u64)?;
        let mut joined = Vec::with_capacity(hits.len());
        for i in hits {
            budget.node()?;
            joined.push(budget.clone_of(&foreign[i])?);
        }
        set(&mut d, alias, Value::Array(joined));
        out.push(d);
    }
    Ok(out)
}
