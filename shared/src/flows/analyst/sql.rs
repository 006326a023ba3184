//! The simple tools' SQL path (TEMPLATES.md §1.3, issue "where the work runs"):
//! `aggregate_data` compiled to one parameterised SQLite query over `data_rows` (JSON
//! columns, `GROUP BY`) in the site's own database ([`SCHEMA`]: the site object's, one
//! site per database), so a large data set is aggregated by the database instead of
//! being loaded into the Worker. The Rust evaluator stays the reference semantics: a
//! differential test runs both over the same rows. Field names travel as bound JSON
//! paths, never as SQL text; the statement also checks the connection is the user's.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

pub use crate::boundary::{AggregateQuery, AggregateRow};

/// The data sets' tables in a site's own database (issue 47: the site object's SQLite; they
/// lived in the shared D1, `migrations/0015_analyst.sql`, keyed by site, before). A data set
/// ("connection") belongs to one user; its rows are JSON objects typed at upload; `bytes`
/// is its rows' JSON size (the per-site caps). An upload writes its rows under its own id
/// (not a connection's yet: no query sees them) and becomes the connection in one short
/// transaction; `data_uploads` lists the ids whose rows are still being written, or are to
/// be deleted (`gone`: a replaced or deleted data set's, a refused upload's).
pub const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS data_connections (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    schema      TEXT NOT NULL,
    row_count   INTEGER NOT NULL,
    source_url  TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    bytes       INTEGER NOT NULL DEFAULT 0,
    UNIQUE (user_id, name)
);
CREATE TABLE IF NOT EXISTS data_rows (
    connection_id TEXT NOT NULL,
    row_index     INTEGER NOT NULL,
    data          TEXT NOT NULL,
    PRIMARY KEY (connection_id, row_index)
);
CREATE TABLE IF NOT EXISTS data_uploads (
    id   TEXT PRIMARY KEY,
    at   INTEGER NOT NULL,
    gone INTEGER NOT NULL DEFAULT 0
);
DROP TABLE IF EXISTS data_staging;";

/// A bound parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlParam {
    /// Text.
    Text(String),
    /// A number.
    Number(f64),
}

/// The JSON path of a top-level key (`$."name"`), or `None` for names the path syntax
/// or the evaluator's dotted lookup would read differently.
pub fn json_path(name: &str) -> Option<String> {
    (!name.is_empty() && !name.contains(['"', '\\', '.'])).then(|| format!("$.\"{name}\""))
}

/// The statement over [`SCHEMA`] and its parameters (`?1` connection, `?2` user, then the
/// query's own). Columns: `g` (group), `t` (its JSON type), `v`, `n`, `first`.
pub fn aggregate_sql(
    query: &AggregateQuery,
    connection_id: &str,
    user_id: &str,
) -> Option<(String, Vec<SqlParam>)> {
    let mut params = Vec::from([
        SqlParam::Text(connection_id.into()),
        SqlParam::Text(user_id.into()),
    ]);
    let mut bind = |p: SqlParam| {
        params.push(p);
        format!("?{}", params.len())
    };
    let numeric = |path: &str| {
        if query.field_numeric {
            return format!("json_extract(r.data, {path})");
        }
        format!(
            "CASE WHEN json_type(r.data, {path}) IN ('integer', 'real') \
             THEN json_extract(r.data, {path}) END"
        )
    };
    let field = match &query.field {
        Some(f) => Some(bind(SqlParam::Text(json_path(f)?))),
        None => None,
    };
    let value = match (query.operation.as_str(), &field) {
        ("count", None) => String::from("COUNT(*)"),
        ("count", Some(p)) => format!(
            "COUNT(CASE WHEN json_type(r.data, {p}) IS NOT NULL AND json_type(r.data, {p}) != 'null' THEN 1 END)"
        ),
        ("sum", Some(p)) => format!("TOTAL({})", numeric(p)),
        ("avg", Some(p)) => format!("AVG({})", numeric(p)),
        ("min", Some(p)) => format!("MIN({})", numeric(p)),
        ("max", Some(p)) => format!("MAX({})", numeric(p)),
        _ => return None,
    };
    let (group, kind) = match &query.group_by {
        Some(g) => {
            let p = bind(SqlParam::Text(json_path(g)?));
            let kind = if query.group_scalar {
                String::from("'scalar'")
            } else {
                format!("COALESCE(json_type(r.data, {p}), 'null')")
            };
            (format!("json_extract(r.data, {p})"), kind)
        }
        None => ("NULL".into(), "NULL".into()),
    };
    let mut sql = format!(
        "SELECT {group} AS g, {kind} AS t, {value} AS v, COUNT(*) AS n, MIN(r.row_index) AS first \
         FROM data_rows r WHERE r.connection_id = ?1 AND EXISTS \
         (SELECT 1 FROM data_connections c WHERE c.id = ?1 AND c.user_id = ?2)"
    );
    for (name, want) in &query.equals {
        let p = bind(SqlParam::Text(json_path(name)?));
        let (v, t) = match want {
            Value::String(s) => (bind(SqlParam::Text(s.clone())), "= 'text'"),
            Value::Number(n) => (
                bind(SqlParam::Number(n.as_f64()?)),
                "IN ('integer', 'real')",
            ),
            _ => return None,
        };
        sql.push_str(&format!(
            " AND json_type(r.data, {p}) {t} AND json_extract(r.data, {p}) = {v}"
        ));
    }
    if let Some((name, from, to)) = &query.range {
        let p = bind(SqlParam::Text(json_path(name)?));
        let from = bind(SqlParam::Text(from.clone()));
        let to = bind(SqlParam::Text(to.clone()));
        sql.push_str(&format!(
            " AND json_type(r.data, {p}) = 'text' AND json_extract(r.data, {p}) >= {from} \
             AND json_extract(r.data, {p}) <= {to}"
        ));
    }
    if query.group_by.is_some() {
        sql.push_str(" GROUP BY g, t ORDER BY v IS NULL, v DESC, first ASC LIMIT 1000");
    }
    Some((sql, params))
}

/// A result row's group as JSON, from its SQLite value and JSON type.
pub fn group_value(g: &Value, t: Option<&str>) -> Value {
    match t {
        Some("true") => Value::Bool(true),
        Some("false") => Value::Bool(false),
        None | Some("null") => Value::Null,
        _ => g.clone(),
    }
}
