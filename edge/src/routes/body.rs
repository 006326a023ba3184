//! Reading request bodies: a size cap and JSON decoding with client-facing errors.

use serde::de::DeserializeOwned;
use worker::Request;

use crate::ApiError;

/// Largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024;

/// Read the body (at most [`MAX_BODY_BYTES`]) and decode it as JSON. An empty body
/// decodes as `{}` when `T` allows it.
pub(crate) async fn json<T: DeserializeOwned>(req: &mut Request) -> Result<T, ApiError> {
    let declared = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return Err(ApiError::PayloadTooLarge);
    }
    let bytes = req.bytes().await?;
    if bytes.len() > MAX_BODY_BYTES {
        return Err(ApiError::PayloadTooLarge);
    }
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON body: {e}")))
}
