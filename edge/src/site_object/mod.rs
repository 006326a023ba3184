//! The site's own Durable Object, [`SiteObject`] (binding `SITES`, named by the site id,
//! SQLite-backed): the home of what belongs to one site and to no other, so that one
//! merchant's data work runs in its own database, beside nobody's (issue 47; the rest of
//! the site's data follows it there).
//!
//! It holds today the merchant's uploaded logs (`knowledge`'s `log_tool`, [`logs`]: FTS5),
//! warranty records (`shop`'s serial lookup, [`warranty`]), data sets (`analyst`'s,
//! [`data`]), `rental`'s users, learned Q&A and seed sessions ([`rental`]; the rental
//! listings have an instance of their own, `listings/{site id}`, that holds nothing else:
//! [`listings`]), the visitors to call back with the pages visitors asked for a person
//! from ([`follow_ups`], issue 45), and, on the local retrieval path, the site's vectors
//! ([`vectors`]). Before this object all but the follow-ups lived in the shared D1
//! (`kb_logs`, `warranty_records`, `data_connections`/`data_rows`, `rental_*`,
//! `local_vectors`, and the listings in `LISTINGS`): the first call to a site's object imports that site's rows once,
//! then deletes them there, so a deployment that upgrades keeps every line, record and row
//! ([`SiteObject::import`]; `rental`'s on its first rental call).
//!
//! The Worker calls it with one typed [`SiteCall`] (JSON, `POST https://site/call`) and
//! gets JSON back; the object is reachable only through the binding, so it trusts what it
//! is sent (the Worker has authenticated the merchant and validated the upload).

use std::cell::Cell;

use concierge_core::boundary::{LogEntry, WarrantyRecord};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use worker::worker_sys::DurableObjectState;
use worker::{
    DurableObject, Env, Method, Request, RequestInit, Response, SqlStorage, State, durable_object,
};

use crate::error::ApiError;

pub(crate) mod data;
pub(crate) mod follow_ups;
pub(crate) mod listings;
pub(crate) mod logs;
pub(crate) mod rental;
pub(crate) mod vectors;
pub(crate) mod warranty;

/// The binding of the site objects' namespace (`wrangler.toml`).
const BINDING: &str = "SITES";

/// What the Worker asks a site's object (externally tagged: `{"search_logs": {…}}`, the
/// lightest shape to decode).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// Insert or replace warranty records, refused whole past `cap` records; answers
    /// `{"over": bool}`.
    UpsertWarranty {
        records: Vec<WarrantyRecord>,
        cap: u64,
    },
    /// The record of `serial` (any letter case), or `null`.
    FindWarranty { serial: String },
    /// How many warranty records the site holds: `{"n": count}`.
    CountWarranty,
    // `analyst`'s data sets (issue 47's move of `data_connections`/`data_rows`): one
    // variant carrying the data calls (`data::DataCall`, answered by `data::serve`).
    /// A data set call.
    Data(data::DataCall),
    // ---- Issue 45 (follow_ups.rs): visitors to call back, the page a visitor asked for a
    // person from. Kept in one block; tuple variants of text and numbers (JSON built by the
    // Worker or SQLite): each named field would cost the Worker's size a decoder.
    /// Leave a follow-up (`follow_ups::NewFollowUp`'s JSON text) replacing the
    /// conversation's open one; answers `{"follow_up": {…}, "replaced"}` or `null`.
    LeaveFollowUp(String),
    /// The site's follow-ups, open first, this many in all; answers `{"open",
    /// "follow_ups"}`.
    FollowUps(u32),
    /// Mark follow-up `.0` done at `.1` (Unix ms); answers it, or `null` when there is none.
    FollowUpDone(String, u64),
    /// Record that conversation `.0` asked for a person from page `.1` at `.2`; answers
    /// `null`.
    SetPage(String, String, u64),
    /// The recorded pages of these conversations (a JSON array of ids):
    /// `{"<id>": "<page>"}`.
    Pages(String),
    // ---- end of issue 45's block.
    // `rental` (issue 47): its users, learned Q&A and seed sessions, its listings (their own
    // instance), and the tests' SQL.
    /// A `rental` call ([`rental::RentalCall`]); answers its JSON.
    Rental(rental::RentalCall),
    /// A call of a site's listings' instance ([`listings::ListingsCall`]); answers its JSON.
    Listings(listings::ListingsCall),
    /// Statements (`[[query, params], …]`, JSON text) run as one batch on the site's copy of
    /// its conversations (`bindings::record::site`: the Worker's reads, the conversation
    /// objects' sends); answers `{"results": […]}`, or a 500 naming SQLite's reason.
    Records(String),
    /// A call of the site's vectors on the local retrieval path ([`vectors::VectorsCall`]:
    /// the local counterpart of its Vectorize namespace); answers its JSON.
    Vectors(vectors::VectorsCall),
    /// Test only (`POST /debug/site-sql`, while `DEBUG_ROUTES` is on): one statement run
    /// in the object, answering its rows; the sessions' alarm is set again after it.
    DebugSql(String),
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
    /// Whether a call is running the import now (the others wait for it: two imports at once
    /// could copy rows a third call has replaced or deleted meanwhile).
    importing: Cell<bool>,
    /// Whether a [`data::sweep`] is running.
    sweeping: std::rc::Rc<Cell<bool>>,
}

