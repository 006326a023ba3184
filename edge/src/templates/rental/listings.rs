//! Read-only SQL over a rental site's listings, in their own object
//! ([`ListingsObject`](crate::site_object::listings::ListingsObject), one per rental site):
//! the [`SqlReader`] the `rental` template queries, and the merchant's bulk upserts.
//!
//! Every statement is validated here, once, right before it runs: the validator (a real
//! parser, allow-lists, scoping, a cost budget: `concierge_core::flows::rental::sql`) runs
//! in its own Worker, `concierge-sql` (sqlcheck/), reached through the `SQL_CHECK`
//! service binding, so this Worker's wasm holds no SQL parser (issue 29). Only the
//! statement the validator returns (re-serialised, never the model's text) runs, inside
//! [`RentalSchema::scoped_sql`]: the logical tables are CTEs over `rental_rows` filtered by
//! the bound site id (`?1`), the row cap is bound (`?2`), and `my_rooms` by the bound user
//! id (`?3`). The listings' object holds nothing else, and rolls back whatever a statement
//! would write. Without the validator (binding
//! missing, unreachable, or an answer that is not its JSON) nothing runs: the reader is
//! `Unavailable` and the turn fails.

use concierge_core::boundary::{ReadOnlyQuery, SqlReader, SqlRows, SqlScope, TableSchema};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::flows::rental::schema::{MAX_ROWS_PER_TABLE, RentalSchema, Table};
use concierge_core::flows::rental::sql::error_sentence;
use serde::Deserialize;
use worker::{Env, Fetcher, Headers, Method, RequestInit};

use crate::error::ApiError;
use crate::site_object::listings::{self, ListingsCall, Rows};

/// The SQL validator Worker's service binding (`concierge-sql`, sqlcheck/).
pub(crate) const SQL_CHECK: &str = "SQL_CHECK";

/// The URL the validator is called at (a service binding ignores the host).
const SQL_CHECK_URL: &str = "https://concierge-sql/check";

/// A site's listings, read through its logical schema.
#[derive(Debug)]
pub(crate) struct ListingsSql {
    env: Env,
    checker: Option<Fetcher>,
    schema: RentalSchema,
}

/// What the validator Worker answers for an accepted statement.
#[derive(Debug, Deserialize)]
struct Accepted {
    sql: String,
    first_table: Option<String>,
}

/// What it answers for a refused one (and for a request it could not read).
#[derive(Debug, Deserialize)]
struct Refused {
    error: RefusedError,
}

#[derive(Debug, Deserialize)]
struct RefusedError {
    code: String,
    message: String,
}

impl ListingsSql {
    /// The listings of the site whose schema is `schema`.
    pub(crate) fn new(env: &Env, schema: RentalSchema) -> Self {
        Self {
            env: env.clone(),
            checker: env.service(SQL_CHECK).ok(),
            schema,
        }
    }
}

fn invalid(detail: impl Into<String>) -> ServiceError {
    ServiceError::new(ServiceErrorKind::Invalid, detail)
}

fn unavailable(detail: impl Into<String>) -> ServiceError {
    ServiceError::new(ServiceErrorKind::Unavailable, detail)
}

impl ListingsSql {
    /// `sql`, validated against `catalog` by the validator Worker: the statement to run and
    /// its first table, or `Invalid` with the validator's sentence (for the model's next
    /// attempt). Anything else — no binding, no answer, an answer that is not the
    /// validator's — is `Unavailable`: nothing runs unvalidated.
    async fn validate(
        &self,
        sql: &str,
        catalog: &[Table],
    ) -> Result<(String, Option<String>), ServiceError> {
        let checker = self.checker.as_ref().ok_or_else(|| {
            unavailable("the SQL validator Worker (SQL_CHECK service binding) is not bound")
        })?;
        let body = serde_json::json!({"sql": sql, "catalog": catalog}).to_string();
        let headers = Headers::new();
        let _ = headers.set("content-type", "application/json");
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body.into()));
        let unreachable = |e: worker::Error| {
            worker::console_error!("the SQL validator Worker failed: {e}");
            unavailable(format!("the SQL validator Worker failed: {e}"))
        };
        let mut response = checker
            .fetch(SQL_CHECK_URL, Some(init))
            .await
            .map_err(unreachable)?;
        let status = response.status_code();
        let text = response.text().await.map_err(unreachable)?;
        match status {
            200 => {
                let accepted: Accepted = serde_json::from_str(&text)
                    .map_err(|e| unavailable(format!("the SQL validator Worker's answer: {e}")))?;
                Ok((accepted.sql, accepted.first_table))
            }
            422 => match serde_json::from_str::<Refused>(&text) {
                Ok(refused) if refused.error.code == "invalid_sql" => {
                    Err(invalid(refused.error.message))
                }
                _ => Err(unavailable(
                    "the SQL validator Worker's refusal is unreadable",
                )),
            },
            _ => {
                worker::console_error!("the SQL validator Worker answered {status}: {text}");
                Err(unavailable(format!(
                    "the SQL validator Worker answered {status}"
                )))
            }
        }
    }
}

