//! A GET of a URL a merchant gave (a data set's `csv_url`), within the outbound rule
//! ([`endpoint`]): redirects are followed by hand, at most [`MAX_REDIRECTS`], each hop
//! checked against the rule before it is requested; the whole fetch, body included, ends
//! after its time limit; the body is read as a stream and given up at the size cap (at
//! once when its `Content-Length` says it is over). Nothing of the Worker's goes with it:
//! no key, no cookie.

use std::time::Duration;

use worker::{
    AbortController, Fetch, Headers, Method, Request, RequestInit, RequestRedirect, ResponseBody,
    Url,
};

use super::js_stream::ChunkReader;
use super::upstream::within;
use crate::site::endpoint;

/// Redirects followed at most.
pub(crate) const MAX_REDIRECTS: usize = 3;

/// Why a fetch gave nothing.
#[derive(Debug)]
pub(crate) enum FetchError {
    /// A URL breaks the outbound rule: the first (`hop` 0) or the `hop`th redirect's; why.
    Refused {
        /// 0 for the URL asked for, then the redirect's number.
        hop: usize,
        /// The rule broken.
        why: &'static str,
    },
    /// More than [`MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// A redirect without a usable `Location`.
    BadRedirect,
    /// The time limit passed.
    TimedOut,
    /// The body is over the size cap.
    TooLarge,
    /// The server answered with this status (not 2xx).
    Status(u16),
    /// The request failed (connection refused, reset, …).
    Unreachable,
}

/// GET `url`, following at most [`MAX_REDIRECTS`] redirects within the rule, in at most
/// `limit`, reading at most `max_bytes` of body.
pub(crate) async fn get_capped(
    url: &str,
    development: bool,
    limit: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, FetchError> {
    let controller = AbortController::default();
    let result = within(limit, fetch(url, development, max_bytes, &controller)).await;
    // Whatever happened, nothing is left running: a timed out or refused body is not read
    // on by the platform.
    controller.abort();
    result.unwrap_or(Err(FetchError::TimedOut))
}

async fn fetch(
    url: &str,
    development: bool,
    max_bytes: usize,
    controller: &AbortController,
) -> Result<Vec<u8>, FetchError> {
    let mut current =
        endpoint::target(url, development).map_err(|why| FetchError::Refused { hop: 0, why })?;
    let mut redirects = 0;
    let response = loop {
        let response = get(&current, controller).await?;
        let status = response.status_code();
        if !matches!(status, 301 | 302 | 303 | 307 | 308) {
            break response;
        }
        if redirects == MAX_REDIRECTS {
            return Err(FetchError::TooManyRedirects);
        }
        redirects += 1;
        let location = response
            .headers()
            .get("location")
            .ok()
            .flatten()
            .ok_or(FetchError::BadRedirect)?;
        let next = current
            .join(&location)
            .map_err(|_| FetchError::BadRedirect)?;
        endpoint::allowed(&next, development).map_err(|why| FetchError::Refused {
            hop: redirects,
            why,
        })?;
        current = next;
    };
    let status = response.status_code();
    if !(200..300).contains(&status) {
        return Err(FetchError::Status(status));
    }
    let announced = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > max_bytes as u64) {
        return Err(FetchError::TooLarge);
    }
    let ResponseBody::Stream(body) = response.body() else {
        return Ok(Vec::new());
    };
    let mut reader = ChunkReader::new(body);
    let mut bytes = Vec::new();
    while let Some(chunk) = reader.next().await {
        let chunk = chunk.map_err(|_| FetchError::Unreachable)?;
        if bytes.len() + chunk.len() > max_bytes {
            return Err(FetchError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// One GET of `url`, redirects not followed, abortable by `controller`.
async fn get(url: &Url, controller: &AbortController) -> Result<worker::Response, FetchError> {
    let headers = Headers::new();
    let _ = headers.set("accept", "text/csv, text/plain;q=0.9, */*;q=0.1");
    let mut init = RequestInit::new();
    init.with_method(Method::Get)
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual);
    let request =
        Request::new_with_init(url.as_str(), &init).map_err(|_| FetchError::Unreachable)?;
    Fetch::Request(request)
        .send_with_signal(&controller.signal())
        .await
        .map_err(|_| FetchError::Unreachable)
}