impl std::fmt::Debug for SiteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteObject").finish_non_exhaustive()
    }
}

/// The object's own table; each part adds its own (`logs::SCHEMA`, `warranty::SCHEMA`),
/// all `IF NOT EXISTS`, run once per instance.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);";

/// The `meta` key set once the site's rows of the shared D1 are imported.
const IMPORTED: &str = "imported_d1";

impl DurableObject for SiteObject {
    fn new(state: State, env: Env) -> Self {
        let env = crate::bindings::retry::env(crate::bindings::count::env(env, "site"));
        let inner: JsValue = state._inner().into();
        let storage = js_sys::Reflect::get(&inner, &"storage".into()).unwrap_or(JsValue::UNDEFINED);
        let state = State::from(inner.unchecked_into::<DurableObjectState>());
        Self {
            state,
            storage,
            env,
            ready: Cell::new(false),
            importing: Cell::new(false),
            sweeping: std::rc::Rc::default(),
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let site_id = req.headers().get(SITE_HEADER)?.unwrap_or_default();
        crate::bindings::count::site_call(&self.env, &site_id);
        let call: SiteCall = match req.json().await {
            Ok(call) => call,
            Err(_) => return ApiError::bad_request("Not a site call.").into_response(),
        };
        match self.serve(&site_id, call).await {
            Ok(response) => Ok(response),
            Err(error) => error.into_response(),
        }
    }

    /// `rental`'s idle sessions end (the only alarm this object sets).
    async fn alarm(&self) -> worker::Result<Response> {
        rental::end_idle_sessions(self).await;
        Response::empty()
    }
}

impl SiteObject {
    fn sql(&self) -> SqlStorage {
        self.state.storage().sql()
    }

    /// Deletes the rows of replaced and deleted data sets in the background
    /// ([`data::sweep`]), unless a sweep is running.
    fn sweep_data(&self) {
        wasm_bindgen_futures::spawn_local(data::sweep(self.sql(), self.sweeping.clone()));
    }

    /// Runs `body` as one transaction (`storage.transactionSync`): all of it, or nothing
    /// when it fails.
    fn transaction(
        &self,
        body: impl FnOnce() -> worker::Result<()> + 'static,
    ) -> worker::Result<()> {
        self.transaction_of(Box::new(body))
    }

    /// [`Self::transaction`]'s one copy of the JavaScript closure's glue.
    fn transaction_of(&self, body: Box<dyn FnOnce() -> worker::Result<()>>) -> worker::Result<()> {
        transaction(&self.storage, body)
    }

