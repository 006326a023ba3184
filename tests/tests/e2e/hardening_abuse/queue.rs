//! The queue of conversations waiting for a person: a flood of requests from other
//! addresses cannot hide a genuine one from the console (newest first, paged, the true
//! count), one client keeps at most 3 conversations waiting, and a request over the cap is
//! told so plainly (429 `handoff_queue_full`, Vietnamese first), never a 5xx.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use concierge_e2e::api::{error_code, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

use super::{conversation_from, say, secret_get};

const ASK: &str = "Cho mình gặp nhân viên với";

fn handoff_site(worker: &Worker, name: &str) -> (TestSite, ScriptedUpstream) {
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"handoff": {"enabled": true, "wait_seconds": 600}})),
    );
    assert_eq!(status, 200, "{body}");
    (site, upstream)
}

/// A conversation from `client` that asks for a person: its id, and the answer's status.
fn ask_for_person(worker: &Worker, site: &TestSite, client: &str) -> (String, u16, String) {
    let conversation = conversation_from(worker, site, client);
    let (status, body) = say(worker, site, client, &conversation, ASK);
    (conversation, status, body)
}

fn ids(list: &Value) -> Vec<String> {
    list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|c| c["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_flood_of_requests_for_a_person_cannot_hide_a_genuine_one_from_the_console() {
    let worker = Worker::shared();
    let (site, upstream) = handoff_site(worker, "Flooded handoff");
    // 201 requests for a person from 201 other addresses, four at a time.
    let next = AtomicUsize::new(0);
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= 201 {
                        break;
                    }
                    let client = format!("10.39.{}.{}", i / 200, i % 200 + 1);
                    let (_, status, body) = ask_for_person(worker, &site, &client);
                    assert_eq!(status, 200, "flood request {i}: {body}");
                }
            });
        }
    });
    let (genuine, status, body) = ask_for_person(worker, &site, "198.51.100.77");
    assert_eq!(status, 200, "{body}");
    assert!(upstream.chat_requests().is_empty(), "no model call");

    let (status, list) = secret_get(worker, &site, "/admin/handoffs");
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["waiting"], 202, "the true count");
    assert_eq!(list["total"], 202);
    let first_page = ids(&list);
    assert_eq!(first_page.len(), 200);
    assert_eq!(first_page[0], genuine, "the newest request first");
    assert_eq!(list["next_offset"], 200);
    // Requests newest first.
    let requested: Vec<u64> = list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|c| c["requested_at"].as_u64().expect("requested_at"))
        .collect();
    assert!(requested.windows(2).all(|w| w[0] >= w[1]), "newest first");
    // The next page holds the rest; every waiting conversation is reachable.
    let (status, rest) = secret_get(worker, &site, "/admin/handoffs?offset=200&limit=200");
    assert_eq!(status, 200, "{rest}");
    assert_eq!(ids(&rest).len(), 2);
    assert_eq!(rest["next_offset"], Value::Null);
    assert_eq!(rest["waiting"], 202);
    let mut all = first_page;
    all.extend(ids(&rest));
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 202, "every waiting conversation, once");
    // A small page.
    let (status, page) = secret_get(worker, &site, "/admin/handoffs?limit=5");
    assert_eq!(status, 200, "{page}");
    assert_eq!(ids(&page).len(), 5);
    assert_eq!(ids(&page)[0], genuine);
    for bad in ["?limit=0", "?limit=201", "?offset=-1", "?limit=x"] {
        let (status, body) = secret_get(worker, &site, &format!("/admin/handoffs{bad}"));
        assert_eq!(status, 400, "{bad}: {body}");
    }
    // The genuine visitor's conversation: listed as an unproven visitor (no user id).
    assert_eq!(list["conversations"][0]["user_id_verified"], false);
}

#[test]
fn one_client_keeps_at_most_three_conversations_waiting_and_is_told_so_plainly() {
    let worker = Worker::shared();
    let (site, _upstream) = handoff_site(worker, "Capped handoff");
    let client = "2001:db8:3939:1::5";
    let mut waiting = Vec::new();
    for _ in 0..3 {
        let (conversation, status, body) = ask_for_person(worker, &site, client);
        assert_eq!(status, 200, "{body}");
        waiting.push(conversation);
    }
    // The fourth, from another address of the same /64: refused before anything is stored.
    let (conversation, status, body) = ask_for_person(worker, &site, "2001:db8:3939:1::6");
    assert_eq!(status, 429, "{body}");
    assert_eq!(error_code(&body), "handoff_queue_full", "{body}");
    let message: Value = serde_json::from_str(&body).expect("JSON");
    let message = message["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Hiện có quá nhiều yêu cầu đang chờ gặp nhân viên"),
        "Vietnamese first: {message}"
    );
    assert!(
        message.contains("(Too many requests are waiting for a person"),
        "{message}"
    );
    let (_, history) = secret_get(
        worker,
        &site,
        &format!("/conversations/{conversation}/history"),
    );
    let stored = history["messages"].as_array().map_or(0, Vec::len);
    assert!(
        history["messages"]
            .as_array()
            .is_some_and(|m| m.iter().all(|m| m["role"] != "user")),
        "nothing stored: {stored} messages {history}"
    );
    // A waiting conversation asking again is still answered (it adds nothing to the queue),
    // and another client is not affected.
    let (status, body) = say(worker, &site, client, &waiting[0], ASK);
    assert_eq!(status, 200, "{body}");
    let (_, status, body) = ask_for_person(worker, &site, "198.51.100.78");
    assert_eq!(status, 200, "{body}");
    let (_, list) = secret_get(worker, &site, "/admin/handoffs");
    assert_eq!(list["waiting"], 4, "{list}");
}
