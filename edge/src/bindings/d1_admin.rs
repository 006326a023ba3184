//! The store's writes for admin routes: deleting a conversation (and which vector ids its
//! messages own), and bulk warranty uploads.

use concierge_core::boundary::WarrantyRecord;
use concierge_core::conversation::Scope;
use concierge_core::error::ServiceError;
use concierge_core::retrieval;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::d1_caps::{self, CapError};
use super::d1_store::{D1Store, service_error};
use crate::site::caps::Caps;

#[derive(Debug, Deserialize)]
struct MessageChunks {
    id: String,
    chunk_count: f64,
}

fn vector_ids(rows: Vec<MessageChunks>) -> Vec<String> {
    rows.iter()
        .flat_map(|r| (0..r.chunk_count as usize).map(|i| retrieval::chunk_id(&r.id, i)))
        .collect()
}

impl D1Store {
    /// The vector ids the conversation's messages own; `None` when the conversation does
    /// not exist on this site. One D1 batch.
    pub(crate) async fn conversation_vector_ids(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Vec<String>>, ServiceError> {
        let db = self.db();
        let scoped = [scope.conversation_id.into(), scope.site_id.into()];
        let statements = vec![
            db.prepare("SELECT id FROM conversations WHERE id = ?1 AND site_id = ?2")
                .bind(&scoped)
                .map_err(service_error)?,
            db.prepare(
                "SELECT id, chunk_count FROM messages WHERE conversation_id = ?1 AND site_id = ?2",
            )
            .bind(&scoped)
            .map_err(service_error)?,
        ];
        let results = db.batch(statements).await.map_err(service_error)?;
        let [conversation, messages] = results.as_slice() else {
            return Err(short_batch());
        };
        if conversation
            .results::<serde_json::Value>()
            .map_err(service_error)?
            .is_empty()
        {
            return Ok(None);
        }
        Ok(Some(vector_ids(
            messages.results::<MessageChunks>().map_err(service_error)?,
        )))
    }

    /// Delete the conversation, its messages and summary, in one transaction; the vector
    /// ids its messages owned at that moment, or `None` when it did not exist.
    pub(crate) async fn delete_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Vec<String>>, ServiceError> {
        let db = self.db();
        let scoped = [scope.conversation_id.into(), scope.site_id.into()];
        // Dependants explicitly: ON DELETE CASCADE needs foreign keys on.
        let statements = vec![
            db.prepare("DELETE FROM conversations WHERE id = ?1 AND site_id = ?2 RETURNING id")
                .bind(&scoped)
                .map_err(service_error)?,
            db.prepare(
                "DELETE FROM messages WHERE conversation_id = ?1 AND site_id = ?2 \
                 RETURNING id, chunk_count",
            )
            .bind(&scoped)
            .map_err(service_error)?,
            db.prepare("DELETE FROM summaries WHERE conversation_id = ?1 AND site_id = ?2")
                .bind(&scoped)
                .map_err(service_error)?,
        ];
        let results = db.batch(statements).await;
        super::d1_store::remembered::forget(scope);
        let results = results.map_err(service_error)?;
        let [conversation, messages, ..] = results.as_slice() else {
            return Err(short_batch());
        };
        let existed = !conversation
            .results::<serde_json::Value>()
            .map_err(service_error)?
            .is_empty();
        let ids = vector_ids(messages.results::<MessageChunks>().map_err(service_error)?);
        Ok(existed.then_some(ids))
    }

    /// Insert or replace warranty records of a site, all in one transaction. Serials are
    /// unique per site whatever their letter case (the column collates `NOCASE`): a record
    /// replaces the one with the same serial in any case, taking its spelling.
    ///
    /// Refused whole ([`CapError::Over`]) when the site would hold more records than its cap.
    pub(crate) async fn upsert_warranty(
        &self,
        site_id: &str,
        records: &[WarrantyRecord],
        caps: &Caps,
    ) -> Result<(), CapError> {
        let db = self.db();
        let mut statements = records
            .iter()
            .map(|record| {
                db.prepare(
                    "INSERT INTO warranty_records (site_id, serial, product, warranty_until) \
                     VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (site_id, serial) DO UPDATE SET serial = excluded.serial, \
                     product = excluded.product, warranty_until = excluded.warranty_until",
                )
                .bind(&[
                    site_id.into(),
                    record.serial.as_str().into(),
                    record.product.as_str().into(),
                    JsValue::from(record.warranty_until.iso()),
                ])
                .map_err(service_error)
            })
            .collect::<Result<Vec<_>, _>>()?;
        statements.push(d1_caps::warranty_guard(db, site_id, caps)?);
        db.batch(statements).await.map_err(CapError::from_batch)?;
        Ok(())
    }
}

fn short_batch() -> ServiceError {
    ServiceError::new(
        concierge_core::error::ServiceErrorKind::Other,
        "D1 batch answered too few results",
    )
}
