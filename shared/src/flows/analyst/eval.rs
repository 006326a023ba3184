//! The reference evaluator of validated pipelines (TEMPLATES.md §1.3): the allowed subset
//! of Mongo's aggregation semantics over JSON rows, pure Rust. Rows come from the loader,
//! which reads only the requesting user's connections; a pipeline can only narrow them.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;
use serde_json::{Map, Value};

use super::pipeline::MAX_LIMIT;
use super::regex::Patterns;

/// Runs validated `stages` over `rows`; `lookup` gives the rows of a connection id.
pub fn evaluate(
    stages: &[Value],
    rows: Vec<Value>,
    lookup: &dyn Fn(&str) -> Vec<Value>,
) -> Result<Vec<Value>, String> {
    let mut docs = rows;
    let mut patterns = Patterns::default();
    stages.iter().for_each(|s| patterns.collect(s));
    for stage in stages {
        let Some((name, body)) = stage.as_object().and_then(|o| o.iter().next()) else {
            continue;
        };
        docs = match name.as_str() {
            "$match" => docs
                .into_iter()
                .filter(|d| matches_with(d, body, &patterns))
                .collect(),
            "$group" => group(&docs, body)?,
            "$sort" => sort(docs, body),
            "$limit" => {
                let n = body.as_u64().unwrap_or(MAX_LIMIT).min(MAX_LIMIT) as usize;
                docs.truncate(n);
                docs
            }
            "$project" => docs.iter().map(|d| project(d, body)).collect(),
            "$count" => {
                let mut out = Map::new();
                out.insert(body.as_str().unwrap_or("count").into(), docs.len().into());
                if docs.is_empty() {
                    vec![]
                } else {
                    vec![Value::Object(out)]
                }
            }
            "$unwind" => unwind(docs, body),
            "$lookup" => {
                let text = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default();
                let foreign = lookup(text("from"));
                let (local, field, alias) = (text("localField"), text("foreignField"), text("as"));
                docs.into_iter()
                    .map(|mut d| {
                        let key = get(&d, local).cloned().unwrap_or(Value::Null);
                        let joined: Vec<Value> = foreign
                            .iter()
                            .filter(|f| equal(get(f, field).unwrap_or(&Value::Null), &key))
                            .cloned()
                            .collect();
                        set(&mut d, alias, Value::Array(joined));
                        d
                    })
                    .collect()
            }
            other => return Err(alloc::format!("Stage {other} is not allowed")),
        };
        if docs.len() > 200_000 {
            return Err("pipeline produced too many intermediate rows".into());
        }
    }
    Ok(docs)
}

/// The value at a dotted `path` (missing → `None`).
pub fn get<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(doc, |v, key| v.get(key))
}

fn set(doc: &mut Value, path: &str, value: Value) {
    if let Value::Object(map) = doc {
        map.insert(path.to_string(), value);
    }
}

/// A JSON number as `f64`.
pub fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

/// `f64` as JSON: an integer when it is one.
pub fn to_json(n: f64) -> Value {
    if n.is_finite() && n == (n as i64) as f64 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Object(_) => 3,
        Value::Array(_) => 4,
        Value::Bool(_) => 5,
    }
}

/// Mongo-like total order of values.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    rank(a) == rank(b) && compare(a, b) == Ordering::Equal && (rank(a) < 3 || a == b)
}

/// Whether `doc` passes the query `filter`.
pub fn matches(doc: &Value, filter: &Value) -> bool {
    matches_with(doc, filter, &Patterns::of(filter))
}

/// [`matches`] with the filter's `$regex` patterns compiled once.
pub fn matches_with(doc: &Value, filter: &Value, patterns: &Patterns) -> bool {
    let Value::Object(map) = filter else {
        return false;
    };
    map.iter().all(|(key, cond)| match key.as_str() {
        "$and" => cond
            .as_array()
            .is_some_and(|a| a.iter().all(|f| matches_with(doc, f, patterns))),
        "$or" => cond
            .as_array()
            .is_some_and(|a| a.iter().any(|f| matches_with(doc, f, patterns))),
        "$nor" => cond
            .as_array()
            .is_some_and(|a| !a.iter().any(|f| matches_with(doc, f, patterns))),
        field => field_matches(get(doc, field), cond, patterns),
    })
}

