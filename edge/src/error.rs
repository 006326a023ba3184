//! Every error the API can return, and the one place that maps it to HTTP.

use worker::Response;

/// An error returned to an API client as `{"error":{"code","message"}}`.
///
/// Internal details (upstream bodies, binding errors, secrets) never reach the client:
/// they are logged, and the client gets a generic message.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// No route matches the path, or the resource does not exist for this caller.
    NotFound,
    /// The path exists but not with this method.
    MethodNotAllowed,
    /// The request is malformed; the message says how.
    BadRequest(String),
    /// The body is over the limit.
    PayloadTooLarge,
    /// No key, or a key that matches nothing.
    Unauthorized,
    /// A valid key used where it is not allowed (wrong kind, or origin not allowed).
    Forbidden(&'static str),
    /// Too many requests for this key and client.
    RateLimited,
    /// The resource kept changing under this request; retrying may succeed.
    Conflict(&'static str),
    /// A platform dependency that must not be skipped (the rate limiter) failed.
    Unavailable,
    /// A turn failed before its stream started (the visitor's message was refused, or not
    /// stored), or a background turn could not be queued.
    TurnFailed(&'static str, &'static str),
    /// The agent core refused or failed.
    Core(concierge_core::error::Error),
    /// Stored data could not be read back (logged; a generic 500 to the client).
    Corrupt(String),
    /// Something failed inside the Worker or a binding.
    Internal(worker::Error),
}

impl ApiError {
    /// A 400 with a message for the client.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }

    /// Status, stable code and client-facing message.
    pub(crate) fn parts(&self) -> (u16, &'static str, &str) {
        match self {
            Self::NotFound => (404, "not_found", "No such resource."),
            Self::MethodNotAllowed => (
                405,
                "method_not_allowed",
                "This method is not allowed here.",
            ),
            Self::BadRequest(message) => (400, "bad_request", message),
            Self::PayloadTooLarge => (413, "payload_too_large", "The request body is over 32 KB."),
            Self::Unauthorized => (401, "unauthorized", "A valid API key is required."),
            Self::Forbidden(message) => (403, "forbidden", message),
            Self::RateLimited => (429, "rate_limited", "Too many requests; try again shortly."),
            Self::Conflict(message) => (409, "conflict", message),
            Self::Unavailable => (
                503,
                "unavailable",
                "The service is briefly unavailable; try again shortly.",
            ),
            Self::TurnFailed(code, message) => (turn_status(code), code, message),
            Self::Core(error) => (
                turn_status(error.code()),
                error.code(),
                error.public_message(),
            ),
            Self::Corrupt(_) | Self::Internal(_) => (500, "internal", "Internal error."),
        }
    }

    /// The HTTP response for this error.
    pub(crate) fn into_response(self) -> worker::Result<Response> {
        match &self {
            Self::Internal(err) => log_internal(&err.to_string()),
            Self::Corrupt(detail) => log_internal(detail),
            Self::Core(error) if turn_status(error.code()) >= 500 => {
                log_internal(&error.to_string())
            }
            _ => {}
        }
        let (status, code, message) = self.parts();
        let body = serde_json::json!({"error": {"code": code, "message": message}});
        let mut response = Response::from_json(&body)?.with_status(status);
        if status == 429 {
            response.headers_mut().set("retry-after", "60")?;
        }
        Ok(response)
    }
}

/// The HTTP status for a core error code.
fn turn_status(code: &str) -> u16 {
    match code {
        "empty_message" | "message_too_long" | "invalid_idempotency_key" => 400,
        "conversation_not_found" => 404,
        "conflict" => 409,
        "idempotency_key_reused" => 422,
        "model_failed" | "empty_answer" => 502,
        _ => 503,
    }
}

fn log_internal(detail: &str) {
    let line = serde_json::json!({"level": "error", "msg": "internal error", "detail": detail});
    worker::console_error!("{line}");
}

impl From<worker::Error> for ApiError {
    fn from(err: worker::Error) -> Self {
        Self::Internal(err)
    }
}

impl From<concierge_core::error::Error> for ApiError {
    fn from(error: concierge_core::error::Error) -> Self {
        match error {
            // The same 404 as any other resource this caller cannot see.
            concierge_core::error::Error::ConversationNotFound => Self::NotFound,
            error => Self::Core(error),
        }
    }
}

impl ApiError {
    /// A storage failure (D1, vectors) as an internal error.
    pub(crate) fn store(error: concierge_core::error::ServiceError) -> Self {
        Self::Core(concierge_core::error::Error::Store(error))
    }
}

impl From<worker::kv::KvError> for ApiError {
    fn from(err: worker::kv::KvError) -> Self {
        Self::Internal(worker::Error::RustError(err.to_string()))
    }
}
