//! The conversation's record in its own Durable Object (issue 47, item 1; `edge/js/record.js`).
//!
//! The conversation object's SQLite holds the conversation's rows in the shared D1's schema
//! (`conversations`, `messages`, `summaries`, `message_feedback`), so [`D1Store`]'s SQL runs
//! on it unchanged through a D1-shaped handle:
//!
//! - in the object, the env carries its record as `RECORD` ([`with_record`]): every turn's
//!   reads and writes are the object's own transactions, and none waits for another site;
//! - in the Worker, a write to a conversation (its creation, a vote, an embedding's mark, a
//!   turn that runs in the Worker) runs in the conversation's object ([`remote`], `POST
//!   /sql`): the object is the one writer of its rows.
//!
//! Each change is sent on to the shared D1, which the console and the site-wide reads still
//! read: after the visitor's message (not waited for) and before a turn's reply is final,
//! and before any other request the object answers; a failed send is tried again by the
//! object's alarm. A conversation the shared D1 held before is imported on first use.
//!
//! [`D1Store`]: super::d1_store::D1Store

use concierge_core::conversation::Scope;
use wasm_bindgen::prelude::*;
use worker::{D1Database, Env};

#[wasm_bindgen(module = "/js/record.js")]
extern "C" {
    #[wasm_bindgen(js_name = localDb)]
    fn local_db(storage: &JsValue, d1: &JsValue) -> JsValue;
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
}

/// The object's binding name of its own record.
const RECORD: &str = "RECORD";

/// The header a creating write carries: the conversation is new, nothing to import.
pub(crate) const FRESH_HEADER: &str = "x-concierge-fresh";

/// The object's env with its record (`storage`: the object's state's storage).
pub(crate) fn with_record(env: Env, storage: &JsValue) -> Env {
    let shared: JsValue = env
        .d1("DB")
        .map(JsValue::from)
        .unwrap_or(JsValue::UNDEFINED);
    let db = local_db(storage, &shared);
    with_record_js(&env, &db).unchecked_into()
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

/// Opens the record of `env`'s object for `scope` (tables; rows imported from the shared D1
/// the first time, unless the conversation is `fresh`).
pub(crate) async fn open_for(env: &Env, scope: Scope<'_>, fresh: bool) -> worker::Result<()> {
    let Some(db) = of(env) else {
        return Ok(());
    };
    open(db.as_ref(), scope.site_id, scope.conversation_id, fresh)
        .await
        .map(drop)
        .map_err(error)
}

/// Waits until every change of `db` (a record) has reached the shared D1.
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

/// The object's storage was deleted: its record opens anew (empty) on next use.
pub(crate) fn forgotten(env: &Env) {
    if let Some(db) = of(env) {
        closed(db.as_ref());
    }
}
