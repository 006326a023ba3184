//! Visitors to call back, and where visitors asked for a person from, in the site's object
//! (issue 45) — site data, so not in the shared D1 (issue 47).
//!
//! - `follow_ups`: what a visitor left when nobody was free (a handoff's timeout, outside
//!   office hours): a validated contact (`concierge_core::handoff::Contact`), their
//!   question, the page they were on. One *open* follow-up per conversation: leaving
//!   another replaces its contact, question and page (the visitor corrects a number), and
//!   the site's console marks it done. At most [`MAX_OPEN`] open per site (a flood cannot
//!   grow the object without bound; the rate limiters slow it first).
//! - `visitor_pages`: the page (path and query of the embedding page, as the loader gave
//!   it; the visitor's to say, so shown, never trusted) a conversation asked for a person
//!   from, for the console's waiting list; kept a day.

use worker::{Env, SqlStorage, SqlStorageValue};

use super::{SiteCall, call_text};
use crate::error::ApiError;

pub(super) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS follow_ups (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    contact         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    question        TEXT NOT NULL,
    page            TEXT,
    created_at      INTEGER NOT NULL,
    done_at         INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS follow_ups_open ON follow_ups(conversation_id)
    WHERE done_at IS NULL;
CREATE TABLE IF NOT EXISTS visitor_pages (
    conversation_id TEXT PRIMARY KEY,
    page            TEXT NOT NULL,
    at              INTEGER NOT NULL
);";

/// Open follow-ups a site keeps at most.
pub(crate) const MAX_OPEN: u64 = 1_000;

// The answers are JSON built by SQLite (`json_object`), passed on by the Worker as they
// are: no row type, no serde code for them in the Worker (each costs its size).

/// A follow-up row as the API shows it: `{id, conversation_id, contact, kind, question,
/// page, created_at, done_at}` (times in Unix ms); a macro, so the queries are literals.
macro_rules! follow_up_json {
    () => {
        "json_object('id', id, 'conversation_id', conversation_id, 'contact', contact, \
         'kind', kind, 'question', question, 'page', page, 'created_at', created_at, \
         'done_at', done_at)"
    };
}

/// The first column of the first row of `query`, as text (`None` without a row or text).
fn text(
    sql: &SqlStorage,
    query: &str,
    bind: Vec<SqlStorageValue>,
) -> worker::Result<Option<String>> {
    let first = sql.exec(query, bind)?.raw().next().transpose()?;
    Ok(match first.and_then(|row| row.into_iter().next()) {
        Some(SqlStorageValue::String(text)) => Some(text),
        _ => None,
    })
}

/// `{"follow_up": {…}, "replaced": <replaced>}` for follow-up `id` (`replaced` a JSON
/// `true`, `false` or `null`: left out), or `null` when there is none.
fn answer(sql: &SqlStorage, id: &str, replaced: &str) -> worker::Result<String> {
    let found = text(
        sql,
        concat!(
            "SELECT json_object('follow_up', ",
            follow_up_json!(),
            ", 'replaced', json(?2)) FROM follow_ups WHERE id = ?1"
        ),
        vec![id.into(), replaced.into()],
    )?;
    Ok(found.unwrap_or_else(|| "null".into()))
}

/// Leaves `new` (JSON: `{id, conversation_id, contact, kind, question, page, at}`; its
/// `id` used unless it replaces the conversation's open follow-up): `{"follow_up": {…}, "replaced": bool}`, or `null` when
/// refused (the site holds [`MAX_OPEN`]).
pub(super) fn leave(sql: &SqlStorage, new: &str) -> worker::Result<String> {
    let open = text(
        sql,
        "SELECT id FROM follow_ups WHERE done_at IS NULL \
         AND conversation_id = json_extract(?1, '$.conversation_id')",
        vec![new.into()],
    )?;
    let replaced = open.is_some();
    let id = match open {
        Some(id) => {
            sql.exec(
                "UPDATE follow_ups SET contact = json_extract(?1, '$.contact'), \
                 kind = json_extract(?1, '$.kind'), question = json_extract(?1, '$.question'), \
                 page = json_extract(?1, '$.page'), created_at = json_extract(?1, '$.at') \
                 WHERE id = ?2",
                vec![new.into(), id.as_str().into()],
            )?;
            id
        }
        None => {
            let n = text(
                sql,
                "SELECT CAST(count(*) AS TEXT) FROM follow_ups WHERE done_at IS NULL",
                Vec::new(),
            )?;
            if n.and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) >= MAX_OPEN {
                return Ok("null".into());
            }
            sql.exec(
                "INSERT INTO follow_ups (id, conversation_id, contact, kind, question, page, \
                 created_at) SELECT json_extract(?1, '$.id'), \
                 json_extract(?1, '$.conversation_id'), json_extract(?1, '$.contact'), \
                 json_extract(?1, '$.kind'), json_extract(?1, '$.question'), \
                 json_extract(?1, '$.page'), json_extract(?1, '$.at')",
                vec![new.into()],
            )?;
            text(sql, "SELECT json_extract(?1, '$.id')", vec![new.into()])?.unwrap_or_default()
        }
    };
    answer(sql, &id, if replaced { "true" } else { "false" })
}

