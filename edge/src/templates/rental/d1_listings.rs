//! Read-only SQL over a rental site's listings, on their own D1 database (`LISTINGS`):
//! the [`SqlReader`] the `rental` template queries, and the merchant's bulk upserts.
//!
//! Every statement is validated here, once, right before it runs: the validator (a real
//! parser, allow-lists, scoping, a cost budget: `concierge_core::flows::rental::sql`) runs
//! in its own Worker, `concierge-sql` (sqlcheck/), reached through the `SQL_CHECK`
//! service binding, so this Worker's wasm holds no SQL parser (issue 29). Only the
//! statement the validator returns (re-serialised, never the model's text) runs, inside
//! [`RentalSchema::scoped_sql`]: the logical tables are CTEs over `rental_rows` filtered by
//! the bound site id (`?1`), the row cap is bound (`?2`), and `my_rooms` by the bound user
//! id (`?3`). The listings database holds nothing else. Without the validator (binding
//! missing, unreachable, or an answer that is not its JSON) nothing runs: the reader is
//! `Unavailable` and the turn fails.

use concierge_core::boundary::{ReadOnlyQuery, SqlReader, SqlRows, SqlScope, TableSchema};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::flows::rental::schema::{MAX_ROWS_PER_TABLE, RentalSchema, Table};
use concierge_core::flows::rental::sql::error_sentence;
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use worker::{D1Database, Env, Fetcher, Headers, Method, RequestInit};

use crate::bindings::d1_caps;
use crate::bindings::d1_store::service_error;

/// The listings binding.
pub(crate) const BINDING: &str = "LISTINGS";

/// The SQL validator Worker's service binding (`concierge-sql`, sqlcheck/).
pub(crate) const SQL_CHECK: &str = "SQL_CHECK";

/// The URL the validator is called at (a service binding ignores the host).
const SQL_CHECK_URL: &str = "https://concierge-sql/check";

/// A site's listings, read through its logical schema.
#[derive(Debug)]
pub(crate) struct ListingsSql {
    db: Option<D1Database>,
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
    /// The listings of the site whose schema is `schema` (no binding: every call is
    /// `Unavailable`).
    pub(crate) fn new(env: &Env, schema: RentalSchema) -> Self {
        Self {
            db: env.d1(BINDING).ok(),
            checker: env.service(SQL_CHECK).ok(),
            schema,
        }
    }

    fn db(&self) -> Result<&D1Database, ServiceError> {
        self.db.as_ref().ok_or_else(|| {
            ServiceError::new(
                ServiceErrorKind::Unavailable,
                "the LISTINGS database is not bound",
            )
        })
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
        let sql = self.schema.scoped_sql(&valid, signed_in);
        let mut params: Vec<JsValue> = vec![
            scope.site_id.into(),
            JsValue::from_f64((max_rows + 1) as f64),
        ];
        if let Some(user) = scope.user_id {
            params.push(user.into());
        }
        let statement = self
            .db()?
            .prepare(sql)
            .bind(&params)
            .map_err(service_error)?;
        // `raw({columnNames: true})`: the first row names the columns, in order.
        let inner = statement.inner();
        let raw = js_sys::Reflect::get(inner, &"raw".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| ServiceError::new(ServiceErrorKind::Unavailable, "D1 raw() missing"))?;
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &"columnNames".into(), &JsValue::TRUE);
        let promise = raw
            .call1(inner, &options)
            .map_err(|e| failed(&e))?
            .dyn_into::<js_sys::Promise>()
            .map_err(|_| invalid("D1 raw() did not return a promise"))?;
        let result = wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .map_err(|e| failed(&e))?;
        let json = js_sys::JSON::stringify(&result)
            .ok()
            .and_then(|s| s.as_string())
            .unwrap_or_default();
        let mut all: Vec<Vec<Value>> =
            serde_json::from_str(&json).map_err(|e| invalid(e.to_string()))?;
        if all.is_empty() {
            return Ok(SqlRows {
                statement: Some(valid),
                first_table,
                ..SqlRows::default()
            });
        }
        let columns = all
            .remove(0)
            .into_iter()
            .map(|c| c.as_str().unwrap_or_default().to_string())
            .collect();
        let truncated = all.len() > max_rows;
        all.truncate(max_rows);
        Ok(SqlRows {
            columns,
            rows: all,
            truncated,
            statement: Some(valid),
            first_table,
        })
    }

    async fn schema(&self, scope: SqlScope<'_>) -> Result<Vec<TableSchema>, ServiceError> {
        Ok(self.schema.table_schemas(scope.user_id.is_some()))
    }
}

