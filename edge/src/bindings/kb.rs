//! `knowledge`'s D1 tables besides documents: the uploaded logs (`kb_logs`, FTS5
//! `kb_logs_fts`) searched by `log_tool`, and the per-site knowledge-base version
//! (`kb_versions`) in every cache key. Bound parameters only.

use concierge_core::boundary::{KnowledgeState, LogEntry, LogQuery, fts_any_of};
use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

use super::d1_store::service_error;

/// The statement bumping `site_id`'s knowledge-base version (to batch with a write).
pub(crate) fn bump(db: &D1Database, site_id: &str) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO kb_versions (site_id, version) VALUES (?1, 1) \
         ON CONFLICT (site_id) DO UPDATE SET version = version + 1",
    )
    .bind(&[site_id.into()])
}

/// The site's version and whether it has logs, in one statement.
pub(crate) async fn state(db: &D1Database, site_id: &str) -> Result<KnowledgeState, ServiceError> {
    #[derive(Deserialize)]
    struct Row {
        version: Option<f64>,
        has_logs: f64,
    }
    let row = db
        .prepare(
            "SELECT (SELECT version FROM kb_versions WHERE site_id = ?1) AS version, \
             EXISTS (SELECT 1 FROM kb_logs WHERE site_id = ?1) AS has_logs",
        )
        .bind(&[site_id.into()])
        .map_err(service_error)?
        .first::<Row>(None)
        .await
        .map_err(service_error)?;
    Ok(
        row.map_or_else(KnowledgeState::default, |r| KnowledgeState {
            version: format!("{}", r.version.unwrap_or(0.0) as u64),
            has_logs: r.has_logs > 0.0,
        }),
    )
}

/// Full-text search over the site's logs (any of the query's words), best matches first.
pub(crate) async fn search(
    db: &D1Database,
    site_id: &str,
    query: &LogQuery,
) -> Result<Vec<LogEntry>, ServiceError> {
    let fts = fts_any_of(&query.keywords);
    if fts.is_empty() {
        return Ok(Vec::new());
    }
    let optional = |v: &Option<String>| v.as_deref().map_or(JsValue::NULL, JsValue::from);
    db.prepare(
        "SELECT l.id, l.ts, l.level, l.source, l.message FROM kb_logs_fts f \
         JOIN kb_logs l ON l.rowid = f.rowid \
         WHERE kb_logs_fts MATCH ?2 AND l.site_id = ?1 \
         AND (?3 IS NULL OR l.ts >= ?3) AND (?4 IS NULL OR l.ts <= ?4) \
         ORDER BY bm25(kb_logs_fts), l.ts DESC LIMIT ?5",
    )
    .bind(&[
        site_id.into(),
        fts.into(),
        optional(&query.since),
        optional(&query.until),
        JsValue::from_f64(query.limit.clamp(1, 100) as f64),
    ])
    .map_err(service_error)?
    .all()
    .await
    .map_err(service_error)?
    .results::<LogEntry>()
    .map_err(service_error)
}

/// Replaces the site's logs with `entries` (and bumps the version), in one batch.
pub(crate) async fn replace_logs(
    db: &D1Database,
    site_id: &str,
    entries: &[LogEntry],
) -> worker::Result<()> {
    let mut statements = vec![
        db.prepare("DELETE FROM kb_logs WHERE site_id = ?1")
            .bind(&[site_id.into()])?,
    ];
    for entry in entries {
        statements.push(
            db.prepare(
                "INSERT INTO kb_logs (site_id, id, ts, level, source, message) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .bind(&[
                site_id.into(),
                entry.id.as_str().into(),
                entry.ts.as_str().into(),
                entry.level.as_str().into(),
                entry.source.as_str().into(),
                entry.message.as_str().into(),
            ])?,
        );
    }
    statements.push(bump(db, site_id)?);
    db.batch(statements).await?;
    Ok(())
}

/// Bumps the version on its own (after a delete).
pub(crate) async fn bump_now(db: &D1Database, site_id: &str) -> worker::Result<()> {
    bump(db, site_id)?.run().await.map(|_| ())
}
