//! The pipeline validator (seed `PipelineValidator`, TEMPLATES.md §1.2.6): what a model
//! writes for `execute_aggregation` is checked stage by stage and operator by operator
//! against allow-lists before anything runs. Every error is a sentence the model can act on.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

/// Stages a pipeline may use (seed).
pub const ALLOWED_STAGES: [&str; 8] = [
    "$match", "$group", "$sort", "$limit", "$project", "$lookup", "$unwind", "$count",
];
/// Stages always refused (seed).
pub const BLOCKED_STAGES: [&str; 3] = ["$out", "$merge", "$delete"];
/// At most this many rows come back (seed `MAX_LIMIT`).
pub const MAX_LIMIT: u64 = 1000;
/// At most this many stages (decision).
pub const MAX_STAGES: usize = 20;
/// At most this JSON nesting depth (decision).
pub const MAX_DEPTH: usize = 32;
/// At most this many JSON values in a pipeline (decision, issue 24: each is evaluated per
/// row, so a pipeline's size bounds its cost per row; the seed's questions use < 100).
pub const MAX_VALUES: usize = 10_000;

/// Expression and query operators allowed (decision §1.2.6 rule 4). `$regex` (with its
/// `$options`) only in `$match` field conditions, and only in builds with the
/// `analyst-regex` feature (see [`super::regex`]).
pub const OPERATORS: [&str; 38] = [
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$and",
    "$or",
    "$nor",
    "$not",
    "$exists",
    "$regex",
    "$options",
    "$add",
    "$subtract",
    "$multiply",
    "$divide",
    "$round",
    "$substr",
    "$toLower",
    "$toUpper",
    "$concat",
    "$year",
    "$month",
    "$dayOfMonth",
    "$dateToString",
    "$sum",
    "$avg",
    "$min",
    "$max",
    "$first",
    "$last",
    "$count",
    "$push",
    "$cond",
    "$ifNull",
];

/// A connection the pipeline may name in `$lookup.from`: the requesting user's.
#[derive(Debug, Clone, Copy)]
pub struct Owned<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its name.
    pub name: &'a str,
}

/// A validated pipeline: stages in order, `$limit`s clamped, a final `{"$limit":1000}`;
/// `lookups` are the connection ids its `$lookup` stages read (all the user's).
#[derive(Debug, Clone, PartialEq)]
pub struct Sanitized {
    /// The stages to run.
    pub stages: Vec<Value>,
    /// Connection ids read by `$lookup`.
    pub lookups: Vec<String>,
    /// Positions in `stages` of the `$limit`s the sanitizer imposed the row cap on (a
    /// `$limit` above 1000 clamped, and the appended one): rows they cut are rows the
    /// pipeline as written would have kept, so the result is `truncated`.
    pub capped: Vec<usize>,
}

