//! The validator of model-written SQL (TEMPLATES.md §2.3): a real parser (`sqlparser`,
//! SQLite dialect) and allow-lists, deny by default.
//!
//! A statement is accepted only when:
//! - it parses as exactly one statement, a query, at most [`MAX_SQL_CHARS`] characters;
//! - it has no `WITH RECURSIVE`, no locking/`INTO`/`FOR`/settings clauses, no `VALUES`
//!   or `TABLE` bodies, no DML inside;
//! - every relation is a logical table the caller allows (`rooms`, …) or a CTE the
//!   statement defines (a CTE may not take a logical table's name, nor a forbidden one);
//!   one-part names only (`main.rooms` is refused), no table-valued functions, no hints;
//! - every function is on [`FUNCTIONS`] (one-part name, no window, no `FILTER`);
//! - every expression is of an allowed kind (identifiers of at most two parts, literals
//!   without bind parameters, the usual operators, `CASE`, `CAST`, `IN`, `BETWEEN`,
//!   `LIKE`, `IS [NOT] NULL`, subqueries, `EXISTS`).
//!
//! - names resolve with real scoping, and the statement's estimated work fits the budget
//!   ([`cost`]: no recursion with or without the keyword, no products of tables, no
//!   per-row subqueries over whole tables);
//! - text cannot grow without bound: `replace` never lengthens (literal pattern and a
//!   replacement no longer than it), `strftime` takes a literal format, at most
//!   [`MAX_CONCATS`] `||`, `group_concat` only in the outermost `SELECT`.
//!
//! What runs is the re-serialised AST ([`ValidSql::sql`]), never the raw text: comments
//! are gone, and the serialisation is checked to parse back to the same statement (no
//! parser differential between what was checked and what runs).
//!
//! The validator itself (`validate_in`, `validate`, `first_table`, the cost model) is the
//! `rental-sql` feature: the Worker runs it in its own Worker (`sqlcheck/`, behind the
//! `SQL_CHECK` service binding), so the main Worker's wasm holds no SQL parser (issue 29).
//! The `rental` feature alone keeps what the template's flow and the listings reader need
//! without parsing: the function allow-list, the limits, [`error_sentence`].

#[cfg(feature = "rental-sql")]
use alloc::string::String;

pub use crate::flows::rental::schema::Table;

#[cfg(feature = "rental-sql")]
mod cost;
mod d1;
#[cfg(feature = "rental-sql")]
mod scan;
#[cfg(feature = "rental-sql")]
mod validator;
#[cfg(feature = "rental-sql")]
mod walk;

#[cfg(feature = "rental-sql")]
pub use cost::{SORT, WORK_BUDGET};
pub use d1::error_sentence;
#[cfg(feature = "rental-sql")]
pub use validator::{first_table, validate, validate_in};
#[cfg(feature = "rental-sql")]
use validator::{forbidden, reject};

/// Longest accepted statement, in characters.
pub const MAX_SQL_CHARS: usize = 4000;

/// The functions a statement may call (lowercase).
pub const FUNCTIONS: [&str; 25] = [
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "total",
    "group_concat",
    "lower",
    "upper",
    "length",
    "substr",
    "trim",
    "replace",
    "coalesce",
    "ifnull",
    "nullif",
    "round",
    "abs",
    "cast",
    "date",
    "datetime",
    "strftime",
    "julianday",
    "instr",
    "like",
];

/// Most `||` operators in a statement (each may double a text through a CTE).
pub const MAX_CONCATS: usize = 4;

/// A statement the validator accepted, re-serialised.
#[cfg(feature = "rental-sql")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidSql {
    sql: String,
    first_table: Option<String>,
}

#[cfg(feature = "rental-sql")]
impl ValidSql {
    /// The statement to run (the re-serialised AST; never the model's raw text).
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The first table the statement reads (for the entity of its rows).
    pub fn first_table(&self) -> Option<&str> {
        self.first_table.as_deref()
    }
}

/// Why a statement was refused (fed back to the model as the next attempt's error).
#[cfg(feature = "rental-sql")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRejection(pub String);

#[cfg(feature = "rental-sql")]
impl core::fmt::Display for SqlRejection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}
