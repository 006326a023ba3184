//! The store's writes for admin routes: deleting a conversation (and which vector ids its
//! messages own).

use concierge_core::conversation::Scope;
use concierge_core::error::ServiceError;
use concierge_core::retrieval;
use serde::Deserialize;

use super::d1_store::{D1Store, service_error};

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
    /// not exist on this site. One batch.
    pub(crate) async fn conversation_vector_ids(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Vec<String>>, ServiceError> {
        let reader = self.reader(scope)?;
        let db = reader.db();
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
    /// ids its messages owned at that moment, or `None` when it did not exist. From the
    /// Worker: in the site's copy, then in the shared D1 (where a deployment's upgrade found
    /// it, if it did).
    pub(crate) async fn delete_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Vec<String>>, ServiceError> {
        let reader = self.site_reader(scope.site_id)?;
        let mut owned = delete_rows(reader.db(), scope).await?;
        if self.in_worker() {
            let before = delete_rows(self.shared(), scope).await?;
            owned = match (owned, before) {
                (Some(mut ids), Some(more)) => {
                    ids.extend(
                        more.into_iter()
                            .filter(|id| !ids.contains(id))
                            .collect::<Vec<_>>(),
                    );
                    Some(ids)
                }
                (owned, before) => owned.or(before),
            };
        }
        Ok(owned)
    }
}

/// Deletes `scope`'s conversation from `db` (see [`D1Store::delete_conversation`]).
async fn delete_rows(
    db: &worker::D1Database,
    scope: Scope<'_>,
) -> Result<Option<Vec<String>>, ServiceError> {
    {
        let scoped: [wasm_bindgen::JsValue; 2] =
            [scope.conversation_id.into(), scope.site_id.into()];
        // Dependants first and explicitly: ON DELETE CASCADE needs foreign keys on, and
        // with them on, the conversation's delete would take the messages' ids with it.
        let mut statements = Vec::new();
        for sql in [
            "DELETE FROM message_feedback WHERE conversation_id = ?1 AND site_id = ?2",
            "DELETE FROM messages WHERE conversation_id = ?1 AND site_id = ?2 \
             RETURNING id, chunk_count",
            "DELETE FROM summaries WHERE conversation_id = ?1 AND site_id = ?2",
            "DELETE FROM conversations WHERE id = ?1 AND site_id = ?2 RETURNING id",
        ] {
            statements.push(db.prepare(sql).bind(&scoped).map_err(service_error)?);
        }
        let results = db.batch(statements).await;
        super::d1_store::remembered::forget(scope);
        let results = results.map_err(service_error)?;
        let [_, messages, _, conversation] = results.as_slice() else {
            return Err(short_batch());
        };
        let existed = !conversation
            .results::<serde_json::Value>()
            .map_err(service_error)?
            .is_empty();
        let ids = vector_ids(messages.results::<MessageChunks>().map_err(service_error)?);
        Ok(existed.then_some(ids))
    }
}

fn short_batch() -> ServiceError {
    ServiceError::new(
        concierge_core::error::ServiceErrorKind::Other,
        "D1 batch answered too few results",
    )
}
