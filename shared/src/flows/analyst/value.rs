//! JSON values as the aggregation pipelines see them: dotted paths, numbers, the Mongo-like
//! order and equality of values, and rounding (no_std: no float intrinsics).

use core::cmp::Ordering;
use serde_json::Value;

/// The value at a dotted `path` (missing → `None`).
pub fn get<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(doc, |v, key| v.get(key))
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

/// The type order of values (null < numbers < strings < objects < arrays < booleans).
pub fn rank(v: &Value) -> u8 {
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

/// Mongo-like equality of values (numbers by value; documents and arrays structurally).
pub fn equal(a: &Value, b: &Value) -> bool {
    rank(a) == rank(b) && compare(a, b) == Ordering::Equal && (rank(a) < 3 || a == b)
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
