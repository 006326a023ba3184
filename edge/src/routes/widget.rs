//! The widget's routes: its settings (`GET /widget/config`, public key), the chat panel
//! page (`GET /chat?site_key=pk_…`) and the loader's check of a panel that cannot load
//! (`GET /widget/check?site_key=pk_…&origin=…`).

use worker::{Env, Request, Response};

use crate::auth::{self, AnyKeyCaller};
use crate::error::ApiError;
use crate::site;

pub(crate) async fn config(caller: AnyKeyCaller) -> Result<Response, ApiError> {
    let config = &caller.site.config;
    let body = serde_json::json!({
        "title": config.title.clone().unwrap_or_else(|| caller.site.name.clone()),
        "language": config.language.as_deref().unwrap_or("vi"),
        "starter_prompts": config.starter_prompts,
        "template": caller.site.template,
        "handoff": config.handoff.as_ref().is_some_and(|h| h.enabled),
    });
    Ok(Response::from_json(&body)?)
}

/// `GET /widget/check?site_key=pk_…&origin=…`: why the panel for this public key cannot
/// load on a page of `origin`, as a script for the loader (`embed.js`): a script because a
/// strict CSP's `script-src <worker>` already allows it, where `fetch` would need
/// `connect-src`. When the panel cannot load there it warns the merchant in the console,
/// naming the cause (the key is unknown — never issued, or rotated away — or the site does
/// not allow the origin), and calls the loader back (`__conciergeFailed()`), which shows
/// the visitor its "unavailable" card; it is empty when the panel can load. It tells a
/// page only what it already has (its own key and origin); anything but a public key is
/// refused before any lookup.
pub(crate) async fn check(req: Request, env: &Env) -> Result<Response, ApiError> {
    let url = req.url()?;
    let param = |name: &str| {
        url.query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim().to_string())
    };
    if !param("site_key").is_some_and(|key| key.starts_with("pk_")) {
        return Err(ApiError::bad_request(
            "`site_key` must be the site's public key (pk_…).",
        ));
    }
    let origin = param("origin")
        .and_then(|origin| site::normalize_origin(&origin))
        .ok_or_else(|| {
            ApiError::bad_request("`origin` must be an origin (scheme://host[:port]).")
        })?;
    let cause = match auth::panel_site(&req, env).await {
        Ok(site) if site.config.allowed_origins.contains(&origin) => None,
        Ok(_) => Some(format!(
            "origin {origin} is not among the site's allowed origins"
        )),
        Err(ApiError::Unauthorized) => {
            Some("unknown or rotated site key (data-site-key)".to_string())
        }
        Err(err) => return Err(err),
    };
    // A JSON string is a JavaScript string literal.
    let body = match cause {
        Some(cause) => format!(
            "console.warn({});window.__conciergeFailed&&__conciergeFailed();",
            serde_json::Value::from(format!("Concierge: {cause}."))
        ),
        None => String::new(),
    };
    let mut response = Response::ok(body)?;
    let headers = response.headers_mut();
    headers.set("content-type", "text/javascript; charset=utf-8")?;
    headers.set("cache-control", "no-store")?;
    headers.set("x-content-type-options", "nosniff")?;
    Ok(response)
}

/// The panel page (`www/chat.html`, through the `ASSETS` binding) for the site whose public
/// key is in the query, framable only by that site's allowed origins:
/// `Content-Security-Policy: frame-ancestors <origins>` (a `<meta>` policy cannot say
/// this). Without a valid public key, the JSON error, framable by nobody.
pub(crate) async fn panel(req: Request, env: &Env) -> Result<Response, ApiError> {
    let (mut response, ancestors) = match panel_page(&req, env).await {
        Ok(page) => page,
        Err(err) => (err.into_response()?, "'none'".to_string()),
    };
    let headers = response.headers_mut();
    headers.set(
        "content-security-policy",
        &format!("frame-ancestors {ancestors}"),
    )?;
    headers.set("cache-control", "no-store")?;
    Ok(response)
}

/// The page and the sources of its `frame-ancestors`.
async fn panel_page(req: &Request, env: &Env) -> Result<(Response, String), ApiError> {
    let site = auth::panel_site(req, env).await?;
    if auth::own_origins(env).is_empty() {
        return Err(ApiError::Forbidden(
            "The chat panel is disabled: WORKER_ORIGINS is not configured.",
        ));
    }
    let mut page = env
        .assets("ASSETS")?
        .fetch(req.url()?.to_string(), None)
        .await?;
    if page.status_code() != 200 {
        return Err(ApiError::Internal(worker::Error::RustError(format!(
            "the panel page asset answered {}",
            page.status_code()
        ))));
    }
    let html = page.text().await?;
    Ok((
        Response::from_html(html)?,
        frame_ancestors(&site.config.allowed_origins),
    ))
}

/// The `frame-ancestors` sources for `origins`: each exactly (scheme, host and port), and
/// `'none'` when there is none. An origin that could not be one CSP source (stored origins
/// are normalised, so none should) is left out rather than allowed to widen the policy.
fn frame_ancestors(origins: &[String]) -> String {
    let sources: Vec<&str> = origins
        .iter()
        .map(String::as_str)
        .filter(|origin| {
            origin.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '/' | '[' | ']')
            })
        })
        .collect();
    if sources.is_empty() {
        "'none'".to_string()
    } else {
        sources.join(" ")
    }
}
