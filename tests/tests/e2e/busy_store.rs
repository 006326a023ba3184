//! Issue 47 item 8: a busy store is not an error for a visitor. Through a real Worker of its
//! own (the faults are its isolate's), D1 calls are made to fail as busy before they reach
//! D1 (`POST /debug/d1-faults`): a conversation created and a turn answered while the store
//! is busy succeed, each message stored once; only a store that stays down past the retries
//! is a 503 in the API's error shape, and the next request works again. Since issue 47 a
//! visitor's request needs D1 only to read a site whose cached copies are gone (after a
//! change): a turn needs no D1 at all (its record is its object's, its rows go on to the
//! site's object), so it is answered while D1 is down.

use std::sync::OnceLock;

use concierge_e2e::api::{
    create_conversation, error_code, history, send, site_with_upstream, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, WorkerOptions, agent, into_parts, test_vars};
use serde_json::{Value, json};

fn worker() -> &'static Worker {
    static WORKER: OnceLock<Worker> = OnceLock::new();
    WORKER.get_or_init(|| {
        Worker::start(&WorkerOptions {
            vars: test_vars(),
            ..WorkerOptions::default()
        })
    })
}

/// The next `n` D1 calls fail as busy; the calls retried so far.
fn faults(n: u32) -> u64 {
    let (status, body) = into_parts(
        agent()
            .post(&worker().url("/debug/d1-faults"))
            .send_json(json!({ "count": n })),
    );
    assert_eq!(status, 200, "{body}");
    let parsed: Value = serde_json::from_str(&body).expect("JSON");
    parsed["retried"].as_u64().expect("retried")
}

/// A change to the site (`PATCH /admin/site`): every cached copy of it is dropped, so the
/// next request reads the site from D1 (the control plane).
fn change_site(site: &concierge_e2e::TestSite, title: &str) {
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker().url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"title": title})),
    );
    assert_eq!(status, 200, "{body}");
}

// One test: the faults are the isolate's, so nothing else may run beside it.
#[test]
fn a_busy_store_is_retried_and_only_a_store_that_stays_down_is_a_503() {
    let worker = worker();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, em chào anh chị."));
    let site = site_with_upstream(worker, "Busy store shop", &upstream.base_url, false);

    // Busy for three attempts while the site must be read from D1 (its copies dropped by
    // a change): the conversation is created, after three retries.
    change_site(&site, "Shop bận");
    let before = faults(3);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    assert!(faults(0) >= before + 3, "the busy calls were tried again");

    // Down for good while a turn runs: a turn reads and writes no D1 (its record is its
    // object's, its rows go on to the site's object, the site is cached), so the visitor
    // is answered and the message and the reply are stored once.
    faults(1000);
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Shop mở cửa mấy giờ?",
    );
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let stored = history(worker, &site.secret_key, &conversation);
    let asked = stored
        .iter()
        .filter(|m| m["role"] == "user" && m["content"] == "Shop mở cửa mấy giờ?")
        .count();
    assert_eq!(asked, 1, "the visitor's message stored once: {stored:?}");
    assert_eq!(
        stored.last().map(|m| m["content"].clone()),
        Some(json!("Dạ, em chào anh chị.")),
        "{stored:?}"
    );

    faults(0);

    // Down past every retry (every call fails) when the site must be read from D1: a 503
    // with a code and a sentence.
    change_site(&site, "Shop bận lắm");
    faults(1000);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.public_key)
            .send_json(json!({})),
    );
    faults(0);
    assert_eq!(status, 503, "{body}");
    assert!(!error_code(&body).is_empty(), "{body}");
    let parsed: Value = serde_json::from_str(&body).expect("JSON error");
    assert!(
        parsed["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );

    // Up again: the next request works, and what was stored is intact.
    create_conversation(worker, &site, json!({}));
    assert_eq!(history(worker, &site.secret_key, &conversation), stored);
}