impl SqlReader for ListingsSql {
    async fn query(
        &self,
        scope: SqlScope<'_>,
        query: &ReadOnlyQuery,
        max_rows: usize,
    ) -> Result<SqlRows, ServiceError> {
        if !query.params().is_empty() {
            return Err(invalid("listings statements take no parameters"));
        }
        let signed_in = scope.user_id.is_some();
        let catalog = self.schema.catalog(signed_in);
        let (valid, first_table) = self.validate(query.sql(), &catalog).await?;
        let run = ListingsCall::Query(
            self.schema.scoped_sql(&valid, signed_in),
            (max_rows + 1) as u32,
            scope.user_id.map(str::to_string),
        );
        let Rows(columns, mut rows, failure) = listings::call(&self.env, scope.site_id, run)
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if let Some(raw) = failure {
            return Err(failed(&raw));
        }
        let truncated = rows.len() > max_rows;
        rows.truncate(max_rows);
        Ok(SqlRows {
            columns,
            rows,
            truncated,
            statement: Some(valid),
            first_table,
        })
    }

    async fn schema(&self, scope: SqlScope<'_>) -> Result<Vec<TableSchema>, ServiceError> {
        Ok(self.schema.table_schemas(scope.user_id.is_some()))
    }
}

/// A failed statement, as a sentence the SQL model can act on: SQLite's message names the
/// scoped statement's internals (the physical table, its JSON columns), so the model gets
/// [`error_sentence`] instead (the raw message goes to the Worker's log).
fn failed(raw: &str) -> ServiceError {
    worker::console_warn!("listings statement failed: {raw}");
    invalid(error_sentence(raw))
}

/// Why a bulk upsert did not happen.
#[derive(Debug)]
pub(crate) enum UpsertError {
    /// The site would hold more than [`MAX_ROWS_PER_TABLE`] listings of this entity.
    Full,
    /// The listings' object failed.
    Store(ApiError),
}

/// Bulk upsert of one entity's listings of a site, all or nothing.
///
/// A site holds at most [`MAX_ROWS_PER_TABLE`] listings of each entity: the SQL cost
/// model's row bound depends on it. The object counts the rows as the upsert left them in
/// the upsert's own transaction and rolls it back when they are over the bound, so
/// concurrent upserts cannot pass it together.
pub(crate) async fn upsert(
    env: &Env,
    site_id: &str,
    entity: &str,
    rows: Vec<(String, String)>,
    now: u64,
) -> Result<(), UpsertError> {
    let upsert = ListingsCall::Upsert(entity.to_string(), rows, now, MAX_ROWS_PER_TABLE);
    let over: bool = listings::call(env, site_id, upsert)
        .await
        .map_err(UpsertError::Store)?;
    if over {
        return Err(UpsertError::Full);
    }
    Ok(())
}

/// How many listings the site holds of each entity (entities it holds none of are absent).
pub(crate) async fn counts(env: &Env, site_id: &str) -> Result<Vec<(String, u64)>, ApiError> {
    listings::call(env, site_id, ListingsCall::Counts).await
}

/// Deletes one listing; whether it existed.
pub(crate) async fn delete(
    env: &Env,
    site_id: &str,
    entity: &str,
    id: &str,
) -> Result<bool, ApiError> {
    let delete = ListingsCall::Delete(entity.to_string(), id.to_string());
    listings::call(env, site_id, delete).await
}
