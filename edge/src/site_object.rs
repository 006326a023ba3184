//! The site's own Durable Object, [`SiteObject`] (binding `SITES`, named by the site id,
//! SQLite-backed): the home of what belongs to one site and to no other, so that one
//! merchant's data work runs in its own database, beside nobody's (issue 47; the rest of
//! the site's data follows it there).
//!
//! It holds today the merchant's uploaded logs (`knowledge`'s `log_tool`): a `logs` table
//! with its FTS5 index kept in step by triggers, replaced whole by an upload and searched
//! by a turn. Before this object they lived in the shared D1's `kb_logs`: the first call to
//! a site's object imports that site's rows from D1 once (then deletes them there), so a
//! deployment that upgrades keeps every line ([`Inner::import`]).
//!
//! The Worker calls it with one typed [`SiteCall`] (JSON, `POST https://site/call`) and
//! gets JSON back; the object is reachable only through the binding, so it trusts what it
//! is sent (the Worker has authenticated the merchant and validated the upload).

use std::cell::Cell;

use concierge_core::boundary::{LogEntry, LogQuery, fts_any_of};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use worker::worker_sys::DurableObjectState;
use worker::{
    DurableObject, Env, Method, Request, RequestInit, Response, SqlStorage, SqlStorageValue, State,
    durable_object,
};

use crate::error::ApiError;

/// The binding of the site objects' namespace (`wrangler.toml`).
const BINDING: &str = "SITES";

/// What the Worker asks a site's object.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum SiteCall {
    /// Replace the site's logs with these (an upload); answers `{"lines": n}`.
    ReplaceLogs { entries: Vec<LogEntry> },
    /// Full-text search over the logs (any of the words), best first; answers the entries.
    SearchLogs {
        fts: String,
        since: Option<String>,
        until: Option<String>,
        limit: u32,
    },
}

/// The site's object (see the module's documentation).
#[durable_object]
pub struct SiteObject {
    state: State,
    /// The state's `storage`, for `transactionSync` (which workers-rs does not wrap).
    storage: JsValue,
    env: Env,
    /// Whether this instance has run [`SCHEMA`] and the import.
    ready: Cell<bool>,
}

impl std::fmt::Debug for SiteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteObject").finish_non_exhaustive()
    }
}

/// The object's schema: created on first use, `IF NOT EXISTS` so every instance may run it.
const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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

/// The `meta` key set once the site's rows of the shared D1's `kb_logs` are imported.
const IMPORTED: &str = "imported_kb_logs";

impl DurableObject for SiteObject {
    fn new(state: State, env: Env) -> Self {
        let env = crate::bindings::count::env(env, "site");
        let inner: JsValue = state._inner().into();
        let storage = js_sys::Reflect::get(&inner, &"storage".into()).unwrap_or(JsValue::UNDEFINED);
        let state = State::from(inner.unchecked_into::<DurableObjectState>());
        Self {
            state,
            storage,
            env,
            ready: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let site_id = req.headers().get(SITE_HEADER)?.unwrap_or_default();
        let call: SiteCall = match req.json().await {
            Ok(call) => call,
            Err(_) => return ApiError::bad_request("Not a site call.").into_response(),
        };
        match self.serve(&site_id, call).await {
            Ok(response) => Ok(response),
            Err(error) => error.into_response(),
        }
    }
}

impl SiteObject {
    fn sql(&self) -> SqlStorage {
        self.state.storage().sql()
    }

    /// Runs `body` as one transaction (`storage.transactionSync`): all of it, or nothing
    /// when it fails.
    fn transaction(
        &self,
        body: impl FnOnce() -> worker::Result<()> + 'static,
    ) -> worker::Result<()> {
        let run = Closure::once(move || body().map_err(JsValue::from));
        let sync: js_sys::Function =
            js_sys::Reflect::get(&self.storage, &"transactionSync".into())?.dyn_into()?;
        sync.call1(&self.storage, run.as_ref())?;
        Ok(())
    }

