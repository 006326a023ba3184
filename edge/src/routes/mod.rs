//! The router: which handler serves which method and path.

use worker::{Env, Method, Request, Response};

use crate::ApiError;

mod health;
mod stream;

/// A matched route (or why none matched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Health,
    DebugStream,
    MethodNotAllowed,
    NotFound,
}

impl Route {
    /// Match a method and path.
    pub(crate) fn of(method: Method, path: &str) -> Self {
        let path = path.trim_end_matches('/');
        let (route, allowed) = match path {
            "/health" => (
                Self::Health,
                method == Method::Get || method == Method::Head,
            ),
            "/debug/stream" => (Self::DebugStream, method == Method::Get),
            _ => return Self::NotFound,
        };
        if allowed {
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
        Route::MethodNotAllowed => Err(ApiError::MethodNotAllowed),
        Route::NotFound => Err(ApiError::NotFound),
    }
}
