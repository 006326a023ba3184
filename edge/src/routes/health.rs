//! `GET /health`: version, commit and which bindings this deployment has.

use worker::{Env, Response};

use crate::error::ApiError;

/// Bindings the Worker knows how to use, by their wrangler.toml names. Without a rate
/// limiter, the requests it limits are refused (503), so they are listed too.
const BINDINGS: [&str; 10] = [
    "DB",
    "CONFIG",
    "ASSETS",
    "EMBED_QUEUE",
    "TURN_QUEUE",
    "VECTORIZE",
    "PUBLIC_RATE_LIMIT",
    "SITE_RATE_LIMIT",
    "SECRET_RATE_LIMIT",
    "CONVERSATION_RATE_LIMIT",
];

pub(crate) fn get(env: &Env) -> Result<Response, ApiError> {
    let mut bindings = serde_json::Map::new();
    for name in BINDINGS {
        let present = js_sys::Reflect::get(env, &name.into()).is_ok_and(|v| !v.is_undefined());
        bindings.insert(name.into(), present.into());
    }
    let body = serde_json::json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "core_version": concierge_core::VERSION,
        // Set at deploy/run time (`--var CONCIERGE_COMMIT:<sha>`), so a new commit does not
        // force a rebuild of the Worker.
        "commit": env.var("CONCIERGE_COMMIT").ok().map(|v| v.to_string()).filter(|c| !c.is_empty()),
        "bindings": bindings,
    });
    Ok(Response::from_json(&body)?)
}
