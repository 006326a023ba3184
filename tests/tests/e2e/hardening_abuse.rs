//! Issue 39, limits and the handoff queue under abuse, through the real Worker: one IPv6
//! subscriber (a `/64`) is one client (`limits`); visitors, however many, never use up
//! the merchant's secret-key budget (`limits`); the queue of conversations waiting for a
//! person is capped per client and per site and the console sees every waiting one, newest
//! first with the true count (`queue`); `user_id` labels are trimmed and screened, marked
//! unproven, and exported without formulas (`labels`); the LLM endpoint's redirects are
//! not followed (`redirects`).

mod labels;
mod limits;
mod queue;
mod redirects;

use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// The origin the test sites allow (`api::site_with_upstream`'s).
const ORIGIN: &str = "https://shop.example";

/// A public-key request from `client` (its `CF-Connecting-IP`), from the allowed origin.
fn public(
    worker: &Worker,
    site: &TestSite,
    method: &str,
    path: &str,
    client: &str,
) -> ureq::Request {
    agent()
        .request(method, &worker.url(path))
        .set("x-api-key", &site.public_key)
        .set("origin", ORIGIN)
        .set("cf-connecting-ip", client)
}

/// `GET /widget/config` with the public key from `client`: the status.
fn widget_config(worker: &Worker, site: &TestSite, client: &str) -> u16 {
    into_parts(public(worker, site, "GET", "/widget/config", client).call()).0
}

/// `POST /conversations` with the public key from `client` (`body`): status and body.
fn create_public(worker: &Worker, site: &TestSite, client: &str, body: Value) -> (u16, String) {
    into_parts(public(worker, site, "POST", "/conversations", client).send_json(body))
}

/// A new anonymous conversation created with the public key from `client`.
fn conversation_from(worker: &Worker, site: &TestSite, client: &str) -> String {
    let (status, body) = create_public(worker, site, client, json!({}));
    assert_eq!(status, 201, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    json["conversation_id"].as_str().expect("id").to_string()
}

/// A visitor's message with the public key from `client`, the whole response read: status
/// and body (the SSE text, or the error's JSON).
fn say(
    worker: &Worker,
    site: &TestSite,
    client: &str,
    conversation: &str,
    text: &str,
) -> (u16, String) {
    let path = format!("/conversations/{conversation}/messages");
    into_parts(public(worker, site, "POST", &path, client).send_json(json!({"content": text})))
}

/// `GET path` with the secret key: status and JSON body (`null` when not JSON).
fn secret_get(worker: &Worker, site: &TestSite, path: &str) -> (u16, Value) {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url(path))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}
