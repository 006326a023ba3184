//! `knowledge`'s D1 table besides documents: the per-site knowledge-base version
//! (`kb_versions`) in every cache key, and whether the site has uploaded logs (the logs
//! themselves live in the site's object, `crate::site_object`). Bound parameters only.
//!
//! A turn reads the state from this isolate's memory while it is [`TRUST_MS`] old at most
//! (so a turn runs no D1 statement, issue 47); this isolate's own changes forget it at once,
//! another isolate's apply within [`TRUST_MS`].

use std::cell::RefCell;
use std::collections::HashMap;

use concierge_core::boundary::KnowledgeState;
use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

use super::d1_store::service_error;

/// How long a remembered state is trusted.
const TRUST_MS: u64 = 10_000;

/// At most this many sites remembered (past it, the map starts again).
const MAX_SITES: usize = 4096;

thread_local! {
    static STATES: RefCell<HashMap<String, (KnowledgeState, u64)>> = RefCell::new(HashMap::new());
}

/// `site_id`'s knowledge base changed in this isolate: read its state again next time.
pub(crate) fn forget(site_id: &str) {
    STATES.with(|s| s.borrow_mut().remove(site_id));
}

/// The statement bumping `site_id`'s knowledge-base version (to batch with a write; the
/// caller [`forget`]s the state once it ran).
pub(crate) fn bump(db: &D1Database, site_id: &str) -> worker::Result<D1PreparedStatement> {
    forget(site_id);
    db.prepare(
        "INSERT INTO kb_versions (site_id, version) VALUES (?1, 1) \
         ON CONFLICT (site_id) DO UPDATE SET version = version + 1",
    )
    .bind(&[site_id.into()])
}

/// The site's version and whether it has logs: remembered, or read in one statement (no
/// row: version 0, none).
pub(crate) async fn state(db: &D1Database, site_id: &str) -> Result<KnowledgeState, ServiceError> {
    let now = crate::runtime::now_ms();
    let known = STATES.with(|s| s.borrow().get(site_id).cloned());
    if let Some((state, at)) = known
        && now.saturating_sub(at) < TRUST_MS
    {
        return Ok(state);
    }
    let state = read_state(db, site_id).await?;
    STATES.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() >= MAX_SITES {
            s.clear();
        }
        s.insert(site_id.to_owned(), (state.clone(), now));
    });
    Ok(state)
}

async fn read_state(db: &D1Database, site_id: &str) -> Result<KnowledgeState, ServiceError> {
    #[derive(Deserialize)]
    struct Row {
        version: f64,
        has_logs: f64,
    }
    let row = db
        .prepare("SELECT version, has_logs FROM kb_versions WHERE site_id = ?1")
        .bind(&[site_id.into()])
        .map_err(service_error)?
        .first::<Row>(None)
        .await
        .map_err(service_error)?;
    Ok(
        row.map_or_else(KnowledgeState::default, |r| KnowledgeState {
            version: format!("{}", r.version as u64),
            has_logs: r.has_logs > 0.0,
        }),
    )
}

/// After an upload replaced the site's logs (in the site's object, `crate::site_object`):
/// whether it has any now, and the version bumped, in one statement.
pub(crate) async fn logs_replaced(
    db: &D1Database,
    site_id: &str,
    has_logs: bool,
) -> worker::Result<()> {
    db.prepare(
        "INSERT INTO kb_versions (site_id, version, has_logs) VALUES (?1, 1, ?2) \
         ON CONFLICT (site_id) DO UPDATE SET version = version + 1, has_logs = excluded.has_logs",
    )
    .bind(&[
        site_id.into(),
        JsValue::from_f64(f64::from(u8::from(has_logs))),
    ])?
    .run()
    .await
    .map(|_| ())?;
    forget(site_id);
    Ok(())
}

/// Bumps the version on its own (after a delete).
pub(crate) async fn bump_now(db: &D1Database, site_id: &str) -> worker::Result<()> {
    let bumped = bump(db, site_id)?.run().await.map(|_| ());
    forget(site_id);
    bumped
}
