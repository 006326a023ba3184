//! Computations over rows shared by the tools: one operation, grouped, two periods compared.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::super::eval::{get, number, to_json};
use super::super::pipeline::MAX_LIMIT;

/// `op` over `field` of `rows`: the value and how many rows were considered.
pub fn compute<'r>(
    op: &str,
    field: Option<&str>,
    rows: impl Iterator<Item = &'r Value>,
) -> (Value, usize) {
    let rows: Vec<&Value> = rows.collect();
    let values = || rows.iter().filter_map(|r| field.and_then(|f| get(r, f)));
    let nums = || values().filter_map(number).collect::<Vec<f64>>();
    let value = match op {
        "count" => match field {
            None => Value::from(rows.len()),
            Some(_) => Value::from(values().filter(|v| !v.is_null()).count()),
        },
        "sum" => to_json(nums().iter().sum()),
        "avg" => {
            let n = nums();
            if n.is_empty() {
                Value::Null
            } else {
                to_json(n.iter().sum::<f64>() / n.len() as f64)
            }
        }
        "min" => values()
            .filter(|v| !v.is_null())
            .min_by(|a, b| super::super::eval::compare(a, b))
            .cloned()
            .unwrap_or(Value::Null),
        "max" => values()
            .filter(|v| !v.is_null())
            .max_by(|a, b| super::super::eval::compare(a, b))
            .cloned()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    };
    (value, rows.len())
}

/// Groups `rows` by `group_by`, `op` over `field` per group, sorted by value descending.
pub fn grouped(op: &str, field: Option<&str>, group_by: &str, rows: &[Value]) -> Vec<Value> {
    // Keys by their JSON text (one B-tree look-up per row), kept in first-seen order so
    // ties in value keep the order the rows gave them.
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut keys: Vec<(Value, Vec<&Value>)> = Vec::new();
    for row in rows {
        let key = get(row, group_by).unwrap_or(&Value::Null);
        let text = key.to_string();
        match index.get(&text) {
            Some(&i) => keys[i].1.push(row),
            None => {
                index.insert(text, keys.len());
                keys.push((key.clone(), Vec::from([row])));
            }
        }
    }
    let mut groups: Vec<Value> = keys
        .into_iter()
        .map(|(key, members)| {
            let (value, n) = compute(op, field, members.into_iter());
            json!({"group": key, "value": value, "row_count": n})
        })
        .collect();
    groups.sort_by(|a, b| super::super::eval::compare(&b["value"], &a["value"]));
    groups.truncate(MAX_LIMIT as usize);
    groups
}

/// `period1_value`, `period2_value`, `difference` (= p2 − p1) and `percentage_change`
/// (= (p2 − p1) / p1 × 100; `null` when p1 is 0 or missing).
pub fn comparison(v1: &Value, v2: &Value) -> [(&'static str, Value); 4] {
    let (a, b) = (number(v1), number(v2));
    let difference = match (a, b) {
        (Some(a), Some(b)) => to_json(b - a),
        _ => Value::Null,
    };
    let change = match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => to_json((b - a) / a * 100.0),
        _ => Value::Null,
    };
    [
        ("period1_value", v1.clone()),
        ("period2_value", v2.clone()),
        ("difference", difference),
        ("percentage_change", change),
    ]
}
