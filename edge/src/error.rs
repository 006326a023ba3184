//! Every error the API can return, and the one place that maps it to HTTP.
//!
//! Two body shapes: the API's own `{"error":{"code","message"}}`, and on the
//! OpenAI-compatible routes (`/v1/…`) OpenAI's `{"error":{"message","type","param","code"}}`
//! with the same statuses, which the official clients map to their exception classes
//! (400 `BadRequestError`, 401 `AuthenticationError`, 404 `NotFoundError`, 429
//! `RateLimitError`, …).
//!
//! The same type is the error of the queue consumers (their failures are logged, with
//! the chain of [`std::error::Error::source`]s, never sent to a client).

use concierge_core::error::ErrorClass;
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
    /// A body field is malformed: the field (OpenAI's `param`) and how.
    BadField(&'static str, String),
    /// The `model` a request names (its message names it, as OpenAI's does) is not this
    /// site's assistant.
    UnknownModel(String),
    /// The conversation a request names does not exist for this caller.
    UnknownConversation,
    /// Failed after the request's message was stored: a retry would store it again, so
    /// the response tells clients not to retry (`x-should-retry: false`); a retry with the
    /// same `Idempotency-Key` is safe.
    AfterStore(Box<ApiError>),
    /// The body is over the route's limit; the message says which.
    PayloadTooLarge(&'static str),
    /// No key, or a key that matches nothing.
    Unauthorized,
    /// An `X-User-Token` that does not verify (malformed, tampered, wrongly signed,
    /// expired, or the site has no user-token secret); the message says which.
    InvalidUserToken(&'static str),
    /// A valid key used where it is not allowed (wrong kind, or origin not allowed).
    Forbidden(&'static str),
    /// Too many requests for this key and client.
    RateLimited,
    /// The conversation already has a turn running and the most posts waiting for it.
    ConversationBusy,
    /// A live stream over its caps (per conversation, per client address).
    TooManyStreams,
    /// A request for a person while the queue of conversations waiting for one is full
    /// for this client or site (`routes::conversations::handoff_queue`).
    HandoffQueueFull,
    /// A follow-up's `contact` is neither a phone number nor an e-mail address.
    InvalidContact,
    /// The resource kept changing under this request; retrying may succeed.
    Conflict(&'static str),
    /// The request would take the site past a bound it cannot exceed; the message says
    /// which and what to do.
    LimitReached(String),
    /// A publish over cases the draft fails that pass on live, unconfirmed; the message
    /// names them.
    Regressions(String),
    /// A platform dependency that must not be skipped (the rate limiter) failed.
    Unavailable,
    /// A background turn could not be queued (its message is stored and marked).
    TurnNotQueued,
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
            Self::BadRequest(message) | Self::BadField(_, message) => (400, "bad_request", message),
            Self::UnknownModel(message) => (404, "model_not_found", message),
            Self::UnknownConversation => (404, "conversation_not_found", "No such conversation."),
            Self::AfterStore(error) => error.parts(),
            Self::PayloadTooLarge(message) => (413, "payload_too_large", message),
            Self::Unauthorized => (401, "unauthorized", "A valid API key is required."),
            Self::InvalidUserToken(message) => (401, "invalid_user_token", message),
            Self::Forbidden(message) => (403, "forbidden", message),
            Self::RateLimited => (429, "rate_limited", "Too many requests; try again shortly."),
            Self::ConversationBusy => (
                429,
                "conversation_busy",
                "This conversation is busy answering other messages; try again shortly.",
            ),
            Self::TooManyStreams => (
                429,
                "too_many_streams",
                "Too many live streams are open for this conversation; close one and try again.",
            ),
            Self::HandoffQueueFull => (
                429,
                "handoff_queue_full",
                "Hiện có quá nhiều yêu cầu đang chờ gặp nhân viên; quý khách vui lòng thử lại sau ít \
                 phút. (Too many requests are waiting for a person right now; please try \
                 again in a few minutes.)",
            ),
            Self::InvalidContact => (
                400,
                "invalid_contact",
                "`contact` must be a phone number or an e-mail address.",
            ),
            Self::Conflict(message) => (409, "conflict", message),
            Self::LimitReached(message) => (409, "limit_reached", message),
            Self::Regressions(message) => (409, "regressions", message),
            Self::Unavailable => (
                503,
                "unavailable",
                "The service is briefly unavailable; try again shortly.",
            ),
            Self::TurnNotQueued => (
                503,
                "turn_not_queued",
                "Something went wrong. Please try again.",
            ),
            Self::Core(error) => (
                core_status(error.class()),
                error.code(),
                error.public_message(),
            ),
            Self::Corrupt(_) | Self::Internal(_) => (500, "internal", "Internal error."),
        }
    }

    /// The HTTP response for this error, in the API's own shape.
    pub(crate) fn into_response(self) -> worker::Result<Response> {
        self.respond(Shape::Native)
    }

    /// The HTTP response for this error, in OpenAI's shape (the `/v1/…` routes).
    pub(crate) fn into_openai_response(self) -> worker::Result<Response> {
        self.respond(Shape::OpenAi)
    }

    fn respond(self, shape: Shape) -> worker::Result<Response> {
        let inner = match &self {
            Self::AfterStore(inner) => inner,
            other => other,
        };
        match inner {
            Self::Internal(err) => log_internal(&err.to_string()),
            Self::Corrupt(detail) => log_internal(detail),
            Self::Core(error) if core_status(error.class()) >= 500 => {
                log_internal(&error.to_string())
            }
            _ => {}
        }
        let (status, code, message) = self.parts();
        // OpenAI answers an unknown model with 404 and this type.
        let kind = match inner {
            Self::UnknownModel(_) => "invalid_request_error",
            _ => openai_type(status),
        };
        let body = match shape {
            Shape::Native => serde_json::json!({"error": {"code": code, "message": message}}),
            Shape::OpenAi => {
                let param = match inner {
                    Self::BadField(param, _) => Some(*param),
                    _ => None,
                };
                serde_json::json!({"error": {
                    "message": message, "type": kind, "param": param, "code": code,
                }})
            }
        };
        let mut response = Response::from_json(&body)?.with_status(status);
        if matches!(inner, Self::ConversationBusy) {
            response.headers_mut().set("retry-after", "2")?;
        } else if status == 429 {
            response.headers_mut().set("retry-after", "60")?;
        }
        if matches!(self, Self::AfterStore(_)) {
            response.headers_mut().set("x-should-retry", "false")?;
        }
        Ok(response)
    }
}

/// The shape of an error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `{"error":{"code","message"}}`.
    Native,
    /// OpenAI's `{"error":{"message","type","param","code"}}`.
    OpenAi,
}

/// OpenAI's error `type` for a status.
pub(crate) fn openai_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        500.. => "server_error",
        _ => "invalid_request_error",
    }
}