    async fn serve(&self, site_id: &str, call: SiteCall) -> Result<Response, ApiError> {
        let call = match call {
            // The listings' own instance: none of the site's tables or imports.
            SiteCall::Listings(call) => {
                return Ok(Response::from_json(&self.listings(site_id, call).await?)?);
            }
            call => call,
        };
        while !self.ready.get() {
            if self.importing.replace(true) {
                worker::Delay::from(std::time::Duration::from_millis(5)).await;
                continue;
            }
            let sql = self.sql();
            let mut prepared = Ok(());
            for schema in [
                SCHEMA,
                logs::SCHEMA,
                warranty::SCHEMA,
                data::SCHEMA,
                follow_ups::SCHEMA,
                rental::SCHEMA,
                vectors::SCHEMA,
            ] {
                prepared = prepared.and_then(|()| sql.exec(schema, None).map(drop));
            }
            let imported = match prepared {
                Ok(()) => self.import(site_id).await,
                Err(error) => Err(error.into()),
            };
            self.importing.set(false);
            imported?;
            self.ready.set(true);
        }
        let sql = self.sql();
        let answer = match call {
            SiteCall::ReplaceLogs { entries } => {
                let lines = entries.len();
                self.transaction(move || logs::replace(&sql, &entries))?;
                serde_json::json!({ "lines": lines })
            }
            SiteCall::SearchLogs {
                fts,
                since,
                until,
                limit,
            } => serde_json::to_value(logs::search(&sql, fts, since, until, limit)?)
                .map_err(worker::Error::from)?,
            SiteCall::UpsertWarranty { records, cap } => {
                let over = std::rc::Rc::new(Cell::new(false));
                let flag = over.clone();
                let written = self.transaction(move || {
                    warranty::upsert(&sql, &records)?;
                    if warranty::count(&sql)? > cap {
                        flag.set(true);
                        return Err(worker::Error::RustError("over the cap".into()));
                    }
                    Ok(())
                });
                if !over.get() {
                    written?;
                }
                serde_json::json!({ "over": over.get() })
            }
            SiteCall::FindWarranty { serial } => {
                serde_json::to_value(warranty::find(&sql, &serial)?).map_err(worker::Error::from)?
            }
            SiteCall::CountWarranty => serde_json::json!({ "n": warranty::count(&sql)? }),
            SiteCall::Data(call) => return data::serve(self, call),
            // Issue 45's calls answer JSON text SQLite built (follow_ups.rs).
            SiteCall::LeaveFollowUp(new) => return json_text(follow_ups::leave(&sql, &new)?),
            SiteCall::FollowUps(limit) => return json_text(follow_ups::list(&sql, limit)?),
            SiteCall::FollowUpDone(id, at) => return json_text(follow_ups::done(&sql, &id, at)?),
            SiteCall::SetPage(conversation_id, page, at) => {
                follow_ups::set_page(&sql, &conversation_id, &page, at)?;
                return json_text("null".into());
            }
            SiteCall::Pages(ids) => return json_text(follow_ups::pages(&sql, &ids)?),
            SiteCall::Records(body) => {
                return match crate::bindings::record::run_site(&self.storage, &body).await {
                    Ok(out) => json_text(out),
                    Err(error) => {
                        let body = serde_json::json!({"error": {"code": "record", "message": error.to_string()}});
                        Ok(Response::from_json(&body)?.with_status(500))
                    }
                };
            }
            SiteCall::Vectors(call) => return json_text(vectors::serve(self, call)?),
            SiteCall::Rental(call) => self.rental(site_id, call).await?,
            SiteCall::Listings(_) => serde_json::Value::Null, // served above
            SiteCall::DebugSql(text) => {
                let rows: Vec<serde_json::Value> = sql.exec(&text, None)?.to_array()?;
                rental::arm_sessions(self, site_id, true).await?;
                serde_json::Value::from(rows)
            }
        };
        Ok(Response::from_json(&answer)?)
    }

