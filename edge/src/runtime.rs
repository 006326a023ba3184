//! What the Workers runtime gives every layer, below them all: the clock, the platform's
//! randomness, the Worker's vars as flags, and SHA-256.

use sha2::{Digest, Sha256};
use worker::{Date, Env};

use crate::error::ApiError;

/// Whether the Worker var `name` is on (`on`, `true` or `1`). Flags default to off.
pub(crate) fn var_on(env: &Env, name: &str) -> bool {
    env.var(name).is_ok_and(|v| {
        let value = v.to_string();
        ["on", "true", "1"]
            .iter()
            .any(|on| value.trim().eq_ignore_ascii_case(on))
    })
}

/// Now, in Unix milliseconds.
/// Gives the runtime's other work a turn: a zero timer. workerd runs every ready
/// continuation before it polls its sockets, so a long chain of in-process awaits (calls
/// to an object in the same process, as under `wrangler dev`) would keep new requests
/// waiting; a timer fires only once the loop polls.
pub(crate) async fn yield_now() {
    worker::Delay::from(std::time::Duration::ZERO).await;
}

pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// Fill `buf` from the platform's CSPRNG (`crypto.getRandomValues`).
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<(), ApiError> {
    use wasm_bindgen::JsCast;
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into())
        .ok()
        .and_then(|c| c.dyn_into::<web_crypto::Crypto>().ok())
        .ok_or_else(|| {
            ApiError::Internal(worker::Error::RustError("crypto is unavailable".into()))
        })?;
    crypto
        .get_random_values(buf)
        .map(|_| ())
        .map_err(|_| ApiError::Internal(worker::Error::RustError("getRandomValues failed".into())))
}

mod web_crypto {
    use wasm_bindgen::prelude::wasm_bindgen;

    #[wasm_bindgen]
    extern "C" {
        /// The Web Crypto global (`crypto`).
        #[derive(Debug, Clone)]
        pub type Crypto;

        #[wasm_bindgen(method, catch, js_name = getRandomValues)]
        pub fn get_random_values(
            this: &Crypto,
            buf: &mut [u8],
        ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
    }
}

/// SHA-256 of `text`, lowercase hex.
pub(crate) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
