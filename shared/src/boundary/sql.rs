//! The read-only SQL boundary: `SELECT`s over one site's own data (`rental`'s listings,
//! `analyst`-style reports), with a row cap.
//!
//! # Where safety comes from
//! A statement reaches a [`SqlReader`] as a [`ReadOnlyQuery`], in three layers:
//! 1. **Validation, at the boundary, right before the statement runs.** Model-written SQL
//!    arrives as [`ReadOnlyQuery::written`]: the reader parses and checks it with the
//!    template's validator (for `rental`: one `SELECT`, logical tables only, a function
//!    allow-list, no bind parameters, a cost budget — TEMPLATES.md §2.3; the template's
//!    own `sql` module, which the Worker runs in its own validator Worker) against the
//!    scope's own tables, runs the statement the validator accepted (re-serialised, never
//!    the raw text) and returns it in [`SqlRows::statement`]. A statement the validator
//!    refuses never runs: the error is [`Invalid`](crate::error::ServiceErrorKind::Invalid)
//!    with the validator's sentence as its detail. Statements written by code are built
//!    with [`ReadOnlyQuery::new`] / [`ReadOnlyQuery::with_params`], with their values as
//!    bound [`SqlValue`] parameters — never spliced into the text.
//! 2. **Scoping, inside the boundary.** Table names in a statement are the site's
//!    *logical* tables (as [`SqlReader::schema`] lists them), never physical ones: the
//!    implementation resolves them for the [`SqlScope`]'s site alone (on D1, as CTEs
//!    filtered by a bound `site_id`), so no statement can read another site's rows,
//!    whatever it says.
//! 3. **The cap, inside the boundary.** At most `max_rows` rows come back, and
//!    [`SqlRows::truncated`] says whether the result had more.
//!
//! Implementations also refuse anything but a single `SELECT` (defence in depth: the D1
//! reader runs the statement as a subquery, where SQLite accepts nothing else).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ServiceError;

/// Whose data a statement reads: one site, and optionally one authenticated user of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlScope<'a> {
    /// The site (the tenant). Only its tables are visible.
    pub site_id: &'a str,
    /// The authenticated user (from the site's secret key or a signed user token, never
    /// from a field a public-key caller controls), if any. Implementations may expose
    /// user-scoped tables (e.g. `rental`'s `my_rooms` for a landlord) only to this user;
    /// `None` (anonymous) sees the site's shared tables only.
    pub user_id: Option<&'a str>,
}

impl<'a> SqlScope<'a> {
    /// The site's shared tables, for an anonymous caller.
    pub fn site(site_id: &'a str) -> Self {
        Self {
            site_id,
            user_id: None,
        }
    }

    /// The site's tables as `user_id` sees them.
    pub fn user(site_id: &'a str, user_id: &'a str) -> Self {
        Self {
            site_id,
            user_id: Some(user_id),
        }
    }
}

/// A bound parameter value (SQLite's storage classes, without blobs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SqlValue {
    /// `NULL`.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A double.
    Real(f64),
    /// Text.
    Text(String),
}

impl From<i64> for SqlValue {
    fn from(value: i64) -> Self {
        Self::Integer(value)
    }
}

impl From<f64> for SqlValue {
    fn from(value: f64) -> Self {
        Self::Real(value)
    }
}

impl From<&str> for SqlValue {
    fn from(value: &str) -> Self {
        Self::Text(value.into())
    }
}

impl From<String> for SqlValue {
    fn from(value: String) -> Self {
        Self::Text(value)
    }
}

impl From<bool> for SqlValue {
    /// SQLite's booleans: `1` and `0`.
    fn from(value: bool) -> Self {
        Self::Integer(i64::from(value))
    }
}

/// One `SELECT` over a site's logical tables, with its bound parameters.
///
/// Build it from a statement that was validated (model-written SQL: by the template's
/// validator) or written by code. Placeholders are `?N` (1-based: `?1` is `params()[0]`)
/// or bare `?` (the next parameter, in order); values are never spliced into the text.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOnlyQuery {
    sql: String,
    params: Vec<SqlValue>,
    written: bool,
}

impl ReadOnlyQuery {
    /// A statement without parameters.
    pub fn new(sql: impl Into<String>) -> Self {
        Self {
            sql: sql.into(),
            params: Vec::new(),
            written: false,
        }
    }

    /// A statement with bound parameters, in placeholder order.
    pub fn with_params(sql: impl Into<String>, params: Vec<SqlValue>) -> Self {
        Self {
            sql: sql.into(),
            params,
            written: false,
        }
    }