    async fn serve(&self, site_id: &str, call: SiteCall) -> Result<Response, ApiError> {
        if !self.ready.get() {
            self.sql().exec(SCHEMA, None)?;
            self.import(site_id).await?;
            self.ready.set(true);
        }
        match call {
            SiteCall::ReplaceLogs { entries } => {
                let sql = self.sql();
                let lines = entries.len();
                self.transaction(move || {
                    sql.exec("DELETE FROM logs", None)?;
                    insert_logs(&sql, &entries)
                })?;
                Ok(Response::from_json(&serde_json::json!({ "lines": lines }))?)
            }
            SiteCall::SearchLogs {
                fts,
                since,
                until,
                limit,
            } => {
                let entries: Vec<LogEntry> = self
                    .sql()
                    .exec(
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
                    .to_array()?;
                Ok(Response::from_json(&entries)?)
            }
        }
    }

    /// Once per site: its rows of the shared D1's `kb_logs` (where logs lived before this
    /// object) copied here in one transaction, then deleted there. A failed copy leaves the
    /// flag unset and is tried again by the next call; a failed delete only leaves rows
    /// nobody reads.
    async fn import(&self, site_id: &str) -> Result<(), ApiError> {
        let sql = self.sql();
        let done = sql
            .exec(
                "SELECT value FROM meta WHERE key = ?1",
                vec![IMPORTED.into()],
            )?
            .to_array::<serde_json::Value>()?;
        if !done.is_empty() || site_id.is_empty() {
            return Ok(());
        }
        let db = self.env.d1("DB")?;
        let rows: Vec<LogEntry> = db
            .prepare("SELECT id, ts, level, source, message FROM kb_logs WHERE site_id = ?1")
            .bind(&[site_id.into()])?
            .all()
            .await?
            .results()?;
        let imported = rows.len();
        self.transaction(move || {
            insert_logs(&sql, &rows)?;
            sql.exec(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                vec![IMPORTED.into(), imported.to_string().into()],
            )?;
            Ok(())
        })?;
        if imported > 0 {
            let deleted = db
                .prepare("DELETE FROM kb_logs WHERE site_id = ?1")
                .bind(&[site_id.into()])?
                .run()
                .await;
            if let Err(err) = deleted {
                let line = serde_json::json!({
                    "level": "warn", "msg": "imported kb_logs not deleted", "site": site_id,
                    "detail": err.to_string(),
                });
                worker::console_warn!("{line}");
            }
        }
        Ok(())
    }
}

/// Inserts `entries` (ids unique per site: a repeated id keeps the last line).
fn insert_logs(sql: &SqlStorage, entries: &[LogEntry]) -> worker::Result<()> {
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

/// Header of every call: which site the object is (it learns it from its calls).
const SITE_HEADER: &str = "x-concierge-site";

/// Sends `call` to `site_id`'s object; its JSON answer.
async fn call<T: serde::de::DeserializeOwned>(
    env: &Env,
    site_id: &str,
    call: &SiteCall,
) -> Result<T, ApiError> {
    let stub = env
        .durable_object(BINDING)?
        .id_from_name(site_id)?
        .get_stub()?;
    let body = serde_json::to_string(call).map_err(|e| ApiError::Internal(e.into()))?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.into()));
    let req = Request::new_with_init("https://site/call", &init)?;
    req.headers().set(SITE_HEADER, site_id)?;
    let mut response = stub.fetch_with_request(req).await?;
    if response.status_code() != 200 {
        let text = response.text().await.unwrap_or_default();
        return Err(ApiError::Internal(
            format!("site object {}: {text}", response.status_code()).into(),
        ));
    }
    Ok(response.json().await?)
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
    let call_ = SiteCall::SearchLogs {
        fts,
        since: query.since.clone(),
        until: query.until.clone(),
        limit: query.limit.clamp(1, 100) as u32,
    };
    call(env, site_id, &call_).await
}
