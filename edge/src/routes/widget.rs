//! The widget's routes: its settings (`GET /widget/config`, public key) and the chat panel
//! page (`GET /chat?site_key=pk_…`).

use worker::{Env, Request, Response};

use crate::ApiError;
use crate::auth;

pub(crate) async fn config(req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::site_caller(&req, env, true).await?;
    let config = &caller.site.config;
    let body = serde_json::json!({
        "title": config.title.clone().unwrap_or_else(|| caller.site.name.clone()),
        "language": config.language.as_deref().unwrap_or("vi"),
        "starter_prompts": config.starter_prompts,
        "template": caller.site.template,
    });
    Ok(Response::from_json(&body)?)
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
