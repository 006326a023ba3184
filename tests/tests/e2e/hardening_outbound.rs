//! Issue 24, outbound and lifetime hardening, through the real Worker: a `csv_url` import
//! obeys the site endpoints' outbound rule at every redirect hop, within 10 s and a size
//! cap (`fetch`, and `production` for the rule without `DEV_MODE`); CSV uploads bound
//! every cell, the columns and the total (`cells`); user tokens live at most 24 hours
//! (`tokens`); the classification log names no user (`logs`).

mod cells;
mod fetch;
mod logs;
mod production;
mod tokens;

use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// `PUT /admin/data/{name}` with a JSON body: status and body.
fn put_json(worker: &Worker, site: &TestSite, name: &str, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .put(&worker.url(&format!("/admin/data/{name}")))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

/// `PUT /admin/data/{name}` importing `url`.
fn import(worker: &Worker, site: &TestSite, name: &str, url: &str) -> (u16, String) {
    put_json(
        worker,
        site,
        name,
        json!({"user_id": "owner", "csv_url": url}),
    )
}

/// `GET /admin/data/{name}`: status and body.
fn get_data(worker: &Worker, site: &TestSite, name: &str) -> (u16, String) {
    into_parts(
        agent()
            .get(&worker.url(&format!("/admin/data/{name}")))
            .set("x-api-key", &site.secret_key)
            .call(),
    )
}

/// The error message of an error body.
fn message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_default()
}
