//! Read-only SQL over a rental site's listings, on their own D1 database (`LISTINGS`):
//! the [`SqlReader`] the `rental` template queries, and the merchant's bulk upserts.
//!
//! Every statement is validated again here (defence in depth: the same allow-lists as the
//! template), then runs inside [`RentalSchema::scoped_sql`]: the logical tables are CTEs
//! over `rental_rows` filtered by the bound site id (`?1`), the row cap is bound (`?2`),
//! and `my_rooms` by the bound user id (`?3`). The listings database holds nothing else.

use concierge_core::boundary::{ReadOnlyQuery, SqlReader, SqlRows, SqlScope, TableSchema};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::flows::rental::schema::{MAX_ROWS_PER_TABLE, RentalSchema};
use concierge_core::flows::rental::sql::{error_sentence, validate_in};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use worker::{D1Database, Env};

use super::d1_store::service_error;

/// The listings binding.
pub(crate) const BINDING: &str = "LISTINGS";

/// A site's listings, read through its logical schema.
#[derive(Debug)]
pub(crate) struct ListingsSql {
    db: Option<D1Database>,
    schema: RentalSchema,
}

impl ListingsSql {
    /// The listings of the site whose schema is `schema` (no binding: every call is
    /// `Unavailable`).
    pub(crate) fn new(env: &Env, schema: RentalSchema) -> Self {
        Self {
            db: env.d1(BINDING).ok(),
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
        let valid = validate_in(query.sql(), &catalog).map_err(|r| invalid(r.0))?;
        let sql = self.schema.scoped_sql(valid.sql(), signed_in);
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
            return Ok(SqlRows::default());
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

/// What D1 answers when the batch's guard fires (see [`upsert`]).
const FULL_GUARD: &str = "malformed JSON";

/// Bulk upsert of one entity's listings of a site (one D1 batch: all or nothing).
///
/// A site holds at most [`MAX_ROWS_PER_TABLE`] listings of each entity: the SQL cost
/// model's row bound depends on it. The batch ends with a guard that counts the rows as
/// the upsert left them and fails (D1 rolls the whole batch back) when they are over the
/// bound, so concurrent upserts cannot pass it together. SQLite's `raise()` works only in
/// triggers; `json('over')` fails the same way wherever it is evaluated.
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
        db.prepare(
            "SELECT json(CASE WHEN (SELECT count(*) FROM rental_rows WHERE site_id = ?1 AND entity = ?2) > ?3 \
             THEN 'over' ELSE '0' END) AS guard",
        )
        .bind(&[
            site_id.into(),
            entity.into(),
            JsValue::from_f64(MAX_ROWS_PER_TABLE as f64),
        ])
        .map_err(store)?,
    );
    match db.batch(statements).await {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains(FULL_GUARD) => Err(UpsertError::Full),
        Err(e) => Err(store(e)),
    }
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
