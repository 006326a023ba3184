//! The conversation's record in its own Durable Object, and the site's copy of its
//! conversations in the site's object (issue 47, items 1 and 2; `edge/js/record.js`).
//!
//! The conversation object's SQLite holds the conversation's rows in the schema the shared
//! D1 had (`conversations`, `messages`, `summaries`, `message_feedback`), so [`D1Store`]'s
//! SQL runs on it unchanged through a D1-shaped handle:
//!
//! - in the object, the env carries its record as `RECORD` ([`with_record`]): every turn's
//!   reads and writes are the object's own transactions, and none waits for another site;
//! - in the Worker, a write to a conversation (its creation, a vote, an embedding's mark, a
//!   turn that runs in the Worker) runs in the conversation's object ([`remote`], `POST
//!   /sql`): the object is the one writer of its rows;
//! - the Worker reads one conversation (history, a turn's context, its votes) in its object
//!   too, and the site's conversations together (the console, exports, stats, the handoff
//!   queue) in the site's object ([`site`]), which keeps a copy of every conversation of
//!   its site.
//!
//! Each change is sent on to the site's object in one request a turn, before the turn's
//! reply is final (or a few seconds after a write nobody waits for), and before any other
//! request the object answers; a failed send is tried again by the object's alarm. No turn
//! touches the shared D1: it holds conversations only as the source of a deployment's
//! upgrade, read once per site by its object ([`open_site`]).
//!
//! [`D1Store`]: super::d1_store::D1Store

use concierge_core::conversation::Scope;
use wasm_bindgen::prelude::*;
use worker::{D1Database, Env};

#[wasm_bindgen(module = "/js/record.js")]
extern "C" {
    #[wasm_bindgen(js_name = localDb)]
    fn local_db(storage: &JsValue, sites: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = siteDb)]
    fn site_db(namespace: &JsValue, site: &str) -> JsValue;
    #[wasm_bindgen(js_name = openSite, catch)]
    async fn open_site_js(storage: &JsValue, d1: &JsValue, site: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = executeSite, catch)]
    async fn execute_site(storage: &JsValue, body: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = remoteDb)]
    fn remote_db(namespace: &JsValue, site: &str, conversation: &str, fresh: bool) -> JsValue;
    #[wasm_bindgen(js_name = withRecord)]
    fn with_record_js(env: &JsValue, db: &JsValue) -> JsValue;
    #[wasm_bindgen(catch)]
    async fn open(
        db: &JsValue,
        site: &str,
        conversation: &str,
        fresh: bool,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    async fn settle(db: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    async fn execute(db: &JsValue, body: &str) -> Result<JsValue, JsValue>;
    fn closed(db: &JsValue);
    fn changed(db: &JsValue) -> bool;
}

/// The object's binding name of its own record.
const RECORD: &str = "RECORD";

/// The header a creating write carries: the conversation is new, nothing to import.
pub(crate) const FRESH_HEADER: &str = "x-concierge-fresh";

/// The site objects' binding (`wrangler.toml`).
const SITES: &str = "SITES";

/// The object's env with its record (`storage`: the object's state's storage).
pub(crate) fn with_record(env: Env, storage: &JsValue) -> Env {
    let sites = js_sys::Reflect::get(&env, &JsValue::from_str(SITES)).unwrap_or(JsValue::UNDEFINED);
    let db = local_db(storage, &sites);
    with_record_js(&env, &db).unchecked_into()
}

/// A handle whose statements run on the copy of `site_id`'s conversations in its object.
pub(crate) fn site(env: &Env, site_id: &str) -> worker::Result<D1Database> {
    let namespace = js_sys::Reflect::get(env, &JsValue::from_str(SITES)).map_err(error)?;
    Ok(site_db(&namespace, site_id).unchecked_into())
}

/// In the site's object (`storage`: its own): its copy of the site's conversations opened,
/// the site's rows of the shared D1 (`d1`) imported the first time.
pub(crate) async fn open_site(
    storage: &JsValue,
    d1: &D1Database,
    site_id: &str,
) -> worker::Result<()> {
    open_site_js(storage, d1.as_ref(), site_id)
        .await
        .map(drop)
        .map_err(error)
}

/// The site object's side of [`site`]: runs a request's statements (JSON) as one batch on
/// its copy, answering the results as JSON text.
pub(crate) async fn run_site(storage: &JsValue, body: &str) -> worker::Result<String> {
    let out = execute_site(storage, body).await.map_err(error)?;
    out.as_string()
        .ok_or_else(|| worker::Error::RustError("no results".into()))
}

/// The record `env` carries: in a conversation object, its own; `None` elsewhere.
pub(crate) fn of(env: &Env) -> Option<D1Database> {
    let db = js_sys::Reflect::get(env, &JsValue::from_str(RECORD)).ok()?;
    db.is_object().then(|| db.unchecked_into())
}

/// A handle whose statements run in the object of `scope`'s conversation (`fresh`: one
/// being created).
pub(crate) fn remote(env: &Env, scope: Scope<'_>, fresh: bool) -> worker::Result<D1Database> {
    let namespace = js_sys::Reflect::get(env, &JsValue::from_str(crate::object::client::BINDING))
        .map_err(error)?;
    Ok(remote_db(&namespace, scope.site_id, scope.conversation_id, fresh).unchecked_into())
}

fn error(err: JsValue) -> worker::Error {
    worker::Error::from(err)
}

/// Opens the record of `env`'s object for `scope` (tables; rows imported from the site's
/// object the first time, unless the conversation is `fresh`).
pub(crate) async fn open_for(env: &Env, scope: Scope<'_>, fresh: bool) -> worker::Result<()> {
    let Some(db) = of(env) else {
        return Ok(());
    };
    open(db.as_ref(), scope.site_id, scope.conversation_id, fresh)
        .await
        .map(drop)
        .map_err(error)
}

/// Waits until every change of `db` (a record) has reached the site's object.
pub(crate) async fn settled(db: &D1Database) -> worker::Result<()> {
    settle(db.as_ref()).await.map(drop).map_err(error)
}

/// Another handle on the same database (workers-rs's wrapper is not `Clone`).
pub(crate) fn same(db: &D1Database) -> D1Database {
    db.as_ref().clone().unchecked_into()
}

/// The object's side of [`remote`]: runs a request's statements (JSON) as one batch on its
/// record, answering the results as JSON text.
pub(crate) async fn run_remote(env: &Env, body: &str) -> worker::Result<String> {
    let db = of(env).ok_or_else(|| worker::Error::RustError("no record".into()))?;
    let out = execute(db.as_ref(), body).await.map_err(error)?;
    out.as_string()
        .ok_or_else(|| worker::Error::RustError("no results".into()))
}

/// Whether the last [`run_remote`] changed the record (only a change is sent on).
pub(crate) fn changed_last(env: &Env) -> bool {
    of(env).is_some_and(|db| changed(db.as_ref()))
}

/// The object's storage was deleted: its record opens anew (empty) on next use.
pub(crate) fn forgotten(env: &Env) {
    if let Some(db) = of(env) {
        closed(db.as_ref());
    }
}