/// The open follow-ups (oldest first: who has waited longest is called first), then the
/// done ones (latest done first), `limit` in all: `{"open": n, "follow_ups": […]}`.
pub(super) fn list(sql: &SqlStorage, limit: u32) -> worker::Result<String> {
    let listed = text(
        sql,
        concat!(
            "SELECT json_object('open', (SELECT count(*) FROM follow_ups WHERE done_at IS NULL), \
             'follow_ups', (SELECT json_group_array(json(j)) FROM (SELECT ",
            follow_up_json!(),
            " AS j FROM follow_ups ORDER BY done_at IS NOT NULL, \
             coalesce(-done_at, created_at), id LIMIT ?1)))"
        ),
        vec![SqlStorageValue::Integer(i64::from(limit))],
    )?;
    Ok(listed.unwrap_or_default())
}

/// Marks follow-up `id` done at `at` (once: a second time keeps the first time):
/// `{"follow_up": {…}}`, `null` when the site has no such follow-up.
pub(super) fn done(sql: &SqlStorage, id: &str, at: u64) -> worker::Result<String> {
    sql.exec(
        "UPDATE follow_ups SET done_at = ?2 WHERE id = ?1 AND done_at IS NULL",
        vec![id.into(), SqlStorageValue::Integer(at as i64)],
    )?;
    answer(sql, id, "null")
}

/// Records that conversation `conversation_id` asked for a person from `page` at `at`, and
/// forgets pages recorded over a day before (a wait lasts an hour at most).
pub(super) fn set_page(
    sql: &SqlStorage,
    conversation_id: &str,
    page: &str,
    at: u64,
) -> worker::Result<()> {
    let at = SqlStorageValue::Integer(at as i64);
    sql.exec(
        "INSERT OR REPLACE INTO visitor_pages (conversation_id, page, at) VALUES (?1, ?2, ?3)",
        vec![conversation_id.into(), page.into(), at.clone()],
    )?;
    // A page older than a day no longer names where anyone waits.
    sql.exec(
        "DELETE FROM visitor_pages WHERE at < ?1 - 86400000",
        vec![at],
    )?;
    Ok(())
}

/// The recorded pages of `conversation_ids` (a JSON array) with one: `{"<id>": "<page>"}`.
pub(super) fn pages(sql: &SqlStorage, conversation_ids: &str) -> worker::Result<String> {
    let found = text(
        sql,
        "SELECT json_group_object(conversation_id, page) FROM visitor_pages \
         WHERE conversation_id IN (SELECT value FROM json_each(?1))",
        vec![conversation_ids.into()],
    )?;
    Ok(found.unwrap_or_else(|| "{}".into()))
}

/// A site's follow-ups and visitors' pages, in its object (the routes' side). Answers
/// are the object's JSON, passed on as they are.
#[derive(Debug, Clone)]
pub(crate) struct SiteFollowUps {
    env: Env,
}

impl SiteFollowUps {
    pub(crate) fn new(env: &Env) -> Self {
        Self { env: env.clone() }
    }

    async fn ask(&self, site_id: &str, site_call: SiteCall) -> Result<String, ApiError> {
        call_text(&self.env, site_id, &site_call).await
    }

    /// Leaves `new` on `site_id` (see [`leave`]): the answer's JSON text, `null` when
    /// refused.
    pub(crate) async fn leave(
        &self,
        site_id: &str,
        new: &serde_json::Value,
    ) -> Result<String, ApiError> {
        self.ask(site_id, SiteCall::LeaveFollowUp(new.to_string()))
            .await
    }

    /// `site_id`'s follow-ups (see [`list`]), as JSON text.
    pub(crate) async fn list(&self, site_id: &str, limit: u32) -> Result<String, ApiError> {
        self.ask(site_id, SiteCall::FollowUps(limit)).await
    }

    /// Marks `id` done (see [`done`]): the follow-up's JSON text, `null` when none.
    pub(crate) async fn done(&self, site_id: &str, id: &str, at: u64) -> Result<String, ApiError> {
        let id = id.to_string();
        self.ask(site_id, SiteCall::FollowUpDone(id, at)).await
    }

    /// Records the page `conversation_id` asked for a person from.
    pub(crate) async fn set_page(
        &self,
        site_id: &str,
        conversation_id: &str,
        page: &str,
        at: u64,
    ) -> Result<(), ApiError> {
        let set = SiteCall::SetPage(conversation_id.to_string(), page.to_string(), at);
        self.ask(site_id, set).await.map(|_| ())
    }

    /// The recorded pages of `conversation_ids`: `{"<id>": "<page>"}`.
    pub(crate) async fn pages(
        &self,
        site_id: &str,
        conversation_ids: Vec<String>,
    ) -> Result<serde_json::Value, ApiError> {
        let text = self
            .ask(
                site_id,
                SiteCall::Pages(serde_json::Value::from(conversation_ids).to_string()),
            )
            .await?;
        serde_json::from_str(&text).map_err(|e| ApiError::Corrupt(e.to_string()))
    }
}
