//! The router: which handler serves which method and path, and CORS.

use worker::{Env, Method, Request, Response};

use crate::ApiError;

mod admin;
pub(crate) mod body;
mod health;
mod stream;
mod widget;

/// A matched route (or why none matched). Path parameters are extracted by handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Health,
    DebugStream,
    AdminCreateSite,
    AdminGetSite,
    AdminUpdateSite,
    AdminRotateKeys,
    AdminWarranty,
    WidgetConfig,
    Preflight,
    MethodNotAllowed,
    NotFound,
}

impl Route {
    /// Match a method and path.
    pub(crate) fn of(method: &Method, path: &str) -> Self {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let is = |m: Method| *method == m;
        let (route, allowed) = match segments.as_slice() {
            ["health"] => (Self::Health, is(Method::Get) || is(Method::Head)),
            ["debug", "stream"] => (Self::DebugStream, is(Method::Get)),
            ["admin", "sites"] => (Self::AdminCreateSite, is(Method::Post)),
            ["admin", "site"] if is(Method::Patch) => (Self::AdminUpdateSite, true),
            ["admin", "site"] => (Self::AdminGetSite, is(Method::Get)),
            ["admin", "site", "rotate-keys"] => (Self::AdminRotateKeys, is(Method::Post)),
            ["admin", "warranty"] => (Self::AdminWarranty, is(Method::Post)),
            ["widget", "config"] => (Self::WidgetConfig, is(Method::Get)),
            _ => return Self::NotFound,
        };
        if is(Method::Options) {
            Self::Preflight
        } else if allowed {
            route
        } else {
            Self::MethodNotAllowed
        }
    }

    /// A stable name for logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Health => "health",
            Self::DebugStream => "debug_stream",
            Self::AdminCreateSite => "admin_create_site",
            Self::AdminGetSite => "admin_get_site",
            Self::AdminUpdateSite => "admin_update_site",
            Self::AdminRotateKeys => "admin_rotate_keys",
            Self::AdminWarranty => "admin_warranty",
            Self::WidgetConfig => "widget_config",
            Self::Preflight => "preflight",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotFound => "not_found",
        }
    }
}

/// Run the handler for `route`.
pub(crate) async fn handle(route: Route, req: Request, env: &Env) -> Result<Response, ApiError> {
    match route {
        Route::Health => health::get(env),
        Route::DebugStream => stream::get(&req),
        Route::AdminCreateSite => admin::create_site(req, env).await,
        Route::AdminGetSite => admin::get_site(req, env).await,
        Route::AdminUpdateSite => admin::update_site(req, env).await,
        Route::AdminRotateKeys => admin::rotate_keys(req, env).await,
        Route::AdminWarranty => admin::upsert_warranty(req, env).await,
        Route::WidgetConfig => widget::config(req, env).await,
        Route::Preflight => preflight(&req, env).await,
        Route::MethodNotAllowed => Err(ApiError::MethodNotAllowed),
        Route::NotFound => Err(ApiError::NotFound),
    }
}

/// The request's `Origin` when some site allows it (CORS applies to those only).
pub(crate) async fn cors_origin(req: &Request, env: &Env) -> Option<String> {
    let origin = req.headers().get("origin").ok().flatten()?;
    if crate::auth::own_origin(req).as_deref() == Some(origin.as_str()) {
        return None;
    }
    crate::site::origin_known(env, &origin)
        .await
        .ok()?
        .then_some(origin)
}

/// Answer a CORS preflight: allowed only for origins some site allows.
async fn preflight(req: &Request, env: &Env) -> Result<Response, ApiError> {
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
        "content-type, x-api-key, authorization, prefer, last-event-id",
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
