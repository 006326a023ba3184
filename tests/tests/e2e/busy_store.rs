//! Issue 47 item 8: a busy store is not an error for a visitor. Through a real Worker of its
//! own (the faults are its isolate's), D1 calls are made to fail as busy before they reach
//! D1 (`POST /debug/d1-faults`): a conversation created and a turn answered while the store
//! is busy succeed, each message stored once; only a store that stays down past the retries
//! is a 503 in the API's error shape, and the next request works again. A turn in an existing
//! conversation needs no D1 at all (its record is its object's): answered while D1 is down.

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

// One test: the faults are the isolate's, so nothing else may run beside it.
#[test]
fn a_busy_store_is_retried_and_only_a_store_that_stays_down_is_a_503() {
    let worker = worker();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, em chào anh chị."));
    let site = site_with_upstream(worker, "Busy store shop", &upstream.base_url, false);

    // Busy for three attempts: the conversation is created, after three retries.
    let before = faults(3);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    assert!(faults(0) >= before + 3, "the busy calls were tried again");

    // A turn while the store is busy: answered, the message and the reply stored once.
    let before = faults(3);
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Shop mở cửa mấy giờ?",
    );
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    assert!(faults(0) >= before + 3, "the busy calls were tried again");
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

    // Down for good while a turn runs (issue 47, item 1): the turn needs only the
    // conversation's record (its object), so the visitor is answered; the shared D1 gets
    // the turn once it is back (the object's alarm tries again).
    faults(1000);
    let (status, events) = send(worker, &site.secret_key, &conversation, "Còn hàng không ạ?");
    faults(0);
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let stored = concierge_e2e::api::eventually(
        std::time::Duration::from_secs(40),
        "the turn in the shared D1 once it is back",
        || {
            let stored = history(worker, &site.secret_key, &conversation);
            stored
                .iter()
                .any(|m| m["role"] == "user" && m["content"] == "Còn hàng không ạ?")
                .then_some(stored)
        },
    );
    let asked = stored
        .iter()
        .filter(|m| m["role"] == "user" && m["content"] == "Còn hàng không ạ?")
        .count();
    assert_eq!(asked, 1, "stored once: {stored:?}");
    assert_eq!(
        stored.last().map(|m| m["content"].clone()),
        Some(json!("Dạ, em chào anh chị.")),
        "the reply after it: {stored:?}"
    );

    // Down past every retry (every call fails): a 503 with a code and a sentence.
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
