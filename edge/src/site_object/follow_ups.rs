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
//!   from, for the console's waiting list.

use serde::Deserialize;
use worker::{Env, SqlStorage, SqlStorageValue};

use super::{SiteCall, call};
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
CREATE INDEX IF NOT EXISTS follow_ups_by_time ON follow_ups(created_at);
CREATE TABLE IF NOT EXISTS visitor_pages (
    conversation_id TEXT PRIMARY KEY,
    page            TEXT NOT NULL,
    at              INTEGER NOT NULL
);";

/// Open follow-ups a site keeps at most.
pub(crate) const MAX_OPEN: u64 = 1_000;

/// A follow-up to leave (sent as JSON in [`SiteCall::LeaveFollowUp`]).
#[derive(Debug, Clone)]
pub(crate) struct NewFollowUp {
    pub id: String,
    pub conversation_id: String,
    /// The contact as kept (`+84901234567`, `an@shop.vn`).
    pub contact: String,
    /// `phone` or `email`.
    pub kind: String,
    pub question: String,
    pub page: Option<String>,
    /// Unix ms.
    pub at: u64,
}

impl NewFollowUp {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id, "conversation_id": self.conversation_id, "contact": self.contact,
            "kind": self.kind, "question": self.question, "page": self.page, "at": self.at,
        })
    }
}

#[derive(Deserialize)]
struct Row {
    id: String,
    conversation_id: String,
    contact: String,
    kind: String,
    question: String,
    page: Option<String>,
    created_at: f64,
    done_at: Option<f64>,
}

impl Row {
    /// A follow-up as the API shows it: `{id, conversation_id, contact, kind, question,
    /// page, created_at, done_at}` (times in Unix ms). Built as JSON, not serialised from a
    /// struct: the Worker passes it on as it is (each serde type costs the Worker's size).
    fn json(self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id, "conversation_id": self.conversation_id, "contact": self.contact,
            "kind": self.kind, "question": self.question, "page": self.page,
            "created_at": self.created_at as u64, "done_at": self.done_at.map(|ms| ms as u64),
        })
    }
}

const COLUMNS: &str = "id, conversation_id, contact, kind, question, page, created_at, done_at";

fn ms(value: u64) -> SqlStorageValue {
    SqlStorageValue::Integer(value as i64)
}

fn opt(value: Option<&str>) -> SqlStorageValue {
    value.map_or(SqlStorageValue::Null, Into::into)
}

fn rows(sql: &SqlStorage, filter: &str, bind: Vec<SqlStorageValue>) -> worker::Result<Vec<Row>> {
    sql.exec(&format!("SELECT {COLUMNS} FROM follow_ups {filter}"), bind)?
        .to_array()
}

fn one(sql: &SqlStorage, filter: &str, bind: Vec<SqlStorageValue>) -> worker::Result<Option<Row>> {
    Ok(rows(sql, &format!("WHERE {filter} LIMIT 1"), bind)?
        .into_iter()
        .next())
}

fn open_count(sql: &SqlStorage) -> worker::Result<u64> {
    super::count(
        sql,
        "SELECT count(*) AS n FROM follow_ups WHERE done_at IS NULL",
    )
}

/// Leaves `new` (its `id` used unless it replaces the conversation's open follow-up):
/// `{"follow_up": {…} | null (refused: the site holds [`MAX_OPEN`]), "replaced": bool}`.
pub(super) fn leave(
    sql: &SqlStorage,
    new: &serde_json::Value,
) -> worker::Result<serde_json::Value> {
    let text = |name: &str| {
        new.get(name)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
    };
    let page = || opt(new.get("page").and_then(serde_json::Value::as_str));
    let at = || {
        ms(new
            .get("at")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or_default())
    };
    let open = one(
        sql,
        "conversation_id = ?1 AND done_at IS NULL",
        vec![text("conversation_id").into()],
    )?;
    if let Some(open) = open {
        sql.exec(
            "UPDATE follow_ups SET contact = ?2, kind = ?3, question = ?4, page = ?5, \
             created_at = ?6 WHERE id = ?1",
            vec![
                open.id.as_str().into(),
                text("contact").into(),
                text("kind").into(),
                text("question").into(),
                page(),
                at(),
            ],
        )?;
        let follow_up = one(sql, "id = ?1", vec![open.id.as_str().into()])?.map(Row::json);
        return Ok(serde_json::json!({"follow_up": follow_up, "replaced": true}));
    }
    if open_count(sql)? >= MAX_OPEN {
        return Ok(serde_json::json!({"follow_up": null, "replaced": false}));
    }
    sql.exec(
        "INSERT INTO follow_ups (id, conversation_id, contact, kind, question, page, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        vec![
            text("id").into(),
            text("conversation_id").into(),
            text("contact").into(),
            text("kind").into(),
            text("question").into(),
            page(),
            at(),
        ],
    )?;
    let follow_up = one(sql, "id = ?1", vec![text("id").into()])?.map(Row::json);
    Ok(serde_json::json!({"follow_up": follow_up, "replaced": false}))
}