/// Validates `pipeline` for a user owning `owned`; `Err` is the message the model reads.
pub fn validate(pipeline: &Value, owned: &[Owned<'_>]) -> Result<Sanitized, String> {
    let Value::Array(stages) = pipeline else {
        return Err("pipeline must be a JSON array of stage objects".into());
    };
    if stages.len() > MAX_STAGES {
        return Err(format!(
            "pipeline has {} stages; at most {MAX_STAGES}",
            stages.len()
        ));
    }
    if depth(pipeline) > MAX_DEPTH {
        return Err(format!("pipeline nests deeper than {MAX_DEPTH} levels"));
    }
    if values(pipeline) > MAX_VALUES {
        return Err(format!(
            "pipeline has more than {MAX_VALUES} values; write a shorter one"
        ));
    }
    let mut out = Vec::with_capacity(stages.len() + 1);
    let mut lookups = Vec::new();
    let mut capped = Vec::new();
    for (i, stage) in stages.iter().enumerate() {
        let Value::Object(map) = stage else {
            return Err(format!("stage {i} must be an object with one key"));
        };
        if map.len() != 1 {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            if let Some(blocked) = keys.iter().find(|k| BLOCKED_STAGES.contains(k)) {
                return Err(format!("Stage {blocked} is blocked"));
            }
            return Err(format!(
                "stage {i} must have exactly one key, found {}: {}",
                keys.len(),
                keys.join(", ")
            ));
        }
        let Some((name, body)) = map.iter().next() else {
            return Err(format!("stage {i} is empty"));
        };
        let name = name.as_str();
        if BLOCKED_STAGES.contains(&name) {
            return Err(format!("Stage {name} is blocked"));
        }
        if !ALLOWED_STAGES.contains(&name) {
            return Err(format!(
                "Stage {name} is not allowed; allowed: {}",
                ALLOWED_STAGES.join(", ")
            ));
        }
        if name == "$limit" && body.as_u64().is_some_and(|n| n > MAX_LIMIT) {
            capped.push(out.len());
        }
        let body = stage_body(name, body, owned, &mut lookups)?;
        let mut sanitized = serde_json::Map::new();
        sanitized.insert(name.into(), body);
        out.push(Value::Object(sanitized));
    }
    capped.push(out.len());
    out.push(serde_json::json!({ "$limit": MAX_LIMIT }));
    Ok(Sanitized {
        stages: out,
        lookups,
        capped,
    })
}

fn stage_body(
    name: &str,
    body: &Value,
    owned: &[Owned<'_>],
    lookups: &mut Vec<String>,
) -> Result<Value, String> {
    match name {
        "$match" | "$group" | "$project" => {
            if !body.is_object() {
                return Err(format!("{name} takes an object"));
            }
            if name == "$match" {
                filter_keys(body)?;
            }
            operators(body, name == "$match")?;
            if name == "$group" && body.get("_id").is_none() {
                return Err("$group needs an _id (null for one group)".into());
            }
            Ok(body.clone())
        }
        "$sort" => {
            let Value::Object(keys) = body else {
                return Err("$sort takes an object of field: 1 or -1".into());
            };
            if keys.is_empty() {
                return Err("$sort needs at least one field".into());
            }
            for (field, order) in keys {
                if field.starts_with('$') || !matches!(order.as_i64(), Some(1 | -1)) {
                    return Err(format!("$sort value for '{field}' must be 1 or -1"));
                }
            }
            Ok(body.clone())
        }
        "$limit" => match body.as_u64() {
            Some(n) if n > 0 => Ok(Value::from(n.min(MAX_LIMIT))),
            _ => Err("$limit must be a positive integer".into()),
        },
        "$count" => match body.as_str() {
            Some(s) if !s.is_empty() && !s.starts_with('$') && !s.contains('.') => Ok(body.clone()),
            _ => Err("$count takes a non-empty field name without '$' or '.'".into()),
        },
        "$unwind" => {
            let path = match body {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => {
                    if o.keys()
                        .any(|k| k != "path" && k != "preserveNullAndEmptyArrays")
                    {
                        return Err(
                            "$unwind takes \"$field\" or {path, preserveNullAndEmptyArrays}".into(),
                        );
                    }
                    o.get("path").and_then(Value::as_str)
                }
                _ => None,
            };
            match path {
                Some(p) if p.len() > 1 && p.starts_with('$') => Ok(body.clone()),
                _ => Err("$unwind path must be a \"$field\" string".into()),
            }
        }
        "$lookup" => {
            let Value::Object(o) = body else {
                return Err("$lookup takes {from, localField, foreignField, as}".into());
            };
            for key in o.keys() {
                if !matches!(key.as_str(), "from" | "localField" | "foreignField" | "as") {
                    return Err(format!(
                        "$lookup field '{key}' is not supported; use only from, localField, \
                         foreignField, as"
                    ));
                }
            }
            let text = |k: &str| o.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            let (Some(from), Some(_), Some(_), Some(_)) = (
                text("from"),
                text("localField"),
                text("foreignField"),
                text("as"),
            ) else {
                return Err("$lookup needs from, localField, foreignField and as (strings)".into());
            };
            let Some(target) = owned.iter().find(|c| c.name == from || c.id == from) else {
                return Err(format!("Connection '{from}' not found"));
            };
            let mut body = o.clone();
            body.insert("from".into(), Value::String(target.id.to_string()));
            lookups.push(target.id.to_string());
            Ok(Value::Object(body))
        }
        _ => Err(format!("Stage {name} is not allowed")),
    }
}

/// Every `$`-key anywhere in `value` must be an allowed operator; a `$regex` condition
/// (only in a `$match`: `query`) must have a valid, bounded pattern.
fn operators(value: &Value, query: bool) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            if map.contains_key("$regex") || map.contains_key("$options") {
                if !query {
                    return Err("$regex works only in $match field conditions, e.g. \
                                {\"field\": {\"$regex\": \"^Áo\", \"$options\": \"i\"}}"
                        .into());
                }
                super::regex::check(map)?;
            }
            for (key, inner) in map {
                if key.starts_with('$') && !OPERATORS.contains(&key.as_str()) {
                    return Err(format!("Operator {key} is not allowed"));
                }
                operators(inner, query)?;
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|i| operators(i, query)),
        _ => Ok(()),
    }
}

/// `$regex`/`$options` belong in a field's condition, not among a filter's fields.
fn filter_keys(filter: &Value) -> Result<(), String> {
    let Value::Object(map) = filter else {
        return Ok(());
    };
    for (key, inner) in map {
        match (key.as_str(), inner) {
            ("$regex" | "$options", _) => {
                return Err("$regex goes inside a field condition: \
                            {\"field\": {\"$regex\": \"pattern\"}}"
                    .into());
            }
            ("$and" | "$or" | "$nor", Value::Array(items)) => {
                items.iter().try_for_each(filter_keys)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// How many JSON values `value` holds (itself included).
pub fn values(value: &Value) -> usize {
    1 + match value {
        Value::Object(map) => map.values().map(values).sum(),
        Value::Array(items) => items.iter().map(values).sum(),
        _ => 0,
    }
}

/// JSON nesting depth.
pub fn depth(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}