fn field_matches(value: Option<&Value>, cond: &Value, patterns: &Patterns) -> bool {
    let ops = cond
        .as_object()
        .filter(|o| !o.is_empty() && o.keys().all(|k| k.starts_with('$')));
    let Some(ops) = ops else {
        return eq_or_contains(value, cond);
    };
    ops.iter().all(|(op, arg)| {
        let cmp = |want: &[Ordering]| {
            value.is_some_and(|v| rank(v) == rank(arg) && want.contains(&compare(v, arg)))
        };
        match op.as_str() {
            "$eq" => eq_or_contains(value, arg),
            "$ne" => !eq_or_contains(value, arg),
            "$gt" => cmp(&[Ordering::Greater]),
            "$gte" => cmp(&[Ordering::Greater, Ordering::Equal]),
            "$lt" => cmp(&[Ordering::Less]),
            "$lte" => cmp(&[Ordering::Less, Ordering::Equal]),
            "$in" => arg
                .as_array()
                .is_some_and(|a| a.iter().any(|x| eq_or_contains(value, x))),
            "$nin" => !arg
                .as_array()
                .is_some_and(|a| a.iter().any(|x| eq_or_contains(value, x))),
            "$exists" => value.is_some() == arg.as_bool().unwrap_or(true),
            "$not" => !field_matches(value, arg, patterns),
            "$regex" => patterns.matches(value, ops),
            // Read together with its `$regex`.
            "$options" => ops.contains_key("$regex"),
            _ => false,
        }
    })
}

fn eq_or_contains(value: Option<&Value>, want: &Value) -> bool {
    match value {
        None => want.is_null(),
        Some(Value::Array(items)) if !want.is_array() => items.iter().any(|i| equal(i, want)),
        Some(v) => equal(v, want),
    }
}

/// Evaluates an aggregation expression against `doc`.
pub fn expr(doc: &Value, e: &Value) -> Value {
    match e {
        Value::String(s) if s.starts_with('$') => get(doc, &s[1..]).cloned().unwrap_or(Value::Null),
        Value::Object(map) if map.len() == 1 && map.keys().all(|k| k.starts_with('$')) => {
            let Some((op, arg)) = map.iter().next() else {
                return Value::Null;
            };
            operator(doc, op, arg)
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), expr(doc, v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| expr(doc, i)).collect()),
        other => other.clone(),
    }
}

fn operator(doc: &Value, op: &str, arg: &Value) -> Value {
    let args: Vec<Value> = match arg {
        Value::Array(items) => items.iter().map(|i| expr(doc, i)).collect(),
        other => vec![expr(doc, other)],
    };
    let nums = || args.iter().map(number).collect::<Option<Vec<f64>>>();
    let text = |i: usize| match args.get(i) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let date_part = |range: core::ops::Range<usize>| {
        text(0)
            .get(range)
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(Value::Null, Value::from)
    };
    let pair = |f: fn(Ordering) -> bool| match (args.first(), args.get(1)) {
        (Some(a), Some(b)) => Value::Bool(f(compare(a, b))),
        _ => Value::Null,
    };
    match op {
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
        "$toLower" => Value::String(text(0).to_lowercase()),
        "$toUpper" => Value::String(text(0).to_uppercase()),
        "$concat" => Value::String((0..args.len()).map(text).collect()),
        "$substr" => {
            let s = text(0);
            let start = args.get(1).and_then(Value::as_u64).unwrap_or(0) as usize;
            let len = args.get(2).and_then(Value::as_u64).unwrap_or(u64::MAX) as usize;
            Value::String(s.chars().skip(start).take(len).collect())
        }
        "$year" => date_part(0..4),
        "$month" => date_part(5..7),
        "$dayOfMonth" => date_part(8..10),
        "$dateToString" => {
            let date = expr(doc, arg.get("date").unwrap_or(&Value::Null));
            let d = date.as_str().unwrap_or_default();
            let format = arg
                .get("format")
                .and_then(Value::as_str)
                .unwrap_or("%Y-%m-%d");
            Value::String(
                format
                    .replace("%Y", d.get(0..4).unwrap_or_default())
                    .replace("%m", d.get(5..7).unwrap_or_default())
                    .replace("%d", d.get(8..10).unwrap_or_default()),
            )
        }
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
            (Some(v), Some(Value::Array(a))) => Value::Bool(a.iter().any(|x| equal(x, v))),
            _ => Value::Bool(false),
        },
        "$cond" => {
            let (c, t, f) = match arg {
                Value::Object(o) => (
                    expr(doc, o.get("if").unwrap_or(&Value::Null)),
                    o.get("then").map(|v| expr(doc, v)),
                    o.get("else").map(|v| expr(doc, v)),
                ),
                _ => (
                    args.first().cloned().unwrap_or(Value::Null),
                    args.get(1).cloned(),
                    args.get(2).cloned(),
                ),
            };
            if truthy(&c) { t } else { f }.unwrap_or(Value::Null)
        }
        "$ifNull" => args
            .iter()
            .find(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false)) && v.as_f64() != Some(0.0)
}

/// Rounds half away from zero to `places` decimals.
pub fn round(n: f64, places: i32) -> f64 {
    let factor = libm_pow10(places);
    let scaled = n * factor;
    let r = if scaled < 0.0 {
        -((-scaled) + 0.5).floor_()
    } else {
        (scaled + 0.5).floor_()
    };
    r / factor
}

