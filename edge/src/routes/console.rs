//! The merchant console: `GET /console` (the page, `www/console.html` through the `ASSETS`
//! binding, under a strict policy: scripts, styles and requests only from the Worker
//! itself, framed by nobody; it holds no secret — the merchant signs in with the site's
//! secret key, which the page keeps in the tab's session storage and sends as
//! `X-API-Key`), and `GET /admin/conversations` (secret key), the site's recent
//! conversations for its list view.

use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;

/// The console page's policy: nothing from elsewhere, no inline script or style, the
/// inline chat panel only from the Worker itself, never framed.
const CONSOLE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; frame-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// `GET /console`.
pub(crate) async fn page(req: Request, env: &Env) -> Result<Response, ApiError> {
    let mut asset = env
        .assets("ASSETS")?
        .fetch(req.url()?.to_string(), None)
        .await?;
    if asset.status_code() != 200 {
        return Err(ApiError::Internal(worker::Error::RustError(format!(
            "the console page asset answered {}",
            asset.status_code()
        ))));
    }
    let mut response = Response::from_html(asset.text().await?)?;
    let headers = response.headers_mut();
    headers.set("content-security-policy", CONSOLE_POLICY)?;
    headers.set("cache-control", "no-store")?;
    headers.set("referrer-policy", "no-referrer")?;
    headers.set("x-content-type-options", "nosniff")?;
    Ok(response)
}

/// `GET /admin/conversations?limit=N` (default 50, at most 200) and the filter of
/// [`super::console_admin::filter`] (search, votes, no answer, template, dates). Conversations
/// without a visitor message are never listed.
pub(crate) async fn conversations(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let (filter, limit) = super::console_admin::filter(&req, 50, 200)?;
    let rows = D1Store::new(env)?
        .recent_conversations(&caller.site.id, &filter, limit)
        .await
        .map_err(ApiError::store)?;
    Ok(Response::from_json(
        &serde_json::json!({ "conversations": rows }),
    )?)
}
