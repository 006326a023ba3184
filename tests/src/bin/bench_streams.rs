//! Streams held per client, on its own: starts `wrangler dev` (the built Worker), creates a
//! site and a conversation, and has one client open `BENCH_STREAMS` (default 25) live
//! streams of it, printing how many were accepted and refused as one JSON line (see
//! `tests/src/bench_streams.rs`). Needs `make build` first.
#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

#[path = "../bench_streams.rs"]
mod bench_streams;

use concierge_e2e::{Worker, WorkerOptions, agent, into_parts, test_vars};
use serde_json::{Value, json};

fn main() {
    let n = std::env::var("BENCH_STREAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    let worker = Worker::start(&WorkerOptions {
        vars: test_vars(),
        ..WorkerOptions::default()
    });
    let site = worker.create_site(json!({"name": "Streams bench shop"}));
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let created: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = created["conversation_id"].as_str().expect("id");
    let held = bench_streams::streams_held_per_client(
        &worker.base_url,
        conversation,
        &[("x-api-key", &site.secret_key)],
        n,
    );
    println!("{}", held.json());
}
