//! Binding-call counters, on only while the var `COUNT_BINDINGS` is (the storage-budget
//! test and the load benchmark; `wrangler.toml` leaves it off). The env a request, queue
//! batch or Durable Object gets, and an object's state, are wrapped (`edge/js/count.js`)
//! so that every call on a binding is counted at the binding's edge before it goes on
//! unchanged: D1 statements, batches, rows and D1's own milliseconds, KV operations,
//! Durable Object requests and storage operations, queue messages, and any other
//! binding's calls by method. `GET /debug/bindings` (`routes::stream`) reads the counters.

use wasm_bindgen::prelude::*;
use worker::worker_sys::DurableObjectState;
use worker::{Env, State};

use crate::runtime::var_on;

#[wasm_bindgen(module = "/js/count.js")]
extern "C" {
    #[wasm_bindgen(js_name = wrapEnv)]
    fn wrap_env(env: &JsValue, scope: &str) -> JsValue;
    #[wasm_bindgen(js_name = wrapState)]
    fn wrap_state(state: &JsValue) -> JsValue;
    fn snapshot() -> String;
    fn record(key: &str, n: f64);
}

/// The var that turns counting on.
const FLAG: &str = "COUNT_BINDINGS";

/// `env`, counted when counting is on, its calls attributed to `scope` (`fetch`,
/// `object`, `queue.<name>`, `scheduled`).
pub(crate) fn env(env: Env, scope: &str) -> Env {
    if var_on(&env, FLAG) {
        wrap_env(&env, scope).unchecked_into()
    } else {
        env
    }
}

/// A Durable Object's `state`, its storage counted when counting is on.
pub(crate) fn state(state: State, env: &Env) -> State {
    if var_on(env, FLAG) {
        let inner: JsValue = state._inner().into();
        State::from(wrap_state(&inner).unchecked_into::<DurableObjectState>())
    } else {
        state
    }
}

/// A queue batch of `messages` delivered to this Worker from `queue`
/// (`queue.<queue>:delivered`): the storage-budget test waits until every message sent has
/// been delivered before it reads the counters.
pub(crate) fn delivered(queue: &str, messages: usize) {
    record(&format!("queue.{queue}:delivered"), messages as f64);
}

/// A call to the object of site `site_id` (`site:calls.<site id>`) when counting is on:
/// which site's object did the work (issue 47's noisy-neighbour test).
pub(crate) fn site_call(env: &Env, site_id: &str) {
    if on(env) {
        record(&format!("site:calls.{site_id}"), 1.0);
    }
}

/// Whether counting is on.
pub(crate) fn on(env: &Env) -> bool {
    var_on(env, FLAG)
}

/// Every counter of this isolate since it started, as a flat JSON object
/// (`{"d1.DB.statements": 12, "kv.CONFIG.get": 3, …}`).
pub(crate) fn counters() -> String {
    snapshot()
}
