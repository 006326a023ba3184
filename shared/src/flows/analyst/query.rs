//! `$match` filters under a [`Budget`]: each condition tested costs a work unit, an
//! `$in` list or an array field costs one per element compared, and a `$regex` costs in
//! proportion to the text it scans times its automaton's weight.

use core::cmp::Ordering;
use serde_json::Value;

use super::budget::{Budget, Exceeded};
use super::regex::Patterns;
use super::value::{compare, equal, get, rank};

/// Whether `doc` passes `filter` (its `$regex` patterns compiled in `patterns`).
pub fn matches(
    doc: &Value,
    filter: &Value,
    patterns: &Patterns,
    budget: &mut Budget,
) -> Result<bool, Exceeded> {
    let Value::Object(map) = filter else {
        return Ok(false);
    };
    for (key, cond) in map {
        budget.node()?;
        let pass = match key.as_str() {
            "$and" | "$or" | "$nor" => {
                let Some(items) = cond.as_array() else {
                    return Ok(false);
                };
                let mut any = false;
                let mut all = true;
                for f in items {
                    let m = matches(doc, f, patterns, budget)?;
                    any |= m;
                    all &= m;
                    // Short-circuit as the reference semantics did.
                    if (key == "$and" && !m) || (key != "$and" && m) {
                        break;
                    }
                }
                match key.as_str() {
                    "$and" => all,
                    "$or" => any,
                    _ => !any,
                }
            }
            field => field_matches(get(doc, field), cond, patterns, budget)?,
        };
        if !pass {
            return Ok(false);
        }
    }
    Ok(true)
}

fn field_matches(
    value: Option<&Value>,
    cond: &Value,
    patterns: &Patterns,
    budget: &mut Budget,
) -> Result<bool, Exceeded> {
    let ops = cond
        .as_object()
        .filter(|o| !o.is_empty() && o.keys().all(|k| k.starts_with('$')));
    let Some(ops) = ops else {
        return eq_or_contains(value, cond, budget);
    };
    for (op, arg) in ops {
        budget.node()?;
        let cmp = |want: &[Ordering]| {
            value.is_some_and(|v| rank(v) == rank(arg) && want.contains(&compare(v, arg)))
        };
        let any_of = |budget: &mut Budget| -> Result<bool, Exceeded> {
            let Some(list) = arg.as_array() else {
                return Ok(false);
            };
            for x in list {
                if eq_or_contains(value, x, budget)? {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let pass = match op.as_str() {
            "$eq" => eq_or_contains(value, arg, budget)?,
            "$ne" => !eq_or_contains(value, arg, budget)?,
            "$gt" => cmp(&[Ordering::Greater]),
            "$gte" => cmp(&[Ordering::Greater, Ordering::Equal]),
            "$lt" => cmp(&[Ordering::Less]),
            "$lte" => cmp(&[Ordering::Less, Ordering::Equal]),
            "$in" => any_of(budget)?,
            "$nin" => !any_of(budget)?,
            "$exists" => value.is_some() == arg.as_bool().unwrap_or(true),
            "$not" => !field_matches(value, arg, patterns, budget)?,
            "$regex" => patterns.matches_within(value, ops, budget)?,
            // Read together with its `$regex`.
            "$options" => ops.contains_key("$regex"),
            _ => false,
        };
        if !pass {
            return Ok(false);
        }
    }
    Ok(true)
}

fn eq_or_contains(
    value: Option<&Value>,
    want: &Value,
    budget: &mut Budget,
) -> Result<bool, Exceeded> {
    budget.work(1)?;
    Ok(match value {
        None => want.is_null(),
        Some(Value::Array(items)) if !want.is_array() => {
            budget.work(items.len() as u64)?;
            items.iter().any(|i| equal(i, want))
        }
        Some(v) => equal(v, want),
    })
}
