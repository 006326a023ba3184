//! Checks payloads against the schema published at `www/schemas/rental-payload.json`: the
//! JSON Schema keywords that file uses (`type`, `const`, `enum`, `required`, `properties`,
//! `additionalProperties`, `items`, `oneOf`, `minimum`, `pattern` as a `^` prefix).

use serde_json::Value;

fn published() -> Value {
    let path = concierge_e2e::repo_root().join("www/schemas/rental-payload.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("schema JSON")
}

fn type_ok(kind: &str, value: &Value) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        _ => false,
    }
}

/// Why `value` does not match `schema`, if it does not.
pub(super) fn violation(schema: &Value, value: &Value, at: &str) -> Option<String> {
    if let Some(kind) = schema.get("type").and_then(Value::as_str)
        && !type_ok(kind, value)
    {
        return Some(format!("{at}: not a {kind}"));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        return Some(format!("{at}: not {expected}"));
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        return Some(format!("{at}: {value} not in {options:?}"));
    }
    if let Some(minimum) = schema.get("minimum").and_then(Value::as_f64)
        && value.as_f64().is_some_and(|v| v < minimum)
    {
        return Some(format!("{at}: below {minimum}"));
    }
    if let Some(prefix) = schema
        .get("pattern")
        .and_then(Value::as_str)
        .and_then(|p| p.strip_prefix('^'))
        && !value.as_str().is_some_and(|s| s.starts_with(prefix))
    {
        return Some(format!("{at}: does not start with {prefix}"));
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = options
            .iter()
            .filter(|o| violation(o, value, at).is_none())
            .count();
        if matching != 1 {
            return Some(format!("{at}: matches {matching} of oneOf"));
        }
    }
    if let Some(object) = value.as_object() {
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = key.as_str().unwrap_or_default();
            if !object.contains_key(key) {
                return Some(format!("{at}: missing {key}"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, item) in object {
            let at = format!("{at}.{key}");
            let why = match (
                properties.and_then(|p| p.get(key)),
                schema.get("additionalProperties"),
            ) {
                (Some(sub), _) => violation(sub, item, &at),
                (None, Some(Value::Bool(false))) => Some(format!("{at}: not allowed")),
                (None, Some(sub @ Value::Object(_))) => violation(sub, item, &at),
                _ => None,
            };
            if why.is_some() {
                return why;
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            if let Some(why) = violation(items, item, &format!("{at}[{i}]")) {
                return Some(why);
            }
        }
    }
    None
}

/// Panics unless `payload` matches the published schema.
pub(super) fn assert_valid(payload: &Value) {
    if let Some(why) = violation(&published(), payload, "payload") {
        panic!("payload does not match www/schemas/rental-payload.json: {why}\n{payload}");
    }
}

#[test]
fn the_checker_refuses_what_the_schema_forbids() {
    let schema = published();
    let list = serde_json::json!({"kind": "list", "data": {"items": [{"id": "1", "title": "t",
        "path": "/rooms/1", "entity": "room"}], "total": 1}});
    assert_eq!(violation(&schema, &list, "p"), None);
    let evil = serde_json::json!({"kind": "list", "data": {"items": [{"id": "1", "title": "t",
        "path": "https://evil.example", "entity": "room"}], "total": 1}});
    assert!(violation(&schema, &evil, "p").is_some());
    let extra = serde_json::json!({"kind": "chart", "data": {"chart": "bar", "labels": [],
        "series": [], "alt": "", "image": "https://quickchart.io/x"}});
    assert!(violation(&schema, &extra, "p").is_some());
}