fn libm_pow10(p: i32) -> f64 {
    let mut f = 1.0;
    for _ in 0..p.unsigned_abs().min(15) {
        f *= 10.0;
    }
    if p < 0 { 1.0 / f } else { f }
}

trait Floor {
    fn floor_(self) -> f64;
}

impl Floor for f64 {
    /// `floor` without std (no_std core has no float intrinsics).
    fn floor_(self) -> f64 {
        if !self.is_finite() || self.abs() >= 4.5e15 {
            return self;
        }
        let t = self as i64 as f64;
        if t > self { t - 1.0 } else { t }
    }
}

/// One accumulator over the group's docs.
fn accumulate(docs: &[&Value], op: &str, arg: &Value) -> Value {
    let values = || docs.iter().map(|d| expr(d, arg));
    let nums = || values().filter_map(|v| number(&v)).collect::<Vec<f64>>();
    match op {
        "$sum" => to_json(nums().iter().sum()),
        "$count" => Value::from(docs.len()),
        "$avg" => {
            let n = nums();
            if n.is_empty() {
                Value::Null
            } else {
                to_json(n.iter().sum::<f64>() / n.len() as f64)
            }
        }
        "$min" => values()
            .filter(|v| !v.is_null())
            .min_by(compare)
            .unwrap_or(Value::Null),
        "$max" => values()
            .filter(|v| !v.is_null())
            .max_by(compare)
            .unwrap_or(Value::Null),
        "$first" => values().next().unwrap_or(Value::Null),
        "$last" => docs.last().map_or(Value::Null, |d| expr(d, arg)),
        "$push" => Value::Array(values().take(MAX_LIMIT as usize).collect()),
        _ => Value::Null,
    }
}

fn group(docs: &[Value], body: &Value) -> Result<Vec<Value>, String> {
    let id = body.get("_id").cloned().unwrap_or(Value::Null);
    let mut groups: BTreeMap<String, (Value, Vec<&Value>)> = BTreeMap::new();
    for doc in docs {
        let key = expr(doc, &id);
        let text = serde_json::to_string(&key).unwrap_or_default();
        groups
            .entry(text)
            .or_insert_with(|| (key, Vec::new()))
            .1
            .push(doc);
    }
    let mut out = Vec::with_capacity(groups.len());
    for (key, members) in groups.into_values() {
        let mut row = Map::new();
        row.insert("_id".into(), key);
        for (field, acc) in body.as_object().into_iter().flatten() {
            if field == "_id" {
                continue;
            }
            let Some((op, arg)) = acc.as_object().and_then(|o| o.iter().next()) else {
                return Err(alloc::format!(
                    "$group field '{field}' needs an accumulator"
                ));
            };
            row.insert(field.clone(), accumulate(&members, op, arg));
        }
        out.push(Value::Object(row));
    }
    Ok(out)
}

fn sort(mut docs: Vec<Value>, body: &Value) -> Vec<Value> {
    let keys: Vec<(String, bool)> = body
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_i64() == Some(-1)))
        .collect();
    docs.sort_by(|a, b| {
        for (key, desc) in &keys {
            let null = Value::Null;
            let o = compare(get(a, key).unwrap_or(&null), get(b, key).unwrap_or(&null));
            if o != Ordering::Equal {
                return if *desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    });
    docs
}

fn project(doc: &Value, body: &Value) -> Value {
    let spec = body.as_object().cloned().unwrap_or_default();
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
        for (k, v) in doc.as_object().into_iter().flatten() {
            if spec.get(k).and_then(flag) != Some(false) {
                out.insert(k.clone(), v.clone());
            }
        }
        return Value::Object(out);
    }
    if let (true, Some(id)) = (
        spec.get("_id").and_then(flag) != Some(false),
        doc.get("_id"),
    ) {
        out.insert("_id".into(), id.clone());
    }
    for (k, v) in &spec {
        match flag(v) {
            Some(true) => {
                if let Some(value) = get(doc, k) {
                    out.insert(k.clone(), value.clone());
                }
            }
            Some(false) => {}
            None => {
                out.insert(k.clone(), expr(doc, v));
            }
        }
    }
    Value::Object(out)
}

fn unwind(docs: Vec<Value>, body: &Value) -> Vec<Value> {
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
    let mut out = Vec::new();
    for doc in docs {
        match get(&doc, field).cloned() {
            Some(Value::Array(items)) if !items.is_empty() => {
                for item in items {
                    let mut d = doc.clone();
                    set(&mut d, field, item);
                    out.push(d);
                }
            }
            Some(Value::Array(_)) | Some(Value::Null) | None => {
                if keep {
                    out.push(doc);
                }
            }
            Some(_) => out.push(doc),
        }
    }
    out
}