/// The HTTP status for a core error's class.
fn core_status(class: ErrorClass) -> u16 {
    match class {
        ErrorClass::Invalid => 400,
        ErrorClass::NotFound => 404,
        ErrorClass::Conflict => 409,
        ErrorClass::Unprocessable => 422,
        ErrorClass::Upstream => 502,
        ErrorClass::Unavailable => 503,
        ErrorClass::RateLimited => 429,
    }
}

/// For logs: the internal detail (never sent to a client; [`ApiError::parts`] is).
impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Core(error) => write!(f, "core: {error}"),
            Self::Corrupt(detail) => write!(f, "corrupt stored data: {detail}"),
            Self::Internal(error) => write!(f, "worker: {error}"),
            other => {
                let (status, code, message) = other.parts();
                write!(f, "{status} {code}: {message}")
            }
        }
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Core(error) => Some(error),
            Self::Internal(error) => Some(error),
            Self::AfterStore(error) => Some(error.as_ref()),
            _ => None,
        }
    }
}

impl ApiError {
    /// Whether a background job failing with this error may succeed later: the core says
    /// so for its errors; the Worker's own failures (bindings, D1) are taken as passing.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Self::Core(error) => error.is_transient(),
            Self::Internal(_) | Self::Unavailable | Self::Conflict(_) => true,
            Self::AfterStore(error) => error.is_transient(),
            _ => false,
        }
    }

    /// This error with its chain of sources, one line, for logs (a source whose text the
    /// line already ends with is not repeated).
    pub(crate) fn chain(&self) -> String {
        let mut line = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(error) = source {
            let text = error.to_string();
            if !line.ends_with(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            source = error.source();
        }
        line
    }
}

fn log_internal(detail: &str) {
    let line = serde_json::json!({"level": "error", "msg": "internal error", "detail": detail});
    worker::console_error!("{line}");
}

impl From<worker::Error> for ApiError {
    fn from(err: worker::Error) -> Self {
        Self::of_worker(err)
    }
}

impl ApiError {
    /// A binding's error: 503 when it is a store still failing after its retries, else
    /// internal. Out of line: every `?` on a binding call converts through it.
    #[inline(never)]
    fn of_worker(err: worker::Error) -> Self {
        let detail = err.to_string();
        if crate::bindings::retry::is_transient(&detail) {
            // The store stayed busy or unreachable through every retry: down, not broken.
            let line =
                serde_json::json!({"level": "error", "msg": "store unavailable", "detail": detail});
            worker::console_error!("{line}");
            return Self::Unavailable;
        }
        Self::Internal(err)
    }
}

impl From<concierge_core::error::Error> for ApiError {
    fn from(error: concierge_core::error::Error) -> Self {
        match error {
            // The same 404 as any other resource this caller cannot see.
            concierge_core::error::Error::ConversationNotFound => Self::NotFound,
            concierge_core::error::Error::RateLimited => Self::RateLimited,
            error => Self::Core(error),
        }
    }
}

impl ApiError {
    /// `model` is not a model this key can use: OpenAI's sentence, naming it (cut to 100
    /// characters).
    pub(crate) fn unknown_model(model: &str) -> Self {
        let name: String = model.chars().take(100).collect();
        Self::UnknownModel(format!(
            "The model '{name}' does not exist or you do not have access to it."
        ))
    }

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
