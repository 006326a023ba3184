//! The router: which handler serves which method and path, and CORS.
//!
//! The route table (method, path, who may call, handler) is [`crate::router`].

use worker::{Env, Request, Response};

use crate::error::ApiError;

pub(crate) mod admin;
pub(crate) mod ai_sdk;
pub(crate) mod console;
pub(crate) mod console_admin;
pub(crate) mod conversations;
pub(crate) mod debug_script;
pub(crate) mod feedback;
pub(crate) mod follow_up;
pub(crate) mod health;
pub(crate) mod mcp;
mod mcp_tools;
pub(crate) mod openai;
pub(crate) mod regenerate;
pub(crate) mod stream;
pub(crate) mod widget;

/// Whether errors on `path` take OpenAI's shape (the OpenAI-compatible API, `/v1/…`).
pub(crate) fn openai_shaped(path: &str) -> bool {
    path == "/v1" || path.starts_with("/v1/")
}

/// The request's `Origin` when some site allows it (CORS applies to those only).
pub(crate) async fn cors_origin(req: &Request, env: &Env) -> Option<String> {
    let origin = req.headers().get("origin").ok().flatten()?;
    if crate::auth::own_origins(env).contains(&origin) {
        return None;
    }
    crate::bindings::d1_sites::origin_known(env, &origin)
        .await
        .ok()?
        .then_some(origin)
}

/// Answer a CORS preflight: allowed only for origins some site allows.
pub(crate) async fn preflight(req: &Request, env: &Env) -> Result<Response, ApiError> {
    if cors_origin(req, env).await.is_none() {
        return Err(ApiError::Forbidden("This origin is not allowed."));
    }
    let mut response = Response::empty()?.with_status(204);
    let headers = response.headers_mut();
    headers.set(
        "access-control-allow-methods",
        "GET, POST, PUT, PATCH, DELETE, OPTIONS",
    )?;
    headers.set(
        "access-control-allow-headers",
        "content-type, x-api-key, authorization, prefer, last-event-id, idempotency-key, \
         x-user-token",
    )?;
    headers.set("access-control-max-age", "600")?;
    Ok(response)
}

/// Add CORS headers for an allowed `origin` to any response.
pub(crate) fn add_cors(response: &mut Response, origin: &str) -> worker::Result<()> {
    let headers = response.headers_mut();
    headers.set("access-control-allow-origin", origin)?;
    headers.set("access-control-expose-headers", "x-request-id")?;
    headers.append("vary", "Origin")?;
    Ok(())
}