/// The open follow-ups (oldest first: who has waited longest is called first), then the
/// done ones (latest done first), `limit` in all: `{"open": n, "follow_ups": […]}`.
pub(super) fn list(sql: &SqlStorage, limit: u32) -> worker::Result<serde_json::Value> {
    let listed = rows(
        sql,
        "ORDER BY done_at IS NOT NULL, \
         CASE WHEN done_at IS NULL THEN created_at ELSE -done_at END, id LIMIT ?1",
        vec![SqlStorageValue::Integer(i64::from(limit))],
    )?;
    let follow_ups: Vec<serde_json::Value> = listed.into_iter().map(Row::json).collect();
    Ok(serde_json::json!({"open": open_count(sql)?, "follow_ups": follow_ups}))
}

/// Marks follow-up `id` done at `at` (once: a second time keeps the first time); the
/// follow-up, `null` when the site has no such follow-up.
pub(super) fn done(sql: &SqlStorage, id: &str, at: u64) -> worker::Result<serde_json::Value> {
    sql.exec(
        "UPDATE follow_ups SET done_at = ?2 WHERE id = ?1 AND done_at IS NULL",
        vec![id.into(), ms(at)],
    )?;
    Ok(one(sql, "id = ?1", vec![id.into()])?.map_or(serde_json::Value::Null, Row::json))
}

/// Records that conversation `conversation_id` asked for a person from `page` at `at`.
pub(super) fn set_page(
    sql: &SqlStorage,
    conversation_id: &str,
    page: &str,
    at: u64,
) -> worker::Result<()> {
    sql.exec(
        "INSERT OR REPLACE INTO visitor_pages (conversation_id, page, at) VALUES (?1, ?2, ?3)",
        vec![conversation_id.into(), page.into(), ms(at)],
    )?;
    Ok(())
}

/// The recorded pages of `conversation_ids` (those with one): `{"<id>": "<page>", …}`.
pub(super) fn pages(
    sql: &SqlStorage,
    conversation_ids: &[String],
) -> worker::Result<serde_json::Value> {
    #[derive(Deserialize)]
    struct PageRow {
        page: String,
    }
    let mut found = serde_json::Map::new();
    for id in conversation_ids {
        let rows: Vec<PageRow> = sql
            .exec(
                "SELECT page FROM visitor_pages WHERE conversation_id = ?1",
                vec![id.as_str().into()],
            )?
            .to_array()?;
        if let Some(row) = rows.into_iter().next() {
            found.insert(id.clone(), row.page.into());
        }
    }
    Ok(found.into())
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

    async fn ask(&self, site_id: &str, site_call: SiteCall) -> Result<serde_json::Value, ApiError> {
        call(&self.env, site_id, &site_call).await
    }

    /// Leaves `new` on `site_id` (see [`leave`]).
    pub(crate) async fn leave(
        &self,
        site_id: &str,
        new: &NewFollowUp,
    ) -> Result<serde_json::Value, ApiError> {
        let leave = SiteCall::LeaveFollowUp { new: new.json() };
        self.ask(site_id, leave).await
    }

    /// `site_id`'s follow-ups (see [`list`]).
    pub(crate) async fn list(
        &self,
        site_id: &str,
        limit: u32,
    ) -> Result<serde_json::Value, ApiError> {
        self.ask(site_id, SiteCall::FollowUps { limit }).await
    }

    /// Marks `id` done (see [`done`]).
    pub(crate) async fn done(
        &self,
        site_id: &str,
        id: &str,
        at: u64,
    ) -> Result<serde_json::Value, ApiError> {
        let id = id.to_string();
        self.ask(site_id, SiteCall::FollowUpDone { id, at }).await
    }

    /// Records the page `conversation_id` asked for a person from.
    pub(crate) async fn set_page(
        &self,
        site_id: &str,
        conversation_id: &str,
        page: &str,
        at: u64,
    ) -> Result<(), ApiError> {
        let set = SiteCall::SetPage {
            conversation_id: conversation_id.to_string(),
            page: page.to_string(),
            at,
        };
        self.ask(site_id, set).await.map(|_| ())
    }

    /// The recorded pages of `conversation_ids`: `{"<id>": "<page>"}`.
    pub(crate) async fn pages(
        &self,
        site_id: &str,
        conversation_ids: Vec<String>,
    ) -> Result<serde_json::Value, ApiError> {
        self.ask(site_id, SiteCall::Pages { conversation_ids })
            .await
    }
}