/// A failed statement, as a sentence the SQL model can act on: D1's message names the
/// scoped statement's internals (offsets, the physical table, its JSON columns), so the
/// model gets [`error_sentence`] instead (the raw message goes to the Worker's log).
fn failed(error: &JsValue) -> ServiceError {
    let raw = js_text(error);
    worker::console_warn!("listings statement failed: {raw}");
    invalid(error_sentence(&raw))
}

/// A JS error's message.
fn js_text(error: &JsValue) -> String {
    js_sys::Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "D1 error".into())
}

/// Why a bulk upsert did not happen.
#[derive(Debug)]
pub(crate) enum UpsertError {
    /// The site would hold more than [`MAX_ROWS_PER_TABLE`] listings of this entity.
    Full,
    /// D1 failed.
    Store(ServiceError),
}

/// Bulk upsert of one entity's listings of a site (one D1 batch: all or nothing).
///
/// A site holds at most [`MAX_ROWS_PER_TABLE`] listings of each entity: the SQL cost
/// model's row bound depends on it. The batch ends with a guard that counts the rows as
/// the upsert left them and fails (D1 rolls the whole batch back) when they are over the
/// bound, so concurrent upserts cannot pass it together ([`d1_caps::guard`]).
pub(crate) async fn upsert(
    db: &D1Database,
    site_id: &str,
    entity: &str,
    rows: &[(String, String)],
    now: u64,
) -> Result<(), UpsertError> {
    let store = |e| UpsertError::Store(service_error(e));
    let mut statements = Vec::with_capacity(rows.len() + 1);
    for (id, data) in rows {
        let params = [
            site_id.into(),
            entity.into(),
            id.as_str().into(),
            data.as_str().into(),
            JsValue::from_f64(now as f64),
        ];
        statements.push(
            db.prepare(
                "INSERT INTO rental_rows (site_id, entity, id, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (site_id, entity, id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
            )
            .bind(&params)
            .map_err(store)?,
        );
    }
    statements.push(
        d1_caps::guard(
            db,
            "(SELECT count(*) FROM rental_rows WHERE site_id = ?1 AND entity = ?2) > ?3",
            &[
                site_id.into(),
                entity.into(),
                JsValue::from_f64(MAX_ROWS_PER_TABLE as f64),
            ],
        )
        .map_err(UpsertError::Store)?,
    );
    match db.batch(statements).await {
        Ok(_) => Ok(()),
        Err(e) if d1_caps::is_over(&e) => Err(UpsertError::Full),
        Err(e) => Err(store(e)),
    }
}

#[derive(Debug, Deserialize)]
struct EntityCount {
    entity: String,
    n: f64,
}

/// How many listings the site holds of each entity (entities it holds none of are absent).
pub(crate) async fn counts(
    db: &D1Database,
    site_id: &str,
) -> Result<Vec<(String, u64)>, ServiceError> {
    let rows: Vec<EntityCount> = db
        .prepare("SELECT entity, count(*) AS n FROM rental_rows WHERE site_id = ?1 GROUP BY entity")
        .bind(&[site_id.into()])
        .map_err(service_error)?
        .all()
        .await
        .map_err(service_error)?
        .results()
        .map_err(service_error)?;
    Ok(rows.into_iter().map(|r| (r.entity, r.n as u64)).collect())
}

/// Deletes one listing; whether it existed.
pub(crate) async fn delete(
    db: &D1Database,
    site_id: &str,
    entity: &str,
    id: &str,
) -> Result<bool, ServiceError> {
    let result = db
        .prepare("DELETE FROM rental_rows WHERE site_id = ?1 AND entity = ?2 AND id = ?3")
        .bind(&[site_id.into(), entity.into(), id.into()])
        .map_err(service_error)?
        .run()
        .await
        .map_err(service_error)?;
    let changes = result
        .meta()
        .ok()
        .flatten()
        .and_then(|m| m.changes)
        .unwrap_or(0);
    Ok(changes > 0)
}
