//! Aggregation expressions (`$project` values, `$group` keys and accumulators) under a
//! [`Budget`]: every node evaluated costs a work unit, and every value built is charged
//! before it is built (a `$concat` adds up its parts' lengths first), so a chain that
//! doubles a string per stage stops at the byte limit instead of growing past it.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Ordering;
use serde_json::{Map, Value};

use super::budget::{Budget, Exceeded, SLOT_BYTES, object_bytes};
use super::pipeline::MAX_LIMIT;
use super::value::{compare, equal, get, number, round, to_json};

/// Evaluates an aggregation expression against `doc`, charging `budget`.
pub fn expr(doc: &Value, e: &Value, budget: &mut Budget) -> Result<Value, Exceeded> {
    budget.node()?;
    match e {
        Value::String(s) if s.starts_with('$') => match get(doc, &s[1..]) {
            Some(v) => budget.clone_of(v),
            None => Ok(Value::Null),
        },
        Value::Object(map) if map.len() == 1 && map.keys().all(|k| k.starts_with('$')) => {
            let Some((op, arg)) = map.iter().next() else {
                return Ok(Value::Null);
            };
            operator(doc, op, arg, budget)
        }
        Value::Object(map) => {
            budget
                .bytes(object_bytes(map.len()) + map.keys().map(|k| k.len() as u64).sum::<u64>())?;
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), expr(doc, v, budget)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => {
            budget.bytes(SLOT_BYTES * items.len() as u64)?;
            items
                .iter()
                .map(|i| expr(doc, i, budget))
                .collect::<Result<_, _>>()
                .map(Value::Array)
        }
        other => budget.clone_of(other),
    }
}

/// A value as text (`$concat`, `$substr`, dates): strings as they are, numbers printed.
fn text(v: Option<&Value>) -> Cow<'_, str> {
    match v {
        Some(Value::String(s)) => Cow::Borrowed(s.as_str()),
        Some(Value::Number(n)) => Cow::Owned(n.to_string()),
        _ => Cow::Borrowed(""),
    }
}

/// A new string of at most `bytes` bytes, charged before `build` runs.
fn string(
    budget: &mut Budget,
    bytes: usize,
    build: impl FnOnce() -> String,
) -> Result<Value, Exceeded> {
    budget.bytes(bytes as u64)?;
    Ok(Value::String(build()))
}

