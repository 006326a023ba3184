//! Abuse benchmark (issue 39): what the limits and the handoff queue hold under a flood,
//! against a `wrangler dev` of its own with the debug routes off, as in production. Run on
//! demand: `make bench-abuse` (needs `make build` first). Prints, per run:
//! - **/64 flood**: `N` public-key requests from `N` addresses of one IPv6 `/64`: how many
//!   were answered and how many refused (429) — one subscriber is one client (120/min);
//! - **visitor flood beside the merchant**: public-key requests from 20 clients until the
//!   site's ceiling for visitors refuses them, with the merchant's secret-key console calls
//!   (`GET /admin/handoffs`, `GET /admin/site`) in between: how many secret-key calls got
//!   429 (must be 0);
//! - **handoff flood**: 1,000 requests for a person (a new conversation each) from 100
//!   clients, then a genuine one: what became of the flood (waiting, refused by the queue's
//!   caps, refused by the rate limits), whether the genuine request is first in the
//!   console's list the moment it is answered, and the count the console shows against the
//!   true one (D1);
//! - **streams held per client**: one visitor asks for `STREAMS_ASKED` live streams of one
//!   conversation and holds them; how many the Worker accepted (see
//!   [`streams_held_per_client`]).
//!
//! `BENCH_ABUSE_RUNS` sets the runs (default 1); with several, each figure's median is
//! printed after the runs.
#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

#[path = "../bench_streams.rs"]
mod bench_streams;

use concierge_e2e::bench::bench_vars;
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, WorkerOptions, agent, into_parts};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";
const ASK: &str = "Cho mình gặp nhân viên với";
/// Requests in the /64 flood (one each from as many addresses).
const FLOOD_64: usize = 200;
/// Requests for a person in the handoff flood, and the clients they come from.
const HANDOFF_FLOOD: usize = 1_000;
const HANDOFF_CLIENTS: usize = 100;
/// Live streams one visitor asks for on one conversation.
const STREAMS_ASKED: usize = 25;

fn runs() -> usize {
    std::env::var("BENCH_ABUSE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

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

fn secret_status(worker: &Worker, site: &TestSite, path: &str) -> u16 {
    into_parts(
        agent()
            .get(&worker.url(path))
            .set("x-api-key", &site.secret_key)
            .call(),
    )
    .0
}

fn new_site(worker: &Worker, name: &str, upstream: &ScriptedUpstream) -> TestSite {
    let site = worker.create_site(json!({
        "name": name,
        "allowed_origins": [ORIGIN],
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url),
                "model": "scripted", "embed_model": "scripted-embed"}
    }));
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"handoff": {"enabled": true, "wait_seconds": 3600}})),
    );
    assert_eq!(status, 200, "{body}");
    site
}

/// One run's figures.
#[derive(Debug, Default, Clone)]
struct Figures {
    flood_64_answered: usize,
    flood_64_refused: usize,
    visitor_requests: usize,
    merchant_calls: usize,
    merchant_429: usize,
    handoff_waiting: usize,
    handoff_queue_full: usize,
    handoff_rate_limited: usize,
    handoff_other: usize,
    other_statuses: Vec<u16>,
    genuine_first: bool,
    genuine_wait_ms: u128,
    console_waiting: u64,
    true_waiting: u64,
    streams_held: usize,
}

/// `FLOOD_64` requests from as many addresses of `2001:db8:a5e:64::/64`.
fn flood_64(worker: &Worker, site: &TestSite, figures: &mut Figures) {
    for i in 0..FLOOD_64 {
        let address = format!("2001:db8:a5e:64:{:x}:{:x}::1", i / 7 + 1, i + 1);
        match into_parts(public(worker, site, "GET", "/widget/config", &address).call()).0 {
            200 => figures.flood_64_answered += 1,
            429 => figures.flood_64_refused += 1,
            other => panic!("/64 flood: {other}"),
        }
    }
}

