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

use serde::{Deserialize, Serialize};
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

/// A follow-up as stored and listed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FollowUp {
    pub id: String,
    pub conversation_id: String,
    /// The contact as kept (`+84901234567`, `an@shop.vn`).
    pub contact: String,
    /// `phone` or `email`.
    pub kind: String,
    pub question: String,
    pub page: Option<String>,
    /// Unix ms.
    pub created_at: u64,
    /// Unix ms, once the site marked it done.
    pub done_at: Option<u64>,
}

/// What leaving one answers.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Left {
    /// The open follow-up (`None`: refused, the site holds [`MAX_OPEN`]).
    pub follow_up: Option<FollowUp>,
    /// Whether it replaced the conversation's open one.
    pub replaced: bool,
}

/// One page of the site's follow-ups, with how many are open.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Listed {
    pub open: u64,
    pub follow_ups: Vec<FollowUp>,
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

impl From<Row> for FollowUp {
    fn from(r: Row) -> Self {
        Self {
            id: r.id,
            conversation_id: r.conversation_id,
            contact: r.contact,
            kind: r.kind,
            question: r.question,
            page: r.page,
            created_at: r.created_at as u64,
            done_at: r.done_at.map(|ms| ms as u64),
        }
    }
}

const COLUMNS: &str = "id, conversation_id, contact, kind, question, page, created_at, done_at";

fn ms(value: u64) -> SqlStorageValue {
    SqlStorageValue::Integer(value as i64)
}

fn opt(value: Option<&str>) -> SqlStorageValue {
    value.map_or(SqlStorageValue::Null, Into::into)
}

fn one(
    sql: &SqlStorage,
    filter: &str,
    bind: Vec<SqlStorageValue>,
) -> worker::Result<Option<FollowUp>> {
    let rows: Vec<Row> = sql
        .exec(
            &format!("SELECT {COLUMNS} FROM follow_ups WHERE {filter} LIMIT 1"),
            bind,
        )?
        .to_array()?;
    Ok(rows.into_iter().next().map(FollowUp::from))
}

fn open_count(sql: &SqlStorage) -> worker::Result<u64> {
    #[derive(Deserialize)]
    struct N {
        n: f64,
    }
    let rows: Vec<N> = sql
        .exec(
            "SELECT count(*) AS n FROM follow_ups WHERE done_at IS NULL",
            None,
        )?
        .to_array()?;
    Ok(rows.first().map_or(0, |r| r.n as u64))
}

/// Leaves `new` (its `id` used unless it replaces the conversation's open follow-up).
pub(super) fn leave(sql: &SqlStorage, new: FollowUp) -> worker::Result<Left> {
    let open = one(
        sql,
        "conversation_id = ?1 AND done_at IS NULL",
        vec![new.conversation_id.as_str().into()],
    )?;
    if let Some(open) = open {
        sql.exec(
            "UPDATE follow_ups SET contact = ?2, kind = ?3, question = ?4, page = ?5, \
             created_at = ?6 WHERE id = ?1",
            vec![
                open.id.as_str().into(),
                new.contact.as_str().into(),
                new.kind.as_str().into(),
                new.question.as_str().into(),
                opt(new.page.as_deref()),
                ms(new.created_at),
            ],
        )?;
        let follow_up = one(sql, "id = ?1", vec![open.id.as_str().into()])?;
        return Ok(Left {
            follow_up,
            replaced: true,
        });
    }
    if open_count(sql)? >= MAX_OPEN {
        return Ok(Left {
            follow_up: None,
            replaced: false,
        });
    }
    sql.exec(
        "INSERT INTO follow_ups (id, conversation_id, contact, kind, question, page, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        vec![
            new.id.as_str().into(),
            new.conversation_id.as_str().into(),
            new.contact.as_str().into(),
            new.kind.as_str().into(),
            new.question.as_str().into(),
            opt(new.page.as_deref()),
            ms(new.created_at),
        ],
    )?;
    Ok(Left {
        follow_up: Some(new),
        replaced: false,
    })
}

/// The open follow-ups (oldest first: who has waited longest is called first), then the
/// done ones (latest done first), `limit` in all.
pub(super) fn list(sql: &SqlStorage, limit: u32) -> worker::Result<Listed> {
    let rows: Vec<Row> = sql
        .exec(
            &format!(
                "SELECT {COLUMNS} FROM follow_ups ORDER BY done_at IS NOT NULL, \
                 CASE WHEN done_at IS NULL THEN created_at ELSE -done_at END, id LIMIT ?1"
            ),
            vec![SqlStorageValue::Integer(i64::from(limit))],
        )?
        .to_array()?;
    Ok(Listed {
        open: open_count(sql)?,
        follow_ups: rows.into_iter().map(FollowUp::from).collect(),
    })
}

/// Marks follow-up `id` done at `at` (once: a second time keeps the first time); the
/// follow-up, `None` when the site has no such follow-up.
pub(super) fn done(sql: &SqlStorage, id: &str, at: u64) -> worker::Result<Option<FollowUp>> {
    sql.exec(
        "UPDATE follow_ups SET done_at = ?2 WHERE id = ?1 AND done_at IS NULL",
        vec![id.into(), ms(at)],
    )?;
    one(sql, "id = ?1", vec![id.into()])
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

/// The recorded pages of `conversation_ids` (those with one), as `[[id, page]…]`.
pub(super) fn pages(
    sql: &SqlStorage,
    conversation_ids: &[String],
) -> worker::Result<Vec<(String, String)>> {
    #[derive(Deserialize)]
    struct PageRow {
        conversation_id: String,
        page: String,
    }
    let mut found = Vec::new();
    for id in conversation_ids {
        let rows: Vec<PageRow> = sql
            .exec(
                "SELECT conversation_id, page FROM visitor_pages WHERE conversation_id = ?1",
                vec![id.as_str().into()],
            )?
            .to_array()?;
        found.extend(rows.into_iter().map(|r| (r.conversation_id, r.page)));
    }
    Ok(found)
}

/// A site's follow-ups and visitors' pages, in its object (the routes' side).
#[derive(Debug, Clone)]
pub(crate) struct SiteFollowUps {
    env: Env,
}

impl SiteFollowUps {
    pub(crate) fn new(env: &Env) -> Self {
        Self { env: env.clone() }
    }

    /// Leaves `follow_up` on `site_id` (see [`leave`]).
    pub(crate) async fn leave(&self, site_id: &str, follow_up: FollowUp) -> Result<Left, ApiError> {
        call(&self.env, site_id, &SiteCall::LeaveFollowUp { follow_up }).await
    }

    /// `site_id`'s follow-ups (see [`list`]).
    pub(crate) async fn list(&self, site_id: &str, limit: u32) -> Result<Listed, ApiError> {
        call(&self.env, site_id, &SiteCall::FollowUps { limit }).await
    }

    /// Marks `id` done (see [`done`]).
    pub(crate) async fn done(
        &self,
        site_id: &str,
        id: &str,
        at: u64,
    ) -> Result<Option<FollowUp>, ApiError> {
        let call_done = SiteCall::FollowUpDone {
            id: id.to_string(),
            at,
        };
        call(&self.env, site_id, &call_done).await
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
        call::<serde_json::Value>(&self.env, site_id, &set).await?;
        Ok(())
    }

    /// The recorded pages of `conversation_ids`.
    pub(crate) async fn pages(
        &self,
        site_id: &str,
        conversation_ids: Vec<String>,
    ) -> Result<Vec<(String, String)>, ApiError> {
        call(&self.env, site_id, &SiteCall::Pages { conversation_ids }).await
    }
}
