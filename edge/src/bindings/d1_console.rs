//! The store's reads for the merchant console: a site's recent conversations with what a
//! merchant looks for first (how many messages, answers cut short, whether the last
//! visitor message went unanswered, votes down).

use concierge_core::error::ServiceError;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::d1_console_stats::{ConversationFilter, FILTER_SQL};
use super::d1_store::{D1Store, service_error};

/// One conversation in the console's list.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ConversationSummary {
    pub id: String,
    pub user_id: Option<String>,
    /// Whether `user_id` is proven: the conversation is bound to an identity (a signed
    /// user token's, or one the secret key stated), not a label a public-key caller gave.
    #[serde(deserialize_with = "flag")]
    pub user_id_verified: bool,
    pub language: String,
    /// The template that answered it (`None`: created before templates were recorded).
    pub template: Option<String>,
    pub created_at: f64,
    pub updated_at: f64,
    /// Stored messages (the greeting included).
    pub messages: f64,
    /// Answers stored with `incomplete: true` (cut short by a failure).
    pub incomplete: f64,
    /// The role of the last stored message: `user` means the last turn has no answer
    /// (failed, or still running).
    pub last_role: Option<String>,
    /// The visitor's first message, as a preview.
    pub first_question: Option<String>,
    /// Votes down on this conversation's answers.
    pub down_votes: f64,
}

/// A SQL truth value (0 or 1) as a `bool`.
fn flag<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(f64::deserialize(deserializer)? != 0.0)
}

impl D1Store {
    /// The site's `limit` most recently active conversations that `filter` takes (never
    /// one without a visitor message), newest first.
    pub(crate) async fn recent_conversations(
        &self,
        site_id: &str,
        filter: &ConversationFilter,
        limit: u32,
    ) -> Result<Vec<ConversationSummary>, ServiceError> {
        let mut params = filter.params(site_id);
        params.push(JsValue::from_f64(f64::from(limit)));
        let statement = self.site_reader(site_id)?
            .db()
            .prepare(format!(
                "SELECT c.id, c.user_id, (c.user_id IS NOT NULL AND c.identity IS NOT NULL) \
                 AS user_id_verified, c.language, c.template, c.created_at, c.updated_at, \
                 (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND +m.site_id = ?1) AS messages, \
                 (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND +m.site_id = ?1 \
                    AND json_extract(m.metadata, '$.incomplete') = 1) AS incomplete, \
                 (SELECT m.role FROM messages m WHERE m.conversation_id = c.id AND +m.site_id = ?1 \
                    ORDER BY m.seq DESC LIMIT 1) AS last_role, \
                 (SELECT substr(m.content, 1, 120) FROM messages m WHERE m.conversation_id = c.id \
                    AND +m.site_id = ?1 AND +m.role = 'user' ORDER BY m.seq LIMIT 1) AS first_question, \
                 (SELECT COUNT(*) FROM message_feedback f WHERE f.conversation_id = c.id AND +f.site_id = ?1 \
                    AND f.rating < 0) AS down_votes \
                 FROM conversations c WHERE {FILTER_SQL} \
                 ORDER BY c.updated_at DESC, c.id LIMIT ?8"
            ))
            .bind(&params)
            .map_err(service_error)?;
        let result = statement.all().await.map_err(service_error)?;
        result.results().map_err(service_error)
    }
}