    /// Once per site: its rows of the shared D1 (where its logs and warranty records lived
    /// before this object) copied here, each part in one transaction, then deleted there.
    /// A failed copy leaves the flag unset and is tried again by the next call (copies
    /// replace by key, so a repeat is harmless); a failed delete only leaves rows nobody
    /// reads.
    ///
    /// Data sets moved here later, under a flag of their own ([`data::IMPORTED`]), the
    /// local retrieval path's vectors too ([`vectors::IMPORTED`]), and the site's
    /// conversations after them (their own flag; kept in the shared D1, frozen, as
    /// the source a conversation's object never reads again).
    async fn import(&self, site_id: &str) -> Result<(), ApiError> {
        let sql = self.sql();
        let done = |key: &str| -> worker::Result<bool> {
            let found = sql
                .exec("SELECT value FROM meta WHERE key = ?1", vec![key.into()])?
                .raw()
                .next()
                .is_some();
            Ok(found)
        };
        let mark = |key: &str, n: usize| {
            sql.exec(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                vec![key.into(), n.to_string().into()],
            )
        };
        if site_id.is_empty() {
            return Ok(());
        }
        if !done(IMPORTED)? {
            let db = self.env.d1("DB")?;
            let imported = logs::import(self, &db, site_id).await?
                + warranty::import(self, &db, site_id).await?;
            mark(IMPORTED, imported)?;
        }
        if !done(data::IMPORTED)? {
            let db = self.env.d1("DB")?;
            mark(data::IMPORTED, data::import(self, &db, site_id).await?)?;
        }
        if !done(vectors::IMPORTED)? {
            let db = self.env.d1("DB")?;
            mark(
                vectors::IMPORTED,
                vectors::import(self, &db, site_id).await?,
            )?;
        }
        // The copy of the site's conversations (`bindings::record`): its tables, and the
        // site's rows of the shared D1 the first time (under a flag of its own).
        let db = self.env.d1("DB")?;
        crate::bindings::record::open_site(&self.storage, &db, site_id).await?;
        Ok(())
    }
}

/// The first row's `n` of `query` (a `SELECT count(*) AS n …`): one row type for every
/// count (each serde type costs the Worker's size).
pub(super) fn count(sql: &SqlStorage, query: &str) -> worker::Result<u64> {
    #[derive(Deserialize)]
    struct Row {
        n: f64,
    }
    let rows: Vec<Row> = sql.exec(query, None)?.to_array()?;
    Ok(rows.first().map_or(0, |r| r.n as u64))
}

/// Runs `body` as one transaction of `storage` (`transactionSync`, which workers-rs does
/// not wrap): all of it, or nothing when it fails. Boxed: one JS closure shim for every
/// transaction's body.
fn transaction(
    storage: &JsValue,
    body: Box<dyn FnOnce() -> worker::Result<()>>,
) -> worker::Result<()> {
    let run = Closure::once(move || body().map_err(JsValue::from));
    let sync: js_sys::Function =
        js_sys::Reflect::get(storage, &"transactionSync".into())?.dyn_into()?;
    sync.call1(storage, run.as_ref())?;
    Ok(())
}

/// The first column of `query`'s first row.
fn first(
    sql: &SqlStorage,
    query: &str,
    params: Vec<worker::SqlStorageValue>,
) -> worker::Result<Option<worker::SqlStorageValue>> {
    Ok(sql
        .exec(query, params)?
        .raw()
        .next()
        .transpose()?
        .and_then(|row| row.into_iter().next()))
}

/// `value` as a number (0 when it is none).
fn number(value: Option<worker::SqlStorageValue>) -> f64 {
    match value {
        Some(worker::SqlStorageValue::Integer(n)) => n as f64,
        Some(worker::SqlStorageValue::Float(x)) => x,
        _ => 0.0,
    }
}

/// `value` as text, when it is.
fn text(value: Option<worker::SqlStorageValue>) -> Option<String> {
    match value {
        Some(worker::SqlStorageValue::String(s)) => Some(s),
        _ => None,
    }
}

/// Runs `delete` (a D1 statement removing rows this object has imported), logging a
/// failure: the rows are no longer read, so leaving them loses nothing.
async fn forget_imported(db: &worker::D1Database, site_id: &str, delete: &str) {
    let deleted = match db.prepare(delete).bind(&[site_id.into()]) {
        Ok(statement) => statement.run().await.map(|_| ()),
        Err(err) => Err(err),
    };
    if let Err(err) = deleted {
        let line = serde_json::json!({
            "level": "warn", "msg": "imported rows not deleted from D1", "site": site_id,
            "detail": err.to_string(),
        });
        worker::console_warn!("{line}");
    }
}

/// Header of every call: which site the object is (it learns it from its calls).
const SITE_HEADER: &str = "x-concierge-site";

/// A 200 whose body is `text`, JSON already.
pub(crate) fn json_text(text: String) -> Result<Response, ApiError> {
    let mut response = Response::ok(text)?;
    response
        .headers_mut()
        .set("content-type", "application/json")?;
    Ok(response)
}

/// Sends `call` to `site_id`'s object; its JSON answer.
pub(crate) async fn call<T: serde::de::DeserializeOwned>(
    env: &Env,
    site_id: &str,
    call: &SiteCall,
) -> Result<T, ApiError> {
    let text = call_text(env, site_id, call).await?;
    serde_json::from_str(&text).map_err(|e| ApiError::Corrupt(e.to_string()))
}

/// Sends `call` to `site_id`'s object; its answer's JSON text.
pub(crate) async fn call_text(
    env: &Env,
    site_id: &str,
    call: &SiteCall,
) -> Result<String, ApiError> {
    post(env, site_id, site_id, call).await
}

/// Sends `call` to the object named `name`, for site `site_id`; its JSON answer's text
/// (one copy of the request for every answer's type: callers parse it).
async fn post(env: &Env, name: &str, site_id: &str, call: &SiteCall) -> Result<String, ApiError> {
    let body = serde_json::to_string(call).map_err(|e| ApiError::Internal(e.into()))?;
    let stub = env
        .durable_object(BINDING)?
        .id_from_name(name)?
        .get_stub()?;
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
    Ok(response.text().await?)
}
