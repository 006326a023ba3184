//! # concierge-edge
//!
//! The Cloudflare Worker that serves Concierge's HTTP API. It is a thin adapter:
//! the entry point and router live here, handlers in [`routes`], and the mapping of
//! every error to an HTTP response in [`error`]. Static pages (`www/`) are served by
//! Workers static assets before this code runs.

use worker::{Context, Date, Env, Request, Response, event};

mod error;
mod routes;

pub(crate) use error::ApiError;

/// The Worker's fetch handler: route, map errors in one place, tag with a request id,
/// log one JSON line.
#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let started = Date::now().as_millis();
    let request_id = new_request_id();
    let method = req.method().to_string();
    let path = req.path();
    let route = routes::Route::of(req.method(), &path);
    let mut response = match routes::handle(route, req, &env).await {
        Ok(response) => response,
        Err(err) => err.into_response()?,
    };
    response.headers_mut().set("x-request-id", &request_id)?;
    let line = serde_json::json!({
        "level": "info",
        "msg": "request",
        "request_id": request_id,
        "method": method,
        "route": route.name(),
        "path": path,
        "status": response.status_code(),
        "duration_ms": Date::now().as_millis().saturating_sub(started),
    });
    worker::console_log!("{line}");
    Ok(response)
}

/// A random 128-bit request id in hex, from the platform's CSPRNG.
fn new_request_id() -> String {
    let mut bytes = [0u8; 16];
    if let Some(crypto) = web_crypto() {
        let _ = crypto.get_random_values_with_u8_array(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn web_crypto() -> Option<web_crypto::Crypto> {
    use wasm_bindgen::JsCast;
    let global = js_sys::global();
    js_sys::Reflect::get(&global, &"crypto".into())
        .ok()?
        .dyn_into()
        .ok()
}

mod web_crypto {
    use wasm_bindgen::prelude::wasm_bindgen;

    #[wasm_bindgen]
    extern "C" {
        /// The Web Crypto global (`crypto`).
        #[derive(Debug, Clone)]
        pub type Crypto;

        #[wasm_bindgen(method, catch, js_name = getRandomValues)]
        pub fn get_random_values_with_u8_array(
            this: &Crypto,
            buf: &mut [u8],
        ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
    }
}
