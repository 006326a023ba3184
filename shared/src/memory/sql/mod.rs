//! A [`SqlReader`] over tables in memory, answering a documented SQL subset honestly
//! (parsed and evaluated, never scripted).

mod eval;
mod parse;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use serde_json::Value;

use crate::boundary::{ReadOnlyQuery, SqlReader, SqlRows, SqlScope, TableSchema};
use crate::error::{ServiceError, ServiceErrorKind};

/// A table's schema and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryTable {
    schema: TableSchema,
    rows: Vec<Vec<Value>>,
}

impl MemoryTable {
    /// An empty table.
    pub fn new(schema: TableSchema) -> Self {
        Self {
            schema,
            rows: Vec::new(),
        }
    }

    /// The same table with one more row, given as a JSON object by column name (absent
    /// columns are `NULL`).
    ///
    /// # Panics
    /// If `row` is not an object or names a column the schema lacks (a mistake in the
    /// test that builds the table).
    #[must_use]
    pub fn row(mut self, row: Value) -> Self {
        let Value::Object(mut object) = row else {
            panic!("MemoryTable::row: a row is a JSON object");
        };
        let values = self
            .schema
            .columns
            .iter()
            .map(|column| object.remove(&column.name).unwrap_or(Value::Null))
            .collect();
        if let Some(unknown) = object.keys().next() {
            panic!(
                "MemoryTable::row: no column {unknown:?} in {}",
                self.schema.name
            );
        }
        self.rows.push(values);
        self
    }

    /// Its schema.
    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// Its rows, one value per column.
    pub fn rows(&self) -> &[Vec<Value>] {
        &self.rows
    }
}

/// One table and whose it is.
#[derive(Debug)]
struct Owned {
    site_id: String,
    /// `None`: the site's shared table; `Some`: visible to this user only.
    user_id: Option<String>,
    table: MemoryTable,
}

/// Read-only SQL over tables a test gives it, per site (and per user for user-scoped
/// tables), in this subset:
///
/// ```text
/// SELECT ( * | COUNT(*) [AS a] | column [AS a] {, column [AS a]} )
/// FROM table
/// [WHERE condition {AND condition}]
/// [ORDER BY column [ASC|DESC] {, column [ASC|DESC]}]
/// [LIMIT n [OFFSET m]] [;]
///
/// condition := column (= | == | != | <> | < | <= | > | >=) operand
///            | column [NOT] LIKE operand
///            | column IS [NOT] NULL
/// operand   := [-]integer | [-]decimal | 'text' | TRUE | FALSE | NULL | ?N | ?
/// ```
/// `?N` is the N-th bound parameter; a bare `?` is one more than the largest number used
/// before it, as in SQLite. Keywords and names are case-insensitive; names may be `"quoted"`. Comparisons follow
/// SQLite's storage classes without its type conversions: `NULL` compares as unknown (the
/// row is not kept), numbers (booleans as 1/0) sort before text, and a text never equals a
/// number. `LIKE` takes `%` and `_` and ignores ASCII case. `ORDER BY` puts `NULL`s first
/// in ascending order. Anything else is refused as `Invalid`.
///
/// A statement sees only its scope's tables: the site's shared tables plus, for a user,
/// that user's own (which shadow a shared table of the same name). Another site's or
/// user's table is "no such table", exactly as a table that does not exist. Results are
/// capped at `max_rows`, with `truncated` set when more rows matched (after the
/// statement's own `LIMIT`/`OFFSET`).
///
/// A model-written statement ([`ReadOnlyQuery::is_written`]) is checked first by the
/// validator given with [`MemorySql::with_written_check`] (the template's own, as the
/// Worker's readers run it) against the scope's tables; without one it is refused.
#[derive(Debug, Default)]
pub struct MemorySql {
    tables: RefCell<Vec<Owned>>,
    statements: RefCell<Vec<ReadOnlyQuery>>,
    unavailable: Cell<bool>,
    written: Option<WrittenCheck>,
}

/// A validator of model-written SQL: the statement and the scope's tables → the statement
/// to run and its first table, or the reason it is refused.
pub type WrittenCheck = fn(&str, &[TableSchema]) -> Result<(String, Option<String>), String>;

impl MemorySql {
    /// No tables.
    pub fn new() -> Self {
        Self::default()
    }