fn operator(doc: &Value, op: &str, arg: &Value, budget: &mut Budget) -> Result<Value, Exceeded> {
    match op {
        "$cond" => {
            if let Value::Object(o) = arg {
                let null = Value::Null;
                let c = expr(doc, o.get("if").unwrap_or(&null), budget)?;
                let branch = if truthy(&c) { "then" } else { "else" };
                return match o.get(branch) {
                    Some(v) => expr(doc, v, budget),
                    None => Ok(Value::Null),
                };
            }
        }
        "$dateToString" => {
            let null = Value::Null;
            let date = expr(doc, arg.get("date").unwrap_or(&null), budget)?;
            let d = date.as_str().unwrap_or_default();
            let format = arg
                .get("format")
                .and_then(Value::as_str)
                .unwrap_or("%Y-%m-%d");
            // Each two-character directive becomes at most four characters.
            return string(budget, format.len() * 2, || {
                format
                    .replace("%Y", d.get(0..4).unwrap_or_default())
                    .replace("%m", d.get(5..7).unwrap_or_default())
                    .replace("%d", d.get(8..10).unwrap_or_default())
            });
        }
        _ => {}
    }
    let args: Vec<Value> = match arg {
        Value::Array(items) => {
            budget.bytes(SLOT_BYTES * items.len() as u64)?;
            items
                .iter()
                .map(|i| expr(doc, i, budget))
                .collect::<Result<_, _>>()?
        }
        other => Vec::from([expr(doc, other, budget)?]),
    };
    let nums = || args.iter().map(number).collect::<Option<Vec<f64>>>();
    let date_part = |range: core::ops::Range<usize>| {
        text(args.first())
            .get(range)
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(Value::Null, Value::from)
    };
    let pair = |f: fn(Ordering) -> bool| match (args.first(), args.get(1)) {
        (Some(a), Some(b)) => Value::Bool(f(compare(a, b))),
        _ => Value::Null,
    };
    Ok(match op {
        "$add" => nums().map_or(Value::Null, |n| to_json(n.iter().sum())),
        "$multiply" => nums().map_or(Value::Null, |n| to_json(n.iter().product())),
        "$subtract" => match nums().as_deref() {
            Some([a, b]) => to_json(a - b),
            _ => Value::Null,
        },
        "$divide" => match nums().as_deref() {
            Some([a, b]) if *b != 0.0 => to_json(a / b),
            _ => Value::Null,
        },
        "$round" => match nums().as_deref() {
            Some([a]) => to_json(round(*a, 0)),
            Some([a, p]) => to_json(round(*a, *p as i32)),
            _ => Value::Null,
        },
        // Case mapping can lengthen a character up to three times (e.g. 'ſ' → "S" is
        // shorter, 'ΐ' upper-cases to three characters).
        "$toLower" => {
            let s = text(args.first());
            string(budget, s.len() * 3, || s.to_lowercase())?
        }
        "$toUpper" => {
            let s = text(args.first());
            string(budget, s.len() * 3, || s.to_uppercase())?
        }
        "$concat" => {
            let parts: Vec<Cow<'_, str>> = args.iter().map(|a| text(Some(a))).collect();
            let total = parts.iter().map(|p| p.len()).sum();
            string(budget, total, || parts.concat())?
        }
        "$substr" => {
            let s = text(args.first());
            let start = args.get(1).and_then(Value::as_u64).unwrap_or(0) as usize;
            let len = args.get(2).and_then(Value::as_u64).unwrap_or(u64::MAX) as usize;
            budget.scan(s.len() as u64)?;
            let out: String = s.chars().skip(start).take(len).collect();
            budget.bytes(out.len() as u64)?;
            Value::String(out)
        }
        "$year" => date_part(0..4),
        "$month" => date_part(5..7),
        "$dayOfMonth" => date_part(8..10),
        "$eq" => pair(|o| o == Ordering::Equal),
        "$ne" => pair(|o| o != Ordering::Equal),
        "$gt" => pair(|o| o == Ordering::Greater),
        "$gte" => pair(|o| o != Ordering::Less),
        "$lt" => pair(|o| o == Ordering::Less),
        "$lte" => pair(|o| o != Ordering::Greater),
        "$and" => Value::Bool(args.iter().all(truthy)),
        "$or" => Value::Bool(args.iter().any(truthy)),
        "$not" => Value::Bool(!args.first().is_some_and(truthy)),
        "$in" => match (args.first(), args.get(1)) {
            (Some(v), Some(Value::Array(a))) => {
                budget.work(a.len() as u64)?;
                Value::Bool(a.iter().any(|x| equal(x, v)))
            }
            _ => Value::Bool(false),
        },
        "$cond" => {
            let mut args = args.into_iter();
            let (c, t, f) = (args.next(), args.next(), args.next());
            if c.as_ref().is_some_and(truthy) { t } else { f }.unwrap_or(Value::Null)
        }
        "$ifNull" => args
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null),
        _ => Value::Null,
    })
}

/// Mongo's truthiness: not null, not false, not zero.
pub fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false)) && v.as_f64() != Some(0.0)
}

/// One accumulator (`op` of `arg`) over a group's member docs, charging `budget`.
pub fn accumulate(
    docs: &[&Value],
    op: &str,
    arg: &Value,
    budget: &mut Budget,
) -> Result<Value, Exceeded> {
    match op {
        "$count" => return Ok(Value::from(docs.len())),
        "$first" => {
            return docs
                .first()
                .map_or(Ok(Value::Null), |d| expr(d, arg, budget));
        }
        "$last" => {
            return docs
                .last()
                .map_or(Ok(Value::Null), |d| expr(d, arg, budget));
        }
        "$push" => {
            let n = docs.len().min(MAX_LIMIT as usize);
            budget.bytes(SLOT_BYTES * n as u64)?;
            return docs[..n]
                .iter()
                .map(|d| expr(d, arg, budget))
                .collect::<Result<_, _>>()
                .map(Value::Array);
        }
        _ => {}
    }
    let (mut sum, mut count) = (0.0, 0usize);
    let mut best: Option<Value> = None;
    for d in docs {
        let v = expr(d, arg, budget)?;
        match op {
            "$sum" | "$avg" => {
                if let Some(n) = number(&v) {
                    sum += n;
                    count += 1;
                }
            }
            "$min" | "$max" if !v.is_null() => {
                let want = if op == "$min" {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                // Ties keep the later value, as `Iterator::max_by` did (and `min_by` the
                // earlier).
                let replace = best.as_ref().is_none_or(|b| {
                    let o = compare(&v, b);
                    o == want || (o == Ordering::Equal && op == "$max")
                });
                if replace {
                    best = Some(v);
                }
            }
            _ => {}
        }
    }
    Ok(match op {
        "$sum" => to_json(sum),
        "$avg" if count > 0 => to_json(sum / count as f64),
        "$min" | "$max" => best.unwrap_or(Value::Null),
        _ => Value::Null,
    })
}
