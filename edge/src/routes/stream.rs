//! `GET /debug/stream?events=N&interval_ms=M`: a diagnostic SSE stream of `tick`
//! events, one every `interval_ms`, each carrying its sequence number and the Worker's
//! clock when it was sent. It proves that events leave workerd incrementally.
//!
//! `POST /debug/conversations/{id}/abort` (a key that reaches the conversation): its
//! Durable Object resets itself (`ctx.abort()`), as the platform may reset one at any
//! time: the fault tests cut a turn with it.
//!
//! `GET /debug/conversations/{id}/object` (the secret key): what its Durable Object holds
//! (the delete tests check that it forgot the conversation).
//!
//! `POST /debug/site-sql` (the secret key) `{"sql"}`: one statement run in the site's own
//! object, answering `{"rows"}` (the tests read and age what the object holds there).
//!
//! `GET /debug/bindings`: the binding-call counters, while the var `COUNT_BINDINGS` is on.
//!
//! `POST /debug/d1-faults` `{"count": n}`: the next `n` D1 calls of this isolate fail as
//! busy before they reach D1 (`bindings::retry`); answers `{"retried": m}`, the calls
//! retried so far. The busy-store tests run a Worker of their own with it.
//!
//! A diagnostic, not a feature: it exists only while the var `DEBUG_ROUTES` is on (`make
//! dev` and the tests); in production (`wrangler.toml` has it off) it is a 404 like any
//! unknown path, so anonymous callers cannot hold streams open.

use std::time::Duration;

use futures_util::stream;
use worker::{Date, Delay, Env, Request, Response};

use crate::auth::{self, Access, AnyKeyCaller};
use crate::error::ApiError;

const MAX_EVENTS: u32 = 100;

/// `GET /debug/bindings`: this isolate's binding-call counters (`bindings::count`); 404
/// unless the var `COUNT_BINDINGS` is on. The load benchmark runs with the debug routes
/// off, so this one answers to its own var.
pub(crate) fn bindings(env: &Env) -> Result<Response, ApiError> {
    if !crate::bindings::count::on(env) {
        return Err(ApiError::NotFound);
    }
    let mut response = Response::ok(crate::bindings::count::counters())?;
    response
        .headers_mut()
        .set("content-type", "application/json")?;
    response.headers_mut().set("cache-control", "no-store")?;
    Ok(response)
}
/// `POST /debug/d1-faults` (see the module's documentation); 404 unless `DEBUG_ROUTES`.
pub(crate) async fn d1_faults(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    if !crate::runtime::var_on(env, FLAG) {
        return Err(ApiError::NotFound);
    }
    #[derive(serde::Deserialize)]
    struct Faults {
        count: u32,
    }
    let faults: Faults = req
        .json()
        .await
        .map_err(|_| ApiError::bad_request("Send {\"count\": n}."))?;
    let retried = crate::bindings::retry::inject_faults(faults.count.min(1000));
    Ok(Response::from_json(
        &serde_json::json!({ "retried": retried }),
    )?)
}

const MAX_INTERVAL_MS: u64 = 2_000;

/// The var that turns the debug routes on.
const FLAG: &str = "DEBUG_ROUTES";

pub(crate) fn get(req: &Request, env: &Env) -> Result<Response, ApiError> {
    if !crate::runtime::var_on(env, FLAG) {
        return Err(ApiError::NotFound);
    }
    let url = req.url()?;
    let mut events = 5u32;
    let mut interval_ms = 100u64;
    for (key, value) in url.query_pairs() {
        match &*key {
            "events" => {
                events = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_EVENTS).contains(n))
                    .ok_or_else(|| {
                        ApiError::bad_request("`events` must be an integer from 1 to 100.")
                    })?;
            }
            "interval_ms" => {
                interval_ms = value
                    .parse()
                    .ok()
                    .filter(|n| *n <= MAX_INTERVAL_MS)
                    .ok_or_else(|| {
                        ApiError::bad_request("`interval_ms` must be an integer from 0 to 2000.")
                    })?;
            }
            _ => {}
        }
    }
    let ticks = stream::unfold(0u32, move |seq| async move {
        if seq >= events {
            return None;
        }
        if seq > 0 {
            Delay::from(Duration::from_millis(interval_ms)).await;
        }
        let data = serde_json::json!({"seq": seq, "sent_at_ms": Date::now().as_millis()});
        let frame = format!("event: tick\nid: {seq}\ndata: {data}\n\n");
        Some((Ok::<Vec<u8>, worker::Error>(frame.into_bytes()), seq + 1))
    });
    let mut response = Response::from_stream(ticks)?;
    let headers = response.headers_mut();
    headers.set("content-type", "text/event-stream; charset=utf-8")?;
    headers.set("cache-control", "no-cache, no-transform")?;
    Ok(response)
}

/// `POST /debug/conversations/{id}/abort`: 204 once the conversation's object was told to
/// reset itself (404 unless the debug flag is on and the caller reaches the conversation).
pub(crate) async fn abort(
    req: Request,
    env: &Env,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    if !crate::runtime::var_on(env, FLAG) {
        return Err(ApiError::NotFound);
    }
    let caller = AnyKeyCaller::from_request(&req, env).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    let services = crate::bindings::services::Services::new(env, &caller.site)?;
    let scope = concierge_core::conversation::Scope::new(&caller.site.id, conversation_id);
    auth::reachable_conversation(&services.store, scope, &visitor)
        .await?
        .ok_or(ApiError::NotFound)?;
    crate::object::client::abort(env, &caller.site.id, conversation_id).await?;
    Ok(Response::empty()?.with_status(204))
}

/// `GET /debug/conversations/{id}/object` (the site's secret key): what the
/// conversation's object holds — its storage's keys, its deleted mark, its handoff, its
/// live streams — also once the conversation is deleted (404 unless the debug flag is on).
pub(crate) async fn object_state(
    req: Request,
    env: &Env,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    if !crate::runtime::var_on(env, FLAG) {
        return Err(ApiError::NotFound);
    }
    let caller = AnyKeyCaller::from_request(&req, env).await?;
    if caller.kind != crate::site::KeyKind::Secret {
        return Err(ApiError::NotFound);
    }
    crate::object::client::debug_state(env, &caller.site.id, conversation_id).await
}

/// `POST /debug/site-sql` (the site's secret key): `{"sql"}` run in the site's object;
/// `{"rows": […]}` (404 unless the debug flag is on).
pub(crate) async fn site_sql(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    if !crate::runtime::var_on(env, FLAG) {
        return Err(ApiError::NotFound);
    }
    let caller = AnyKeyCaller::from_request(&req, env).await?;
    if caller.kind != crate::site::KeyKind::Secret {
        return Err(ApiError::NotFound);
    }
    #[derive(serde::Deserialize)]
    struct Body {
        sql: String,
    }
    let body: Body = req
        .json()
        .await
        .map_err(|_| ApiError::bad_request("Send {\"sql\": \"…\"}."))?;
    let call = crate::site_object::SiteCall::DebugSql(body.sql);
    let rows: serde_json::Value = crate::site_object::call(env, &caller.site.id, &call).await?;
    Ok(Response::from_json(&serde_json::json!({ "rows": rows }))?)
}
