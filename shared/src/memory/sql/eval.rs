//! The evaluator of the SQL subset [`MemorySql`](super::MemorySql) answers.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Ordering;
use serde_json::Value;

use super::MemoryTable;
use super::parse::{Condition, Op, Operand, Projection, Select};
use crate::boundary::{ReadOnlyQuery, SqlRows, SqlValue};
use crate::error::ServiceError;

/// The index of column `name` in `table`.
fn column(table: &MemoryTable, name: &str) -> Result<usize, ServiceError> {
    table
        .schema
        .columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| super::invalid(format!("no such column: {name}")))
}

/// Evaluates `select` over `table` (uncapped).
pub(super) fn execute(
    table: &MemoryTable,
    select: &Select,
    query: &ReadOnlyQuery,
) -> Result<SqlRows, ServiceError> {
    let operand = |operand: &Operand| match operand {
        Operand::Literal(value) => Ok(value.clone()),
        Operand::Param(index) => query
            .params()
            .get(*index)
            .map(sql_value_json)
            .ok_or_else(|| super::invalid(format!("parameter ?{} is not bound", index + 1))),
    };
    let mut filter = Vec::new();
    for condition in &select.filter {
        filter.push(match condition {
            Condition::Compare(name, op, value) => {
                (column(table, name)?, Test::Compare(*op, operand(value)?))
            }
            Condition::Like(name, negated, pattern) => (
                column(table, name)?,
                Test::Like(*negated, operand(pattern)?),
            ),
            Condition::IsNull(name, negated) => (column(table, name)?, Test::IsNull(*negated)),
        });
    }
    let order = select
        .order
        .iter()
        .map(|(name, descending)| Ok((column(table, name)?, *descending)))
        .collect::<Result<Vec<_>, ServiceError>>()?;
    let mut matching: Vec<&Vec<Value>> = table
        .rows
        .iter()
        .filter(|row| filter.iter().all(|(index, test)| test.passes(&row[*index])))
        .collect();
    matching.sort_by(|a, b| {
        order
            .iter()
            .map(|&(index, descending)| {
                let ordering = sort_order(&a[index], &b[index]);
                if descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            })
            .find(|ordering| ordering.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    let (columns, rows): (Vec<String>, Vec<Vec<Value>>) = match &select.projection {
        Projection::Count(name) => (
            [name.clone()].into(),
            [[Value::from(matching.len())].into()].into(),
        ),
        Projection::All => (
            table
                .schema
                .columns
                .iter()
                .map(|c| c.name.clone())
                .collect(),
            matching.into_iter().cloned().collect(),
        ),
        Projection::Columns(list) => {
            let indexes = list
                .iter()
                .map(|(name, _)| column(table, name))
                .collect::<Result<Vec<_>, _>>()?;
            (
                list.iter().map(|(_, alias)| alias.clone()).collect(),
                matching
                    .into_iter()
                    .map(|row| indexes.iter().map(|&i| row[i].clone()).collect())
                    .collect(),
            )
        }
    };
    let rows = rows
        .into_iter()
        .skip(select.offset)
        .take(select.limit.unwrap_or(usize::MAX))
        .collect();
    Ok(SqlRows {
        columns,
        rows,
        truncated: false,
        statement: None,
        first_table: None,
    })
}

/// `ORDER BY`'s order: `NULL` first, then by storage class and value.
fn sort_order(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// A resolved `WHERE` condition on one column.
enum Test {
    Compare(Op, Value),
    Like(bool, Value),
    IsNull(bool),
}

impl Test {
    fn passes(&self, value: &Value) -> bool {
        match self {
            Self::Compare(op, operand) => holds(*op, value, operand),
            Self::Like(negated, pattern) => match (text_of(value), text_of(pattern)) {
                (Some(text), Some(pattern)) => like(&text, &pattern) != *negated,
                _ => false,
            },
            Self::IsNull(negated) => value.is_null() != *negated,
        }
    }
}

/// A value as `LIKE` reads it (`None` for `NULL`).
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(String::from(if *b { "1" } else { "0" })),
        other => Some(other.to_string()),
    }
}

/// A value as JSON.
fn sql_value_json(value: &SqlValue) -> Value {
    match value {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(n) => Value::from(*n),
        SqlValue::Real(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        SqlValue::Text(t) => Value::String(t.clone()),
    }
}

/// SQLite's storage-class order, without conversions: `None` for `NULL`.
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    fn key(value: &Value) -> Option<Result<f64, String>> {
        match value {
            Value::Null => None,
            Value::Bool(b) => Some(Ok(f64::from(u8::from(*b)))),
            Value::Number(n) => Some(Ok(n.as_f64().unwrap_or(f64::NAN))),
            Value::String(s) => Some(Err(s.clone())),
            other => Some(Err(other.to_string())),
        }
    }
    match (key(a)?, key(b)?) {
        (Ok(x), Ok(y)) => x.partial_cmp(&y),
        (Ok(_), Err(_)) => Some(Ordering::Less),
        (Err(_), Ok(_)) => Some(Ordering::Greater),
        (Err(x), Err(y)) => Some(x.cmp(&y)),
    }
}

/// Whether `op` holds between `a` and `b` (`false` when either is `NULL`).
fn holds(op: Op, a: &Value, b: &Value) -> bool {
    compare(a, b).is_some_and(|ordering| match op {
        Op::Eq => ordering == Ordering::Equal,
        Op::Ne => ordering != Ordering::Equal,
        Op::Lt => ordering == Ordering::Less,
        Op::Le => ordering != Ordering::Greater,
        Op::Gt => ordering == Ordering::Greater,
        Op::Ge => ordering != Ordering::Less,
    })
}

/// SQL `LIKE`: `%` any run, `_` any one character, ASCII case ignored.
fn like(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.chars().map(|c| c.to_ascii_lowercase()).collect();
    let pattern: Vec<char> = pattern.chars().map(|c| c.to_ascii_lowercase()).collect();
    // Greedy matching with backtracking to the last `%`.
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '_' || pattern[p] == text[t]) {
            t += 1;
            p += 1;
        } else if p < pattern.len() && pattern[p] == '%' {
            star = Some((p, t));
            p += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '%')
}