/// Visitors from 20 clients until the site's ceiling refuses them (or 2,600 requests), the
/// merchant's console calls every 25 visitor requests and after.
fn visitor_flood(worker: &Worker, site: &TestSite, figures: &mut Figures) {
    let merchant = |figures: &mut Figures| {
        for path in ["/admin/handoffs", "/admin/site"] {
            figures.merchant_calls += 1;
            if secret_status(worker, site, path) == 429 {
                figures.merchant_429 += 1;
            }
        }
    };
    let mut refused = 0;
    while figures.visitor_requests < 2_600 && refused < 50 {
        let client = format!("203.0.113.{}", figures.visitor_requests % 20 + 1);
        figures.visitor_requests += 1;
        if into_parts(public(worker, site, "GET", "/widget/config", &client).call()).0 == 429 {
            refused += 1;
        }
        if figures.visitor_requests.is_multiple_of(25) {
            merchant(figures);
        }
    }
    merchant(figures);
}

/// What one request for a person in a new conversation came to.
enum Asked {
    Waiting(String),
    QueueFull,
    RateLimited,
    Other(u16),
}

fn ask_for_person(worker: &Worker, site: &TestSite, client: &str) -> Asked {
    let (status, body) =
        into_parts(public(worker, site, "POST", "/conversations", client).send_json(json!({})));
    if status == 429 {
        return Asked::RateLimited;
    }
    if status != 201 {
        return Asked::Other(status);
    }
    let id = serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    let path = format!("/conversations/{id}/messages");
    let (status, body) =
        into_parts(public(worker, site, "POST", &path, client).send_json(json!({"content": ASK})));
    match status {
        200 => Asked::Waiting(id),
        429 if body.contains("handoff_queue_full") => Asked::QueueFull,
        429 => Asked::RateLimited,
        other => Asked::Other(other),
    }
}

/// `HANDOFF_FLOOD` requests for a person from `HANDOFF_CLIENTS` clients (four at a time),
/// then a genuine one, retried until the limits admit it.
fn handoff_flood(worker: &Worker, site: &TestSite, figures: &mut Figures) {
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::with_capacity(HANDOFF_FLOOD));
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= HANDOFF_FLOOD {
                        break;
                    }
                    let client = format!(
                        "10.{}.{}.1",
                        100 + i % HANDOFF_CLIENTS / 100,
                        i % HANDOFF_CLIENTS
                    );
                    let asked = ask_for_person(worker, site, &client);
                    outcomes.lock().expect("outcomes").push(asked);
                }
            });
        }
    });
    for asked in outcomes.into_inner().expect("outcomes") {
        match asked {
            Asked::Waiting(_) => figures.handoff_waiting += 1,
            Asked::QueueFull => figures.handoff_queue_full += 1,
            Asked::RateLimited => figures.handoff_rate_limited += 1,
            Asked::Other(status) => {
                figures.handoff_other += 1;
                figures.other_statuses.push(status);
            }
        }
    }
    // The genuine visitor: a new address, retried while the site's ceiling refuses it.
    let started = Instant::now();
    let genuine = loop {
        match ask_for_person(worker, site, "198.51.100.250") {
            Asked::Waiting(id) => break Some(id),
            Asked::RateLimited if started.elapsed() < Duration::from_secs(130) => {
                thread::sleep(Duration::from_secs(1));
            }
            _ => break None,
        }
    };
    figures.genuine_wait_ms = started.elapsed().as_millis();
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/handoffs?limit=50"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).expect("JSON");
    figures.genuine_first = genuine.is_some_and(|id| list["conversations"][0]["id"] == id.as_str());
    figures.console_waiting = list["waiting"].as_u64().unwrap_or_default();
    let rows = worker.site_rows(site, &format!(
        "SELECT COUNT(*) AS n FROM conversations WHERE site_id = '{}' AND handoff_state = 'waiting'",
        site.id
    ));
    figures.true_waiting = rows
        .first()
        .and_then(|r| r["n"].as_u64())
        .unwrap_or_default();
}

