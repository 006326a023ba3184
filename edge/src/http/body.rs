//! Reading request bodies: a size cap and JSON decoding with client-facing errors.

use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use worker::Request;

use crate::error::ApiError;

/// Largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024;

/// The 413 message for a body over [`MAX_BODY_BYTES`].
pub(crate) const OVER_MAX_BODY: &str = "The request body is over 32 KB.";

/// Read the body (at most [`MAX_BODY_BYTES`]) and decode it as JSON. An empty body
/// decodes as `{}` when `T` allows it.
pub(crate) async fn json<T: DeserializeOwned>(req: &mut Request) -> Result<T, ApiError> {
    json_up_to(req, MAX_BODY_BYTES, OVER_MAX_BODY).await
}

/// [`json`] with the cap `max_bytes`, for a route whose clients send more (`too_large`:
/// the 413's message, naming the cap).
pub(crate) async fn json_up_to<T: DeserializeOwned>(
    req: &mut Request,
    max_bytes: usize,
    too_large: &'static str,
) -> Result<T, ApiError> {
    let bytes = capped(req, max_bytes, too_large).await?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON body: {e}")))
}

/// The body, refused as soon as it is known to be over `max`: by its `Content-Length`,
/// or — when it has none (chunked) — by a running count while it is read, so an
/// over-long or endless body is never read past the cap.
pub(crate) async fn capped(
    req: &mut Request,
    max: usize,
    too_large: &'static str,
) -> Result<Vec<u8>, ApiError> {
    let declared = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(ApiError::PayloadTooLarge(too_large));
    }
    if req.inner().body().is_none() {
        return Ok(Vec::new());
    }
    let mut stream = req.stream()?;
    let mut bytes = Vec::with_capacity(declared.unwrap_or(1024).min(max));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if bytes.len() + chunk.len() > max {
            return Err(ApiError::PayloadTooLarge(too_large));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}
