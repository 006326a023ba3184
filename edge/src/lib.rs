//! # concierge-edge
//!
//! The Cloudflare Worker that serves Concierge's HTTP API. It is a thin adapter: the
//! entry point is here, the route table in [`router`], each template's own routes in
//! [`templates`], the shared handlers and CORS in [`routes`], callers and keys in
//! [`auth`], sites in [`site`], platform glue in [`bindings`], the mapping of every
//! error to an HTTP response in [`error`], and what the runtime gives every layer (clock,
//! randomness, Worker vars, hashing) in [`runtime`]. Static pages (`www/`) are served by Workers
//! static assets before this code runs, except the chat panel page (`/chat`), which this
//! code serves with its site's framing policy.

use worker::{Context, Date, Env, Request, Response, ScheduleContext, ScheduledEvent, event};

mod auth;
mod bindings;
mod error;
mod http;
mod object;
mod router;
mod routes;
mod runtime;
mod site;
mod site_object;
mod templates;

use runtime::random_bytes;

/// The Worker's fetch handler: route, map errors in one place, add CORS for allowed
/// origins, tag with a request id, log one JSON line.
#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let env = bindings::retry::env(bindings::count::env(env, "fetch"));
    let started = Date::now().as_millis();
    let mut id = [0u8; 16];
    let request_id = match random_bytes(&mut id) {
        Ok(()) => id.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        Err(_) => format!("{started:032x}"),
    };
    let method = req.method().to_string();
    let path = req.path();
    let route = router::Route::of(&req.method(), &path);
    let cors = routes::cors_origin(&req, &env).await;
    let rc = router::RequestContext {
        env: &env,
        ctx: &ctx,
        request_id: &request_id,
    };
    let mut response = match router::handle(route, req, &rc).await {
        Ok(response) => response,
        Err(err) if routes::openai_shaped(&path) => err.into_openai_response()?,
        Err(err) => err.into_response()?,
    };
    if let Some(origin) = &cors {
        routes::add_cors(&mut response, origin)?;
    }
    response.headers_mut().set("x-request-id", &request_id)?;
    let line = serde_json::json!({
        "level": "info",
        "msg": "request",
        "request_id": request_id,
        "method": method,
        "route": route.name(),
        "path": path,
        "status": response.status_code(),
        "duration_ms": Date::now().as_millis().saturating_sub(started),
    });
    worker::console_log!("{line}");
    Ok(response)
}

/// The queue consumers: background turns (and their dead letters), test runs' cases, and background
/// indexing of messages and knowledge documents (every other queue).
#[event(queue)]
async fn queue(
    batch: worker::MessageBatch<bindings::queue::QueueMessage>,
    env: Env,
    _ctx: Context,
) -> worker::Result<()> {
    use bindings::turn_queue;
    let env = bindings::retry::env(bindings::count::env(
        env,
        &format!("queue.{}", batch.queue()),
    ));
    if bindings::count::on(&env) {
        bindings::count::delivered(&batch.queue(), batch.raw_iter().count());
    }
    match batch.queue().as_str() {
        turn_queue::QUEUE => {
            turn_queue::consume::<_, templates::SiteTemplates, object::background::ObjectAnswers>(
                &batch, &env,
            )
            .await
        }
        turn_queue::DEAD_LETTER_QUEUE => turn_queue::consume_dead_letters(&batch, &env).await,
        routes::admin::test_runs::QUEUE => routes::admin::test_runs::consume(&batch, &env).await,
        _ => return bindings::queue::consume(batch, &env).await,
    }
    Ok(())
}

/// A Cron Trigger: each template's scheduled work. None has any today (`rental`'s idle
/// seed sessions end in each site's object, by its alarm), so `wrangler.toml` declares no
/// cron; a template that needs one adds it there.
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    let env = bindings::retry::env(bindings::count::env(env, "scheduled"));
    templates::scheduled(&env).await;
}
