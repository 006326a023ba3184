//! `GET /widget/config`: what the widget shows before the first message (public key).

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
