//! Every error the API can return, and the one place that maps it to HTTP.

use worker::Response;

/// An error returned to an API client as `{"error":{"code","message"}}`.
///
/// Internal details (upstream bodies, binding errors, secrets) never reach the
/// client: they are logged, and the client gets a generic message.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// No route matches the path.
    NotFound,
    /// The path exists but not with this method.
    MethodNotAllowed,
    /// The request is malformed; the message says how.
    BadRequest(&'static str),
    /// Something failed inside the Worker.
    Internal(worker::Error),
}

impl ApiError {
    fn status_code_message(&self) -> (u16, &'static str, &'static str) {
        match self {
            Self::NotFound => (404, "not_found", "No such resource."),
            Self::MethodNotAllowed => (
                405,
                "method_not_allowed",
                "This method is not allowed here.",
            ),
            Self::BadRequest(message) => (400, "bad_request", message),
            Self::Internal(_) => (500, "internal", "Internal error."),
        }
    }

    /// The HTTP response for this error.
    pub(crate) fn into_response(self) -> worker::Result<Response> {
        if let Self::Internal(err) = &self {
            let line = serde_json::json!({"level": "error", "msg": "internal error", "error": err.to_string()});
            worker::console_error!("{line}");
        }
        let (status, code, message) = self.status_code_message();
        let body = serde_json::json!({"error": {"code": code, "message": message}});
        Ok(Response::from_json(&body)?.with_status(status))
    }
}

impl From<worker::Error> for ApiError {
    fn from(err: worker::Error) -> Self {
        Self::Internal(err)
    }
}
