//! The site's uploaded logs (`knowledge`'s `log_tool`) in its object: a `logs` table and its
//! FTS5 index kept in step by triggers, replaced whole by an upload, searched by a turn.

use concierge_core::boundary::{LogEntry, LogQuery, fts_any_of};
use worker::{D1Database, Env, SqlStorage, SqlStorageValue};

use super::{SiteCall, SiteObject, call, forget_imported};
use crate::error::ApiError;

pub(super) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS logs (
    id      TEXT PRIMARY KEY,
    ts      TEXT NOT NULL,
    level   TEXT NOT NULL DEFAULT 'INFO',
    source  TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS logs_by_time ON logs(ts);
CREATE VIRTUAL TABLE IF NOT EXISTS logs_fts USING fts5(
    message, source, level,
    content = 'logs', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS logs_ai AFTER INSERT ON logs BEGIN
    INSERT INTO logs_fts(rowid, message, source, level)
    VALUES (new.rowid, new.message, new.source, new.level);
END;
CREATE TRIGGER IF NOT EXISTS logs_ad AFTER DELETE ON logs BEGIN
    INSERT INTO logs_fts(logs_fts, rowid, message, source, level)
    VALUES ('delete', old.rowid, old.message, old.source, old.level);
END;";

/// Replaces every line with `entries` (run inside a transaction).
pub(super) fn replace(sql: &SqlStorage, entries: &[LogEntry]) -> worker::Result<()> {
    sql.exec("DELETE FROM logs", None)?;
    insert(sql, entries)
}

/// Inserts `entries` (ids unique per site: a repeated id keeps the last line).
fn insert(sql: &SqlStorage, entries: &[LogEntry]) -> worker::Result<()> {
    for entry in entries {
        sql.exec(
            "INSERT OR REPLACE INTO logs (id, ts, level, source, message) VALUES (?1, ?2, ?3, ?4, ?5)",
            vec![
                entry.id.as_str().into(),
                entry.ts.as_str().into(),
                entry.level.as_str().into(),
                entry.source.as_str().into(),
                entry.message.as_str().into(),
            ],
        )?;
    }
    Ok(())
}

/// The lines matching `fts` (an FTS5 query), in the time window, best first.
pub(super) fn search(
    sql: &SqlStorage,
    fts: String,
    since: Option<String>,
    until: Option<String>,
    limit: u32,
) -> worker::Result<Vec<LogEntry>> {
    sql.exec(
        "SELECT l.id, l.ts, l.level, l.source, l.message FROM logs_fts f \
         JOIN logs l ON l.rowid = f.rowid \
         WHERE logs_fts MATCH ?1 \
         AND (?2 IS NULL OR l.ts >= ?2) AND (?3 IS NULL OR l.ts <= ?3) \
         ORDER BY bm25(logs_fts), l.ts DESC LIMIT ?4",
        vec![
            fts.into(),
            since.into(),
            until.into(),
            SqlStorageValue::from(i64::from(limit.clamp(1, 100))),
        ],
    )?
    .to_array()
}

/// The site's lines of D1's `kb_logs` (at most 5,000: an upload's cap), copied here in one
/// transaction, then deleted there; how many.
pub(super) async fn import(
    object: &SiteObject,
    db: &D1Database,
    site_id: &str,
) -> Result<usize, ApiError> {
    let rows: Vec<LogEntry> = db
        .prepare("SELECT id, ts, level, source, message FROM kb_logs WHERE site_id = ?1")
        .bind(&[site_id.into()])?
        .all()
        .await?
        .results()?;
    let n = rows.len();
    if n > 0 {
        let sql = object.sql();
        object.transaction(move || insert(&sql, &rows))?;
        forget_imported(db, site_id, "DELETE FROM kb_logs WHERE site_id = ?1").await;
    }
    Ok(n)
}

/// Replaces `site_id`'s logs with `entries`.
pub(crate) async fn replace_logs(
    env: &Env,
    site_id: &str,
    entries: Vec<LogEntry>,
) -> Result<(), ApiError> {
    call::<serde_json::Value>(env, site_id, &SiteCall::ReplaceLogs { entries }).await?;
    Ok(())
}

/// Full-text search over `site_id`'s logs (any of the query's words), best matches first.
pub(crate) async fn search_logs(
    env: &Env,
    site_id: &str,
    query: &LogQuery,
) -> Result<Vec<LogEntry>, ApiError> {
    let fts = fts_any_of(&query.keywords);
    if fts.is_empty() {
        return Ok(Vec::new());
    }
    let search = SiteCall::SearchLogs {
        fts,
        since: query.since.clone(),
        until: query.until.clone(),
        limit: query.limit.clamp(1, 100) as u32,
    };
    call(env, site_id, &search).await
}
