//! The evaluator's `$group`, `$sort`, `$project` and `$unwind` stages, within the budget.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;
use serde_json::{Map, Value};

use super::super::budget::{
    Budget, COMPARE_UNITS, Exceeded, NODE_UNITS, SLOT_BYTES, object_bytes, size,
};
use super::super::expr::accumulate;
use super::super::value::{compare, get};
use super::join::NULL;
use super::{Failure, set};

pub(super) fn group(
    docs: &[Value],
    body: &Value,
    budget: &mut Budget,
) -> Result<Vec<Value>, Failure> {
    let null = Value::Null;
    let id = body.get("_id").unwrap_or(&null);
    let mut groups: BTreeMap<String, (Value, Vec<&Value>)> = BTreeMap::new();
    for doc in docs {
        budget.row()?;
        let key = super::super::expr::expr(doc, id, budget)?;
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

pub(super) fn sort(
    docs: Vec<Value>,
    body: &Value,
    budget: &mut Budget,
) -> Result<Vec<Value>, Failure> {
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

pub(super) fn project(doc: &Value, body: &Value, budget: &mut Budget) -> Result<Value, Exceeded> {
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
                out.insert(k.clone(), super::super::expr::expr(doc, v, budget)?);
            }
        }
    }
    Ok(Value::Object(out))
}

pub(super) fn unwind(
    docs: Vec<Value>,
    body: &Value,
    budget: &mut Budget,
) -> Result<Vec<Value>, Exceeded> {
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
