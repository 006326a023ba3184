//! The store's reads and writes of visitors' feedback on answers (`message_feedback`,
//! migration 0011).

use concierge_core::conversation::Scope;
use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::d1_store::{D1Store, service_error};

/// One vote as stored.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct FeedbackRow {
    pub conversation_id: String,
    pub message_id: String,
    pub voter: String,
    /// 1 (up) or -1 (down).
    pub rating: f64,
    pub comment: Option<String>,
    pub updated_at: f64,
    /// The answer voted on (site listings only).
    #[serde(default)]
    pub answer: Option<String>,
}

impl D1Store {
    /// Store `voter`'s vote on assistant message `message_id` of the conversation,
    /// replacing an earlier one. `false` when the conversation has no such assistant
    /// message.
    pub(crate) async fn put_feedback(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        voter: &str,
        rating: i8,
        comment: Option<&str>,
        now_ms: u64,
    ) -> Result<bool, ServiceError> {
        let result = self
            .db()
            .prepare(
                "INSERT INTO message_feedback \
                 (site_id, conversation_id, message_id, voter, rating, comment, created_at, updated_at) \
                 SELECT ?1, ?2, id, ?4, ?5, ?6, ?7, ?7 FROM messages \
                 WHERE id = ?3 AND conversation_id = ?2 AND site_id = ?1 AND role = 'assistant' \
                 ON CONFLICT (message_id, voter) DO UPDATE SET \
                 rating = excluded.rating, comment = excluded.comment, updated_at = excluded.updated_at",
            )
            .bind(&[
                scope.site_id.into(),
                scope.conversation_id.into(),
                message_id.into(),
                voter.into(),
                JsValue::from_f64(f64::from(rating)),
                comment.map_or(JsValue::NULL, JsValue::from),
                JsValue::from_f64(now_ms as f64),
            ])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        Ok(result
            .meta()
            .map_err(service_error)?
            .and_then(|m| m.changes)
            .unwrap_or(0)
            > 0)
    }

    /// `voter`'s votes in the conversation.
    pub(crate) async fn conversation_feedback(
        &self,
        scope: Scope<'_>,
        voter: &str,
    ) -> Result<Vec<FeedbackRow>, ServiceError> {
        self.reader(scope)?
            .db()
            .prepare(
                "SELECT conversation_id, message_id, voter, rating, comment, updated_at \
                 FROM message_feedback WHERE site_id = ?1 AND conversation_id = ?2 AND voter = ?3",
            )
            .bind(&[
                scope.site_id.into(),
                scope.conversation_id.into(),
                voter.into(),
            ])
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)
    }

    /// The site's most recent votes, newest first, with the answers voted on.
    pub(crate) async fn site_feedback(
        &self,
        site_id: &str,
        limit: u32,
    ) -> Result<Vec<FeedbackRow>, ServiceError> {
        self.site_reader(site_id)?
            .db()
            .prepare(
                "SELECT f.conversation_id, f.message_id, f.voter, f.rating, f.comment, \
                 f.updated_at, m.content AS answer \
                 FROM message_feedback f JOIN messages m ON m.id = f.message_id \
                 WHERE f.site_id = ?1 ORDER BY f.updated_at DESC LIMIT ?2",
            )
            .bind(&[site_id.into(), JsValue::from_f64(f64::from(limit))])
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)
    }
}