/// Streams held per client (issue 39, defect 1): on a new site, one visitor (public key,
/// one address) opens a conversation and asks for `STREAMS_ASKED` live streams of it
/// (`GET /conversations/{id}/events`), holding each accepted one open.
fn streams_held_per_client(
    worker: &Worker,
    upstream: &ScriptedUpstream,
    n: usize,
) -> bench_streams::StreamsHeld {
    let site = new_site(worker, &format!("Abuse streams {n}"), upstream);
    let client = "203.0.113.25";
    let (status, body) =
        into_parts(public(worker, &site, "POST", "/conversations", client).send_json(json!({})));
    assert_eq!(status, 201, "a visitor's conversation: {body}");
    let created: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = created["conversation_id"].as_str().expect("id");
    bench_streams::streams_held_per_client(
        &worker.base_url,
        conversation,
        &[
            ("x-api-key", &site.public_key),
            ("origin", ORIGIN),
            ("cf-connecting-ip", client),
        ],
        STREAMS_ASKED,
    )
}

fn run(n: usize) -> Figures {
    let upstream = ScriptedUpstream::start();
    let worker = Worker::start(&WorkerOptions {
        vars: bench_vars(),
        ..WorkerOptions::default()
    });
    let mut figures = Figures::default();
    let site = new_site(&worker, &format!("Abuse 64 {n}"), &upstream);
    flood_64(&worker, &site, &mut figures);
    let site = new_site(&worker, &format!("Abuse visitors {n}"), &upstream);
    visitor_flood(&worker, &site, &mut figures);
    let site = new_site(&worker, &format!("Abuse handoff {n}"), &upstream);
    handoff_flood(&worker, &site, &mut figures);
    let streams = streams_held_per_client(&worker, &upstream, n);
    println!("run {n}:");
    println!(
        "  /64 flood: {} requests from {} addresses of one /64: {} answered, {} refused (429)",
        FLOOD_64, FLOOD_64, figures.flood_64_answered, figures.flood_64_refused
    );
    println!(
        "  visitor flood: {} public-key requests from 20 clients; merchant's secret-key calls: {}, refused (429): {}",
        figures.visitor_requests, figures.merchant_calls, figures.merchant_429
    );
    println!(
        "  handoff flood: {} requests for a person from {} clients: {} waiting, {} refused as queue full, {} refused by rate limits, {} other {:?}",
        HANDOFF_FLOOD,
        HANDOFF_CLIENTS,
        figures.handoff_waiting,
        figures.handoff_queue_full,
        figures.handoff_rate_limited,
        figures.handoff_other,
        figures.other_statuses
    );
    println!(
        "  genuine request: admitted after {} ms; first in the console's list at once: {}; console's waiting count {} (true count {})",
        figures.genuine_wait_ms,
        figures.genuine_first,
        figures.console_waiting,
        figures.true_waiting
    );
    println!(
        "  streams held per client: {} of {} asked for by one visitor on one conversation; refused: {}",
        streams.accepted,
        streams.asked,
        streams.json()["refusals"]
    );
    figures.streams_held = streams.accepted;
    figures
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let all: Vec<Figures> = (1..=runs()).map(run).collect();
    if all.len() < 2 {
        return;
    }
    let m = |f: fn(&Figures) -> f64| median(all.iter().map(f).collect());
    println!("medians of {} runs:", all.len());
    println!(
        "  /64 flood: {} answered, {} refused of {FLOOD_64}",
        m(|f| f.flood_64_answered as f64),
        m(|f| f.flood_64_refused as f64)
    );
    println!(
        "  visitor flood: {} visitor requests; merchant's calls refused: {} of {}",
        m(|f| f.visitor_requests as f64),
        m(|f| f.merchant_429 as f64),
        m(|f| f.merchant_calls as f64)
    );
    println!(
        "  handoff flood: {} waiting, {} queue full, {} rate-limited; genuine first in {} of {} runs, admitted after {} ms; console count {} (true {})",
        m(|f| f.handoff_waiting as f64),
        m(|f| f.handoff_queue_full as f64),
        m(|f| f.handoff_rate_limited as f64),
        all.iter().filter(|f| f.genuine_first).count(),
        all.len(),
        m(|f| f.genuine_wait_ms as f64),
        m(|f| f.console_waiting as f64),
        m(|f| f.true_waiting as f64)
    );
    println!(
        "  streams held per client: {} of {STREAMS_ASKED}",
        m(|f| f.streams_held as f64)
    );
}
