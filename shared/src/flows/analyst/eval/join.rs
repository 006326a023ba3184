//! The evaluator's `$lookup`: the foreign rows indexed by their key, then joined.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use serde_json::Value;

use super::super::budget::{Budget, Exceeded, SLOT_BYTES};
use super::super::value::{equal, get};
use super::set;

/// The value of a missing field (`'static`, so a join index can borrow it).
pub(super) static NULL: Value = Value::Null;

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
pub(super) fn join<'f>(
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
