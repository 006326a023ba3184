//! A busy store is not an error for a visitor: the env a request, queue batch or Durable
//! Object gets has its D1 bindings wrapped (`edge/js/retry.js`) so that a statement or
//! batch failing with a transient error (busy, overloaded, connection lost, object reset)
//! is tried again within about 0.8 s before the Worker sees the failure.

use wasm_bindgen::prelude::*;
use worker::Env;

#[wasm_bindgen(module = "/js/retry.js")]
extern "C" {
    #[wasm_bindgen(js_name = wrapEnv)]
    fn wrap_env(env: &JsValue) -> JsValue;
    fn inject(n: u32);
    fn retries() -> f64;
    fn transient(error: &JsValue) -> bool;
}

/// Whether an error's text is one of the transient store errors retry.js retries: still
/// there after the retries, the store is down (503), not the Worker broken (500).
pub(crate) fn is_transient(detail: &str) -> bool {
    transient(&JsValue::from_str(detail))
}

/// `env` with its D1 bindings retried on transient errors.
pub(crate) fn env(env: Env) -> Env {
    wrap_env(&env).unchecked_into()
}

/// Makes the next `n` D1 calls of this isolate fail as busy before they reach D1 (the
/// tests' `POST /debug/d1-faults`); how many calls were retried so far.
pub(crate) fn inject_faults(n: u32) -> u64 {
    inject(n);
    retries() as u64
}