    /// No tables; model-written statements are validated by `check`.
    pub fn with_written_check(check: WrittenCheck) -> Self {
        Self {
            written: Some(check),
            ..Self::default()
        }
    }

    /// Adds (or replaces) a shared table of `site_id`.
    pub fn add_table(&self, site_id: &str, table: MemoryTable) {
        self.insert(site_id, None, table);
    }

    /// Adds (or replaces) a table of `site_id` only `user_id` sees.
    pub fn add_user_table(&self, site_id: &str, user_id: &str, table: MemoryTable) {
        self.insert(site_id, Some(user_id), table);
    }

    fn insert(&self, site_id: &str, user_id: Option<&str>, table: MemoryTable) {
        let mut tables = self.tables.borrow_mut();
        tables.retain(|owned| {
            !(owned.site_id == site_id
                && owned.user_id.as_deref() == user_id
                && owned.table.schema.name == table.schema.name)
        });
        tables.push(Owned {
            site_id: site_id.into(),
            user_id: user_id.map(Into::into),
            table,
        });
    }

    /// The statements run so far, in order (refused ones included).
    pub fn statements(&self) -> Vec<ReadOnlyQuery> {
        self.statements.borrow().clone()
    }

    /// Makes every later call fail with `Unavailable` (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }

    fn check(&self) -> Result<(), ServiceError> {
        if self.unavailable.get() {
            return Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory SQL set unavailable",
            ));
        }
        Ok(())
    }

    /// The tables `scope` sees, users' own first.
    fn visible(&self, scope: SqlScope<'_>) -> Vec<MemoryTable> {
        let tables = self.tables.borrow();
        let in_scope = |owned: &&Owned| owned.site_id == scope.site_id;
        let own: Vec<&Owned> = tables
            .iter()
            .filter(in_scope)
            .filter(|owned| owned.user_id.is_some() && owned.user_id.as_deref() == scope.user_id)
            .collect();
        let shared = tables.iter().filter(in_scope).filter(|owned| {
            owned.user_id.is_none()
                && !own.iter().any(|o| {
                    o.table
                        .schema
                        .name
                        .eq_ignore_ascii_case(&owned.table.schema.name)
                })
        });
        own.iter()
            .copied()
            .chain(shared)
            .map(|owned| owned.table.clone())
            .collect()
    }
}

fn invalid(detail: impl Into<String>) -> ServiceError {
    ServiceError::new(ServiceErrorKind::Invalid, detail)
}

impl SqlReader for MemorySql {
    async fn query(
        &self,
        scope: SqlScope<'_>,
        query: &ReadOnlyQuery,
        max_rows: usize,
    ) -> Result<SqlRows, ServiceError> {
        let tables = self.visible(scope);
        // A model-written statement is validated first, against the scope's own tables, as
        // the Worker's readers do; a refused one never runs (and is not recorded).
        let (query, statement, first_table) = if query.is_written() {
            let schemas: Vec<TableSchema> = tables.iter().map(|t| t.schema.clone()).collect();
            let check = self.written.ok_or_else(|| {
                invalid("model-written SQL needs a validator (MemorySql::with_written_check)")
            })?;
            let (sql, first_table) = check(query.sql(), &schemas).map_err(invalid)?;
            (ReadOnlyQuery::new(sql.clone()), Some(sql), first_table)
        } else {
            (query.clone(), None, None)
        };
        self.statements.borrow_mut().push(query.clone());
        self.check()?;
        let select = parse::parse(query.sql()).map_err(invalid)?;
        let table = tables
            .iter()
            .find(|t| t.schema.name.eq_ignore_ascii_case(&select.table))
            .ok_or_else(|| invalid(format!("no such table: {}", select.table)))?;
        let mut rows = eval::execute(table, &select, &query)?;
        let truncated = rows.rows.len() > max_rows;
        rows.rows.truncate(max_rows);
        rows.truncated = truncated;
        rows.statement = statement;
        rows.first_table = first_table;
        Ok(rows)
    }

    async fn schema(&self, scope: SqlScope<'_>) -> Result<Vec<TableSchema>, ServiceError> {
        self.check()?;
        Ok(self
            .visible(scope)
            .into_iter()
            .map(|table| table.schema)
            .collect())
    }
}
