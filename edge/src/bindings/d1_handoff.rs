//! Handoff columns of `conversations` (migration 0018): written by the conversation's
//! object whenever its handoff state changes, read by the console's list. Every statement
//! is scoped to one site, with bound parameters.

use concierge_core::conversation::Scope;
use concierge_core::handoff::HandoffState;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::D1Database;

/// The most conversations one page of the console's list shows.
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
    /// 1 when the conversation is bound to an identity (a signed user token's, or one the
    /// secret key stated): its `user_id` is proven, not a visitor's label.
    pub verified: Option<f64>,
    pub handoff_state: String,
    pub handoff_requested_at: Option<f64>,
    pub handoff_since: Option<f64>,
    pub handoff_agent: Option<String>,
    pub last_role: Option<String>,
    pub last_kind: Option<String>,
    /// The last message's first 200 characters.
    pub last_content: Option<String>,
    pub last_created_at: Option<f64>,
    /// The visitor's last own message (first 200 characters).
    pub visitor_last: Option<String>,
    /// The visitor's message before that one (first 200 characters).
    pub visitor_before: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Counts {
    waiting: f64,
    held: f64,
}

/// What the console's list counts: every conversation waiting for a person and every one a
/// person holds, however many the page shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Listed {
    pub waiting: u64,
    pub held: u64,
}

/// One page of the site's conversations waiting for a person (newest request first: a
/// flood of old requests cannot hide a new one), then those a person holds (newest request
/// first), `limit` from `offset`; with the true counts of both.
pub(crate) async fn list(
    db: &D1Database,
    site_id: &str,
    limit: u32,
    offset: u32,
) -> worker::Result<(Listed, Vec<HandoffRow>)> {
    let rows = db
        .prepare(
            "SELECT c.id, c.user_id, c.identity IS NOT NULL AS verified, c.handoff_state, \
             c.handoff_requested_at, c.handoff_since, \
             c.handoff_agent, m.role AS last_role, m.kind AS last_kind, \
             substr(m.content, 1, 200) AS last_content, m.created_at AS last_created_at, \
             (SELECT substr(u.content, 1, 200) FROM messages u WHERE u.site_id = c.site_id \
               AND u.conversation_id = c.id AND u.role = 'user' ORDER BY u.seq DESC LIMIT 1) \
               AS visitor_last, \
             (SELECT substr(u.content, 1, 200) FROM messages u WHERE u.site_id = c.site_id \
               AND u.conversation_id = c.id AND u.role = 'user' ORDER BY u.seq DESC \
               LIMIT 1 OFFSET 1) AS visitor_before \
             FROM conversations c LEFT JOIN messages m ON m.site_id = c.site_id \
               AND m.conversation_id = c.id \
               AND m.seq = (SELECT MAX(seq) FROM messages l WHERE l.site_id = c.site_id \
                            AND l.conversation_id = c.id) \
             WHERE c.site_id = ?1 AND c.handoff_state IN ('waiting', 'held') \
             ORDER BY CASE c.handoff_state WHEN 'waiting' THEN 0 ELSE 1 END, \
               c.handoff_requested_at DESC, c.id LIMIT ?2 OFFSET ?3",
        )
        .bind(&[
            site_id.into(),
            JsValue::from_f64(f64::from(limit)),
            JsValue::from_f64(f64::from(offset)),
        ])?;
    let count = db
        .prepare(
            "SELECT COUNT(CASE handoff_state WHEN 'waiting' THEN 1 END) AS waiting, \
             COUNT(CASE handoff_state WHEN 'held' THEN 1 END) AS held FROM conversations \
             WHERE site_id = ?1 AND handoff_state IN ('waiting', 'held')",
        )
        .bind(&[site_id.into()])?;
    let mut results = db.batch(vec![rows, count]).await?.into_iter();
    let rows = results
        .next()
        .map(|r| r.results::<HandoffRow>())
        .transpose()?
        .unwrap_or_default();
    let listed = results
        .next()
        .map(|r| r.results::<Counts>())
        .transpose()?
        .and_then(|c| c.into_iter().next())
        .map_or_else(Listed::default, |c| Listed {
            waiting: c.waiting as u64,
            held: c.held as u64,
        });
    Ok((listed, rows))
}

#[derive(Debug, Deserialize)]
struct QueueRow {
    own: Option<String>,
    site_waiting: f64,
    client_waiting: f64,
}

/// Where the site's queue stands for a new request for a person in conversation `scope`
/// from `client` (its rate-limit key; `None` for a secret-key request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueueStand {
    /// Whether the conversation already waits for a person or is held by one (its request
    /// adds nothing to the queue).
    pub already_in: bool,
    /// The site's conversations waiting.
    pub site_waiting: u64,
    /// Those whose request came last from `client`.
    pub client_waiting: u64,
}

/// [`QueueStand`] for a request for a person in `scope` from `client`.
pub(crate) async fn queue_stand(
    db: &D1Database,
    scope: Scope<'_>,
    client: Option<&str>,
) -> worker::Result<QueueStand> {
    let row = db
        .prepare(
            "SELECT (SELECT handoff_state FROM conversations WHERE site_id = ?1 AND id = ?2) \
               AS own, \
             (SELECT COUNT(*) FROM conversations WHERE site_id = ?1 \
               AND handoff_state = 'waiting') AS site_waiting, \
             (SELECT COUNT(*) FROM conversations WHERE site_id = ?1 \
               AND handoff_state = 'waiting' AND handoff_client = ?3) AS client_waiting",
        )
        .bind(&[
            scope.site_id.into(),
            scope.conversation_id.into(),
            client.map_or(JsValue::NULL, JsValue::from_str),
        ])?
        .first::<QueueRow>(None)
        .await?;
    Ok(row.map_or(
        QueueStand {
            already_in: false,
            site_waiting: 0,
            client_waiting: 0,
        },
        |row| QueueStand {
            already_in: matches!(row.own.as_deref(), Some("waiting" | "held")),
            site_waiting: row.site_waiting as u64,
            client_waiting: row.client_waiting as u64,
        },
    ))
}

/// Records that `client` (`None`: a secret-key request) asked for a person in `scope`.
pub(crate) async fn set_client(
    db: &D1Database,
    scope: Scope<'_>,
    client: Option<&str>,
) -> worker::Result<()> {
    db.prepare("UPDATE conversations SET handoff_client = ?3 WHERE site_id = ?1 AND id = ?2")
        .bind(&[
            scope.site_id.into(),
            scope.conversation_id.into(),
            client.map_or(JsValue::NULL, JsValue::from_str),
        ])?
        .run()
        .await?;
    Ok(())
}
