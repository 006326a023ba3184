//! `rental`'s own data in the site's object: the roles of known users, the learned Q&A
//! (with their hits and review fields) and the seed endpoint's sessions (`POST /ai/chat`).
//!
//! A session idle for more than 30 minutes ends with its conversation: the object's alarm
//! is set for the oldest session's end, deletes what is idle by then (100 at a time) and
//! sets itself for the next one, so each site cleans its own sessions and nothing scans
//! every tenant.
//!
//! Before this object these rows lived in the shared D1 (`rental_users`, `rental_qa`,
//! `rental_sessions`): the site's first rental call imports them (all three in one
//! transaction), then deletes them there ([`import`]).

use concierge_core::flows::rental::{QaRecord, SESSION_IDLE_MS};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use worker::{SqlStorage, SqlStorageValue};

use super::{SiteObject, first, forget_imported, number, text};
use crate::error::ApiError;
use crate::runtime::now_ms;

pub(super) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS rental_users (
    user_id TEXT PRIMARY KEY,
    role    TEXT NOT NULL CHECK (role IN ('TENANT', 'LANDLORD'))
);
CREATE TABLE IF NOT EXISTS rental_qa (
    id           TEXT PRIMARY KEY,
    question     TEXT NOT NULL,
    sql          TEXT NOT NULL,
    request_type TEXT NOT NULL,
    mode         TEXT,
    created_at   INTEGER NOT NULL,
    hits         INTEGER NOT NULL DEFAULT 0,
    role         TEXT,
    context_free INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS rental_qa_recent ON rental_qa (created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS rental_sessions (
    session_id      TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    last_active_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rental_sessions_idle ON rental_sessions (last_active_at);";

/// What the Worker asks of a site's `rental` data (answers in brackets). Tuple variants:
/// their JSON decoder is half the size of named fields'.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RentalCall {
    /// `user_id`: the role of a known user [`"TENANT"`, `"LANDLORD"` or `null`].
    Role(String),
    /// `id`: one learned Q&A [the record or `null`].
    Qa(String),
    /// Stores a learned Q&A (0 hits).
    SaveQa(QaRecord),
    /// `id`: counts one reuse.
    QaHit(String),
    /// `(limit, before)`: up to `limit` learned Q&A, newest first, older than `before`
    /// (`created_at`, `id`) [the records].
    ListQa(u32, Option<(u64, String)>),
    /// `id`: forgets one learned Q&A [whether it existed].
    DeleteQa(String),
    /// `[(user_id, role)]`: sets roles (`null` removes one), all in one transaction.
    SetRoles(Vec<(String, Option<String>)>),
    /// `(key, now)`: session `key`, if it is still live at `now`, used at `now` [its
    /// conversation or `null`].
    OpenSession(String, u64),
    /// `(key, conversation_id, now)`: session `key` on that conversation, used at `now`.
    StartSession(String, String, u64),
}

#[derive(Debug, Deserialize)]
struct QaRow {
    id: String,
    question: String,
    sql: String,
    request_type: String,
    mode: Option<String>,
    created_at: f64,
    hits: f64,
    role: Option<String>,
    context_free: f64,
}

impl From<QaRow> for QaRecord {
    fn from(row: QaRow) -> Self {
        Self {
            id: row.id,
            question: row.question,
            sql: row.sql,
            request_type: row.request_type,
            mode: row.mode,
            created_at: row.created_at as u64,
            hits: row.hits as u64,
            role: row.role,
            context_free: row.context_free != 0.0,
        }
    }
}

const QA_COLUMNS: &str =
    "id, question, sql, request_type, mode, created_at, hits, role, context_free";

fn num(n: u64) -> SqlStorageValue {
    SqlStorageValue::Integer(n as i64)
}

fn rows<T: DeserializeOwned>(
    sql: &SqlStorage,
    query: &str,
    params: Vec<SqlStorageValue>,
) -> worker::Result<Vec<T>> {
    sql.exec(query, params)?.to_array()
}

fn insert_qa(sql: &SqlStorage, record: &QaRecord) -> worker::Result<()> {
    sql.exec(
        "INSERT OR REPLACE INTO rental_qa (id, question, sql, request_type, mode, created_at, \
         hits, role, context_free) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        vec![
            record.id.as_str().into(),
            record.question.as_str().into(),
            record.sql.as_str().into(),
            record.request_type.as_str().into(),
            record.mode.clone().into(),
            num(record.created_at),
            num(record.hits),
            record.role.clone().into(),
            num(u64::from(record.context_free)),
        ],
    )?;
    Ok(())
}

fn set_role(sql: &SqlStorage, user: &str, role: Option<&str>) -> worker::Result<()> {
    match role {
        Some(role) => sql.exec(
            "INSERT INTO rental_users (user_id, role) VALUES (?1, ?2) \
             ON CONFLICT (user_id) DO UPDATE SET role = excluded.role",
            vec![user.into(), role.into()],
        )?,
        None => sql.exec(
            "DELETE FROM rental_users WHERE user_id = ?1",
            vec![user.into()],
        )?,
    };
    Ok(())
}

fn touch_session(sql: &SqlStorage, key: &str, conversation: &str, now: u64) -> worker::Result<()> {
    sql.exec(
        "INSERT INTO rental_sessions (session_id, conversation_id, last_active_at) \
         VALUES (?1, ?2, ?3) \
         ON CONFLICT (session_id) DO UPDATE SET last_active_at = excluded.last_active_at",
        vec![key.into(), conversation.into(), num(now)],
    )?;
    Ok(())
}

#[derive(Debug, Deserialize)]
struct Session {
    session_id: String,
    conversation_id: String,
    last_active_at: f64,
}

impl SiteObject {
    /// Serves `call` (after the site's rows of D1 are imported).
    pub(super) async fn rental(&self, site_id: &str, call: RentalCall) -> Result<Value, ApiError> {
        import(self, site_id).await?;
        let sql = self.sql();
        Ok(match call {
            RentalCall::Role(user_id) => json!(text(first(
                &sql,
                "SELECT role FROM rental_users WHERE user_id = ?1",
                vec![user_id.into()],
            )?)),
            RentalCall::Qa(id) => {
                let found: Vec<QaRow> = rows(
                    &sql,
                    &format!("SELECT {QA_COLUMNS} FROM rental_qa WHERE id = ?1"),
                    vec![id.into()],
                )?;
                json!(found.into_iter().next().map(QaRecord::from))
            }
            RentalCall::SaveQa(mut record) => {
                record.hits = 0;
                insert_qa(&sql, &record)?;
                Value::Null
            }
            RentalCall::QaHit(id) => {
                sql.exec(
                    "UPDATE rental_qa SET hits = hits + 1 WHERE id = ?1",
                    vec![id.into()],
                )?;
                Value::Null
            }
            RentalCall::ListQa(limit, before) => {
                let (after, id) = match before {
                    Some((at, id)) => (num(at), id),
                    None => (SqlStorageValue::Null, String::new()),
                };
                let found: Vec<QaRow> = rows(
                    &sql,
                    &format!(
                        "SELECT {QA_COLUMNS} FROM rental_qa \
                         WHERE (?1 IS NULL OR created_at < ?1 OR (created_at = ?1 AND id < ?2)) \
                         ORDER BY created_at DESC, id DESC LIMIT ?3"
                    ),
                    vec![
                        after,
                        id.into(),
                        SqlStorageValue::from(i64::from(limit.clamp(1, 200))),
                    ],
                )?;
                json!(found.into_iter().map(QaRecord::from).collect::<Vec<_>>())
            }
            RentalCall::DeleteQa(id) => {
                let gone = sql
                    .exec(
                        "DELETE FROM rental_qa WHERE id = ?1 RETURNING id",
                        vec![id.into()],
                    )?
                    .raw()
                    .count();
                json!(gone > 0)
            }
            RentalCall::SetRoles(roles) => {
                let store = sql.clone();
                self.transaction(move || {
                    roles
                        .iter()
                        .try_for_each(|(user, role)| set_role(&store, user, role.as_deref()))
                })?;
                Value::Null
            }
            RentalCall::OpenSession(key, now) => {
                let found: Vec<Session> = rows(
                    &sql,
                    "SELECT session_id, conversation_id, last_active_at FROM rental_sessions \
                     WHERE session_id = ?1",
                    vec![key.as_str().into()],
                )?;
                match found.into_iter().next() {
                    Some(s) if now.saturating_sub(s.last_active_at as u64) <= SESSION_IDLE_MS => {
                        touch_session(&sql, &key, &s.conversation_id, now)?;
                        json!(s.conversation_id)
                    }
                    _ => Value::Null,
                }
            }
            RentalCall::StartSession(key, conversation_id, now) => {
                touch_session(&sql, &key, &conversation_id, now)?;
                arm_sessions(self, site_id, false).await?;
                Value::Null
            }
        })
    }
}

/// The `meta` key set once the site's `rental` rows of the shared D1 are imported.
const IMPORTED: &str = "imported_rental";
/// The `meta` key holding the site's id (the alarm needs it).
const SITE: &str = "site";

/// `meta`'s value of `key`.
fn meta(sql: &SqlStorage, key: &str) -> worker::Result<Option<String>> {
    let value = first(
        sql,
        "SELECT value FROM meta WHERE key = ?1",
        vec![key.into()],
    )?;
    Ok(text(value))
}

fn set_meta(sql: &SqlStorage, key: &str, value: &str) -> worker::Result<()> {
    sql.exec(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        vec![key.into(), value.into()],
    )?;
    Ok(())
}

/// Once per site: its users, learned Q&A and sessions of the shared D1 (read in one batch:
/// a site's roles, learned questions and live sessions are small) copied here in one
/// transaction, then deleted there (as [`SiteObject::import`] does for the rest). A failed
/// copy leaves the flag unset and is tried again by the next call (copies replace by key).
async fn import(object: &SiteObject, site_id: &str) -> Result<(), ApiError> {
    let sql = object.sql();
    if site_id.is_empty() || meta(&sql, IMPORTED)?.is_some() {
        return Ok(());
    }
    #[derive(Deserialize)]
    struct User {
        user_id: String,
        role: String,
    }
    let db = object.env.d1("DB")?;
    let mut read = Vec::new();
    for query in [
        "SELECT user_id, role FROM rental_users WHERE site_id = ?1".to_string(),
        format!("SELECT {QA_COLUMNS} FROM rental_qa WHERE site_id = ?1"),
        "SELECT session_id, conversation_id, last_active_at FROM rental_sessions WHERE site_id = ?1"
            .to_string(),
    ] {
        read.push(db.prepare(query).bind(&[site_id.into()])?);
    }
    let results = db.batch(read).await?;
    let [users, qa, sessions] = results.as_slice() else {
        return Err(ApiError::Internal(
            "D1 batch answered too few results".into(),
        ));
    };
    let (users, qa, sessions): (Vec<User>, Vec<QaRow>, Vec<Session>) =
        (users.results()?, qa.results()?, sessions.results()?);
    let n = users.len() + qa.len() + sessions.len();
    if n > 0 {
        let has_sessions = !sessions.is_empty();
        let store = sql.clone();
        object.transaction(move || {
            for user in &users {
                set_role(&store, &user.user_id, Some(&user.role))?;
            }
            for row in qa {
                insert_qa(&store, &QaRecord::from(row))?;
            }
            for s in &sessions {
                let last = s.last_active_at as u64;
                touch_session(&store, &s.session_id, &s.conversation_id, last)?;
            }
            Ok(())
        })?;
        for table in ["rental_users", "rental_qa", "rental_sessions"] {
            let delete = format!("DELETE FROM {table} WHERE site_id = ?1");
            forget_imported(&db, site_id, &delete).await;
        }
        if has_sessions {
            arm_sessions(object, site_id, true).await?;
        }
    }
    set_meta(&sql, IMPORTED, &n.to_string())?;
    Ok(())
}

/// Sets the alarm for the oldest session's end (now, when it is over already), unless an
/// alarm is set and not `again`; no sessions, no alarm.
pub(super) async fn arm_sessions(
    object: &SiteObject,
    site_id: &str,
    again: bool,
) -> Result<(), ApiError> {
    let storage = object.state.storage();
    if !again && storage.get_alarm().await?.is_some() {
        return Ok(());
    }
    let sql = object.sql();
    let oldest = first(
        &sql,
        "SELECT min(last_active_at) FROM rental_sessions",
        Vec::new(),
    )?;
    if !matches!(
        oldest,
        Some(SqlStorageValue::Integer(_) | SqlStorageValue::Float(_))
    ) {
        return Ok(());
    }
    let at = number(oldest);
    if !site_id.is_empty() {
        set_meta(&sql, SITE, site_id)?;
    }
    let end = at as i64 + SESSION_IDLE_MS as i64 + 1;
    storage.set_alarm(end - now_ms() as i64).await?;
    Ok(())
}

/// The alarm: sessions idle for more than 30 minutes deleted with their conversations (at
/// most 100; the alarm comes back at once for the rest, else at the next session's end).
/// A conversation that could not be deleted keeps its session; the alarm tries again in 5
/// minutes.
pub(super) async fn end_idle_sessions(object: &SiteObject) {
    if let Err(error) = end_idle(object).await {
        let line = json!({"level": "error", "msg": "rental session cleanup failed", "error": error.chain()});
        worker::console_error!("{line}");
        let _ = object.state.storage().set_alarm(5 * 60 * 1000).await;
    }
}

async fn end_idle(object: &SiteObject) -> Result<(), ApiError> {
    let sql = object.sql();
    let Some(site_id) = meta(&sql, SITE)? else {
        return Ok(());
    };
    let cutoff = now_ms().saturating_sub(SESSION_IDLE_MS);
    let idle: Vec<Session> = rows(
        &sql,
        "SELECT session_id, conversation_id, last_active_at FROM rental_sessions \
         WHERE last_active_at < ?1 ORDER BY last_active_at LIMIT 100",
        vec![num(cutoff)],
    )?;
    // A deleted site's sessions go without their conversations (gone with the site).
    let site = crate::bindings::d1_sites::find_by_id(&object.env, &site_id).await?;
    for session in &idle {
        if let Some(site) = &site {
            crate::templates::rental::chat::forget(&object.env, site, &session.conversation_id)
                .await?;
        }
        sql.exec(
            "DELETE FROM rental_sessions WHERE session_id = ?1 AND last_active_at < ?2",
            vec![session.session_id.as_str().into(), num(cutoff)],
        )?;
    }
    let line = json!({"level": "info", "msg": "rental sessions cleaned", "site": site_id, "deleted": idle.len()});
    worker::console_log!("{line}");
    arm_sessions(object, "", true).await
}
