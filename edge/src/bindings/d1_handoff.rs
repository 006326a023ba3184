//! Handoff columns of `conversations` (migration 0018): written by the conversation's
//! object whenever its handoff state changes, read by the console's list. Every statement
//! is scoped to one site, with bound parameters.

use concierge_core::conversation::Scope;
use concierge_core::handoff::HandoffState;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::D1Database;

/// The most conversations the console's list shows.
pub(crate) const MAX_LISTED: u32 = 200;

/// A conversation's handoff as the object records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HandoffRecord {
    /// Where it stands.
    pub state: HandoffState,
    /// When the visitor asked (Unix ms): set while waiting and held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<u64>,
    /// When the current state began (Unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// The person holding it (display name), while held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl Default for HandoffRecord {
    fn default() -> Self {
        Self {
            state: HandoffState::None,
            requested_at: None,
            since: None,
            agent: None,
        }
    }
}

fn opt_ms(value: Option<u64>) -> JsValue {
    value.map_or(JsValue::NULL, |ms| JsValue::from_f64(ms as f64))
}

/// Records `record` on conversation `scope`; whether the conversation exists on the site.
pub(crate) async fn save(
    db: &D1Database,
    scope: Scope<'_>,
    record: &HandoffRecord,
) -> worker::Result<bool> {
    let result = db
        .prepare(
            "UPDATE conversations SET handoff_state = ?3, handoff_requested_at = ?4, \
             handoff_since = ?5, handoff_agent = ?6 WHERE site_id = ?1 AND id = ?2",
        )
        .bind(&[
            scope.site_id.into(),
            scope.conversation_id.into(),
            record.state.as_str().into(),
            opt_ms(record.requested_at),
            opt_ms(record.since),
            record
                .agent
                .as_deref()
                .map_or(JsValue::NULL, JsValue::from_str),
        ])?
        .run()
        .await?;
    Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0) > 0)
}

#[derive(Debug, Deserialize)]
struct RecordRow {
    handoff_state: String,
    handoff_requested_at: Option<f64>,
    handoff_since: Option<f64>,
    handoff_agent: Option<String>,
}

/// Conversation `scope`'s recorded handoff; `None` when there is no such conversation on
/// the site.
pub(crate) async fn read(
    db: &D1Database,
    scope: Scope<'_>,
) -> worker::Result<Option<HandoffRecord>> {
    let row = db
        .prepare(
            "SELECT handoff_state, handoff_requested_at, handoff_since, handoff_agent \
             FROM conversations WHERE site_id = ?1 AND id = ?2",
        )
        .bind(&[scope.site_id.into(), scope.conversation_id.into()])?
        .first::<RecordRow>(None)
        .await?;
    Ok(row.map(|row| HandoffRecord {
        state: HandoffState::parse(&row.handoff_state).unwrap_or_default(),
        requested_at: row.handoff_requested_at.map(|ms| ms as u64),
        since: row.handoff_since.map(|ms| ms as u64),
        agent: row.handoff_agent,
    }))
}

/// One conversation in the console's handoff list.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct HandoffRow {
    pub id: String,
    pub user_id: Option<String>,
    pub handoff_state: String,
    pub handoff_requested_at: Option<f64>,
    pub handoff_since: Option<f64>,
    pub handoff_agent: Option<String>,
    pub last_role: Option<String>,
    pub last_kind: Option<String>,
    /// The last message's first 200 characters.
    pub last_content: Option<String>,
    pub last_created_at: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Count {
    waiting: f64,
}

/// The site's conversations waiting for a person (oldest request first), then those a
/// person holds (oldest request first), at most `limit`; and how many are waiting.
pub(crate) async fn list(
    db: &D1Database,
    site_id: &str,
    limit: u32,
) -> worker::Result<(u64, Vec<HandoffRow>)> {
    let rows = db
        .prepare(
            "SELECT c.id, c.user_id, c.handoff_state, c.handoff_requested_at, c.handoff_since, \
             c.handoff_agent, m.role AS last_role, m.kind AS last_kind, \
             substr(m.content, 1, 200) AS last_content, m.created_at AS last_created_at \
             FROM conversations c LEFT JOIN messages m ON m.site_id = c.site_id \
               AND m.conversation_id = c.id \
               AND m.seq = (SELECT MAX(seq) FROM messages l WHERE l.site_id = c.site_id \
                            AND l.conversation_id = c.id) \
             WHERE c.site_id = ?1 AND c.handoff_state IN ('waiting', 'held') \
             ORDER BY CASE c.handoff_state WHEN 'waiting' THEN 0 ELSE 1 END, \
               c.handoff_requested_at, c.id LIMIT ?2",
        )
        .bind(&[site_id.into(), JsValue::from_f64(f64::from(limit))])?;
    let count = db
        .prepare(
            "SELECT COUNT(*) AS waiting FROM conversations \
             WHERE site_id = ?1 AND handoff_state = 'waiting'",
        )
        .bind(&[site_id.into()])?;
    let mut results = db.batch(vec![rows, count]).await?.into_iter();
    let rows = results
        .next()
        .map(|r| r.results::<HandoffRow>())
        .transpose()?
        .unwrap_or_default();
    let waiting = results
        .next()
        .map(|r| r.results::<Count>())
        .transpose()?
        .and_then(|c| c.into_iter().next())
        .map_or(0, |c| c.waiting as u64);
    Ok((waiting, rows))
}