    /// A statement a model wrote, as it wrote it: the reader validates it before it runs
    /// (module docs) and runs only the statement the validator accepted.
    pub fn written(sql: impl Into<String>) -> Self {
        Self {
            sql: sql.into(),
            params: Vec::new(),
            written: true,
        }
    }

    /// Whether a model wrote the statement ([`ReadOnlyQuery::written`]).
    pub fn is_written(&self) -> bool {
        self.written
    }

    /// Adds the next bound parameter.
    #[must_use]
    pub fn bind(mut self, value: impl Into<SqlValue>) -> Self {
        self.params.push(value.into());
        self
    }

    /// The statement's text.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The bound parameters, in placeholder order.
    pub fn params(&self) -> &[SqlValue] {
        &self.params
    }
}

/// A statement's result, capped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SqlRows {
    /// Column names, in the statement's order.
    pub columns: Vec<String>,
    /// At most the `max_rows` asked for; each row has one value per column (JSON: numbers,
    /// strings, booleans, `null`).
    pub rows: Vec<Vec<Value>>,
    /// The result had more rows than `max_rows`: `rows` holds the first `max_rows`.
    pub truncated: bool,
    /// For a model-written statement ([`ReadOnlyQuery::written`]): the statement that ran,
    /// as the validator re-serialised it (never the model's text). `None` for statements
    /// written by code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// For a model-written statement: the first table it reads (for the entity of its
    /// rows), as the validator found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_table: Option<String>,
}

impl SqlRows {
    /// The value of column `column` in row `row`, if both exist.
    pub fn get(&self, row: usize, column: &str) -> Option<&Value> {
        let index = self.columns.iter().position(|c| c == column)?;
        self.rows.get(row)?.get(index)
    }
}

/// A column's type, as the prompt builder describes it to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Text.
    Text,
    /// Whole numbers.
    Integer,
    /// Numbers with a fraction (prices, areas).
    Real,
    /// `true` / `false`.
    Boolean,
    /// An ISO-8601 date or date-time, stored as text (`YYYY-MM-DD[THH:MM:SS]`).
    Date,
}

/// One column of a [`TableSchema`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSchema {
    /// Its name, as statements use it.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub column_type: ColumnType,
    /// What it holds, for the model (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

impl ColumnSchema {
    /// A column without a description.
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> Self {
        Self {
            name: name.into(),
            column_type,
            description: String::new(),
        }
    }

    /// The same column, described.
    #[must_use]
    pub fn described(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
}

/// A logical table a statement may read: the "schema context" of a SQL prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSchema {
    /// Its name, as statements use it (e.g. `rooms`).
    pub name: String,
    /// What it holds, for the model (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its columns, in order.
    pub columns: Vec<ColumnSchema>,
}

impl TableSchema {
    /// A table without a description.
    pub fn new(name: impl Into<String>, columns: Vec<ColumnSchema>) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            columns,
        }
    }

    /// The same table, described.
    #[must_use]
    pub fn described(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
}

/// Runs read-only statements over one site's logical tables.
///
/// Errors: [`Invalid`](crate::error::ServiceErrorKind::Invalid) for a statement the backend
/// refuses (a syntax error, an unknown table or column, anything but a `SELECT`) — its
/// detail names only what the statement said and the scope's own tables, so a template may
/// feed it back to the model as a tool error; [`Unavailable`](crate::error::ServiceErrorKind::Unavailable)
/// when the backend cannot be reached.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait SqlReader {
    /// Runs `query` over `scope`'s tables; returns at most `max_rows` rows, with
    /// [`SqlRows::truncated`] set when the result had more.
    async fn query(
        &self,
        scope: SqlScope<'_>,
        query: &ReadOnlyQuery,
        max_rows: usize,
    ) -> Result<SqlRows, ServiceError>;

    /// The logical tables `scope` may read, in a stable order (what the SQL prompt
    /// describes; a site with no data has none).
    async fn schema(&self, scope: SqlScope<'_>) -> Result<Vec<TableSchema>, ServiceError>;
}

impl<T: SqlReader + ?Sized> SqlReader for &T {
    async fn query(
        &self,
        scope: SqlScope<'_>,
        query: &ReadOnlyQuery,
        max_rows: usize,
    ) -> Result<SqlRows, ServiceError> {
        (**self).query(scope, query, max_rows).await
    }
    async fn schema(&self, scope: SqlScope<'_>) -> Result<Vec<TableSchema>, ServiceError> {
        (**self).schema(scope).await
    }
}
