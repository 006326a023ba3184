//! Durable conversations seen from outside a turn (issue 28's gaps), through the real
//! Worker under `wrangler dev` and a scripted upstream: a client attaching to `GET
//! /conversations/{id}/events` gets the conversation's handoff state first (also when it
//! resumes with `Last-Event-ID`), so a reloaded page knows who holds the conversation; and
//! `POST /conversations/{id}/stop` ends the running turn for real — the upstream request is
//! cancelled, what was streamed is stored (marked stopped), every stream gets exactly one
//! terminal event, and the next post in line starts; resuming a turn that ended while
//! the next one began gives that turn to its end, never the next one's events. A stopped
//! AI SDK stream stays valid: one `finish`, then `[DONE]`.

use std::io::BufReader;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use concierge_e2e::api::{
    create_conversation, eventually, history, send, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{ReceivedEvent, Worker, agent, into_parts, read_events, read_events_until};
use serde_json::{Value, json};

use super::identity::tokens::{new_token_secret, token_for};

/// A question the shop template answers with the model.
const QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 20 triệu";
const SECOND: &str = "Tư vấn cấu hình PC chơi game tầm 30 triệu";

/// A long answer, streamed slowly: a stop lands in the middle of it.
const LONG: &str = "Dạ, với 20 triệu em đề xuất cấu hình gồm bộ xử lý Intel Core i5 13400F, card đồ họa RTX 4060 8 GB, bo mạch chủ B760, RAM 16 GB DDR5, ổ SSD NVMe 1 TB, nguồn 650 W chuẩn 80 Plus Bronze và vỏ case có sẵn ba quạt, lắp sẵn và giao trong ngày tại nội thành ạ.";
const SECOND_ANSWER: &str = "Dạ, với 30 triệu em đề xuất thêm RTX 4070 ạ.";

/// [`LONG`], a word every 150 ms: a stop lands in the middle of it.
fn slow_long() -> Reply {
    Reply::Tokens {
        tokens: split_tokens(LONG),
        first_token_after: Duration::from_millis(50),
        between: Duration::from_millis(150),
    }
}

fn data(event: &ReceivedEvent) -> Value {
    serde_json::from_str(&event.data).unwrap_or(Value::Null)
}

fn operate(worker: &Worker, key: &str, conversation: &str, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url(&format!("/admin/conversations/{conversation}/handoff")))
            .set("x-api-key", key)
            .send_json(body),
    )
}

#[test]
fn attaching_to_the_events_of_a_held_conversation_gets_who_holds_it_first() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Live attach shop", &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"handoff": {"enabled": true, "wait_seconds": 600}})),
    );
    assert_eq!(status, 200, "{body}");
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    // Nothing asked yet: the state is `none`, first.
    let fresh = super::durable_clients::watch_after(worker, key, &conversation, None);
    let first = fresh
        .recv_timeout(Duration::from_secs(5))
        .expect("an event on attach");
    assert_eq!(first.event, "handoff", "{first:?}");
    assert_eq!(data(&first)["state"], "none", "{first:?}");

    // The visitor asks for a person; Lan takes the conversation over.
    let (_, events) = send(worker, key, &conversation, "gặp nhân viên");
    assert_eq!(terminal(&events).1["kind"], "handoff");
    let (status, body) = operate(
        worker,
        key,
        &conversation,
        json!({"action": "take", "agent": "Lan"}),
    );
    assert_eq!(status, 200, "{body}");

    // A page reloaded now attaches: who holds the conversation comes first.
    let live = super::durable_clients::watch_after(worker, key, &conversation, None);
    let first = live
        .recv_timeout(Duration::from_secs(5))
        .expect("an event on attach");
    assert_eq!(first.event, "handoff", "{first:?}");
    let state = data(&first);
    assert_eq!(
        (&state["state"], &state["agent"]),
        (&json!("held"), &json!("Lan"))
    );
    assert!(state["since"].is_u64(), "{state}");
    assert!(
        first.id.is_none(),
        "the snapshot is not an event of the log: it leaves Last-Event-ID alone"
    );

    // Resuming with Last-Event-ID: the state first too, then the missed events in order.
    let resumed = super::durable_clients::watch_after(worker, key, &conversation, Some(0));
    let first = resumed
        .recv_timeout(Duration::from_secs(5))
        .expect("an event on attach");
    assert_eq!(first.event, "handoff", "{first:?}");
    assert_eq!(data(&first)["state"], "held");
    let mut missed = Vec::new();
    while let Ok(event) = resumed.recv_timeout(Duration::from_secs(2)) {
        missed.push(event);
    }
    let last_handoff = missed
        .iter()
        .rfind(|e| e.event == "handoff")
        .unwrap_or_else(|| panic!("the missed handoff changes: {missed:?}"));
    assert_eq!(data(last_handoff)["state"], "held", "{missed:?}");

    // Handed back: a new attach says `none`.
    let (status, _) = operate(worker, key, &conversation, json!({"action": "release"}));
    assert_eq!(status, 200);
    let back = super::durable_clients::watch_after(worker, key, &conversation, None);
    let first = back
        .recv_timeout(Duration::from_secs(5))
        .expect("an event on attach");
    assert_eq!(
        (first.event.as_str(), data(&first)["state"].clone()),
        ("handoff", json!("none"))
    );
    assert!(data(&first).get("agent").is_none_or(Value::is_null));
}

fn stop(worker: &Worker, key: &str, conversation: &str) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/stop")))
            .set("x-api-key", key)
            .send_string(""),
    )
}

/// Posts `content` on a thread that reads the whole stream (`each` after every event).
fn post_thread(
    worker: &Worker,
    key: &str,
    conversation: &str,
    content: &str,
    mut each: impl FnMut(&[ReceivedEvent]) + Send + 'static,
) -> thread::JoinHandle<Vec<ReceivedEvent>> {
    let url = worker.url(&format!("/conversations/{conversation}/messages"));
    let (key, content) = (key.to_string(), content.to_string());
    thread::spawn(move || {
        let response = agent()
            .post(&url)
            .set("x-api-key", &key)
            .send_json(json!({"content": content}))
            .expect("answered");
        let mut reader = BufReader::new(response.into_reader());
        read_events_until(&mut reader, |events| {
            each(events);
            false
        })
    })
}

fn chunks(events: &[ReceivedEvent]) -> usize {
    events.iter().filter(|e| e.event.is_empty()).count()
}

#[test]
fn stop_ends_the_running_turn_keeps_what_was_streamed_and_frees_the_line() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let tokens = split_tokens(LONG);
    upstream.push(slow_long());
    upstream.push(Reply::text(SECOND_ANSWER));
    let site = site_with_upstream(worker, "Stop shop", &upstream.base_url, false);
    let other = site_with_upstream(worker, "Stop other shop", &upstream.base_url, false);
    let key = site.secret_key.clone();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let live = super::durable_clients::watch_after(worker, &key, &conversation, None);

    // The poster reads its stream; after 4 chunks the test is told.
    let (at_four_tx, at_four) = mpsc::channel();
    let mut told = false;
    let poster = post_thread(worker, &key, &conversation, QUESTION, move |events| {
        if !told && chunks(events) >= 4 {
            told = true;
            let _ = at_four_tx.send(());
        }
    });
    at_four
        .recv_timeout(Duration::from_secs(20))
        .expect("4 chunks streamed");
    // A second post waits in line behind the running turn.
    let second = post_thread(worker, &key, &conversation, SECOND, |_| {});
    thread::sleep(Duration::from_millis(300));

    // Another site's key does not reach the conversation (and stops nothing).
    let (status, body) = stop(worker, &other.secret_key, &conversation);
    assert_eq!(status, 404, "{body}");

    let (status, body) = stop(worker, &key, &conversation);
    assert_eq!(status, 200, "{body}");
    let stopped: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(stopped["stopped"], true, "{stopped}");

    let posted = poster.join().expect("poster");
    let (name, done) = terminal(&posted);
    assert_eq!(name, "completed", "{posted:?}");
    assert_eq!(done["reply"]["stopped"], true, "{done}");
    assert_eq!(done["reply"]["kind"], "stopped", "{done}");
    assert_eq!(done["message_id"], stopped["message_id"], "{done}");
    let shown = streamed_text(&posted);
    assert!(
        !shown.is_empty() && shown.len() < LONG.len(),
        "cut mid-answer: {shown:?}"
    );

    // The watcher: the same turn, ended once.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut watched = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(event) = live.recv_timeout(left) else {
            break;
        };
        let end = event.event == "completed" && data(&event)["message_id"] == done["message_id"];
        watched.push(event);
        if end {
            break;
        }
    }
    let turn: Vec<ReceivedEvent> = watched
        .iter()
        .skip_while(|e| e.event != "started")
        .cloned()
        .collect();
    let (_, seen_done) = terminal(&turn);
    assert_eq!(seen_done["reply"]["stopped"], true);
    assert_eq!(streamed_text(&turn), shown);

    // The next post in line ran, after the stopped one, with its own answer.
    let next = second.join().expect("second post");
    let (name, _) = terminal(&next);
    assert_eq!(name, "completed", "{next:?}");
    assert_eq!(streamed_text(&next), SECOND_ANSWER);
    assert!(next[0].arrived >= posted.last().expect("terminal").arrived);

    // Stored: exactly what was streamed, marked stopped, then the next question.
    let stored: Vec<Value> = history(worker, &key, &conversation)
        .into_iter()
        .filter(|m| m["kind"] != "greeting")
        .collect();
    let summary: Vec<(&str, &str)> = stored
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default(),
                m["content"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("user", QUESTION),
            ("assistant", shown.as_str()),
            ("user", SECOND),
            ("assistant", SECOND_ANSWER)
        ]
    );
    assert_eq!(stored[1]["id"], done["message_id"]);
    assert_eq!(stored[1]["metadata"]["stopped"], true, "{}", stored[1]);

    // The model's request was cancelled: its connection closed before the answer's end.
    let written = eventually(
        Duration::from_secs(10),
        "the upstream sees its client go",
        || upstream.abandoned().first().copied(),
    );
    assert!(
        written < tokens.len(),
        "{written} of {} pieces",
        tokens.len()
    );
    // The second turn's prompt holds the stopped answer as it was kept.
    let requests = upstream.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.to_string().contains(shown.trim()));

    // Nothing runs now: nothing to stop.
    let (status, body) = stop(worker, &key, &conversation);
    assert_eq!(status, 204, "{body}");
}

/// `GET /conversations/{id}/stream` after event `after`: status and events.
fn resume(worker: &Worker, key: &str, conversation: &str, after: u64) -> (u16, Vec<ReceivedEvent>) {
    let result = agent()
        .get(&worker.url(&format!("/conversations/{conversation}/stream")))
        .set("x-api-key", key)
        .set("last-event-id", &after.to_string())
        .call();
    match result {
        Ok(response) => {
            let status = response.status();
            (status, read_events(response.into_reader()))
        }
        Err(ureq::Error::Status(status, _)) => (status, Vec::new()),
        Err(error) => panic!("resume: {error}"),
    }
}

fn id_of(event: &ReceivedEvent) -> u64 {
    event
        .id
        .as_deref()
        .and_then(|id| id.parse().ok())
        .expect("an id")
}

#[test]
fn resuming_a_turn_that_ended_while_the_next_began_gives_that_turn_not_the_next() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(Reply::text(LONG));
    upstream.push(Reply::text(SECOND_ANSWER));
    let site = site_with_upstream(worker, "Earlier turn shop", &upstream.base_url, false);
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, first) = send(worker, key, &conversation, QUESTION);
    let (_, second) = send(worker, key, &conversation, SECOND);
    assert_eq!(streamed_text(&second), SECOND_ANSWER);

    // A client that saw the first turn start (another tab, announced by the live stream)
    // asks for it only now: it gets that turn, to its end.
    let (status, earlier) = resume(worker, key, &conversation, id_of(&first[0]) - 1);
    assert_eq!(status, 200);
    let (name, done) = terminal(&earlier);
    assert_eq!(name, "completed");
    assert_eq!(done["message_id"], terminal(&first).1["message_id"]);
    assert_eq!(streamed_text(&earlier), LONG);
    let ids: Vec<u64> = earlier.iter().map(id_of).collect();
    let first_ids: Vec<u64> = first.iter().map(id_of).collect();
    assert_eq!(ids, first_ids, "that turn's events, none of the next one's");

    // From the middle of it: the rest of it.
    let (status, rest) = resume(worker, key, &conversation, id_of(&first[3]));
    assert_eq!(status, 200);
    assert_eq!(
        rest.iter().map(id_of).collect::<Vec<_>>(),
        first_ids[4..].to_vec()
    );
}

#[test]
fn a_stopped_ai_sdk_stream_ends_with_one_finish_and_done() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow_long());
    let site = site_with_upstream(worker, "Stop AI SDK shop", &upstream.base_url, false);
    let key = site.secret_key.clone();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let url = worker.url(&format!(
        "/conversations/{conversation}/messages?format=ai-sdk"
    ));
    let (deltas_tx, deltas) = mpsc::channel();
    let reader = {
        let key = key.clone();
        thread::spawn(move || {
            let response = agent()
                .post(&url)
                .set("x-api-key", &key)
                .send_json(json!({"content": QUESTION}))
                .expect("answered");
            let mut reader = BufReader::new(response.into_reader());
            read_events_until(&mut reader, |events| {
                let deltas = events
                    .iter()
                    .filter(|e| e.data.contains("\"text-delta\""))
                    .count();
                if deltas == 3 {
                    let _ = deltas_tx.send(());
                }
                false
            })
        })
    };
    deltas
        .recv_timeout(Duration::from_secs(20))
        .expect("3 deltas streamed");
    let (status, body) = stop(worker, &key, &conversation);
    assert_eq!(status, 200, "{body}");
    let events = reader.join().expect("reader");
    let parts: Vec<Value> = events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .map(|e| serde_json::from_str(&e.data).expect("a UI message part"))
        .collect();
    let kinds: Vec<&str> = parts.iter().filter_map(|p| p["type"].as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "finish").count(),
        1,
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"error"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"finish"), "{kinds:?}");
    assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
    let finish = parts.last().expect("finish");
    assert_eq!(
        finish["messageMetadata"]["reply"]["stopped"], true,
        "{finish}"
    );
    let shown: String = parts
        .iter()
        .filter(|p| p["type"] == "text-delta")
        .filter_map(|p| p["delta"].as_str())
        .collect();
    let stored = history(worker, &key, &conversation);
    let reply = stored.last().expect("the reply");
    assert_eq!(reply["content"], shown.as_str());
    assert_eq!(reply["metadata"]["stopped"], true);
}

#[test]
fn stop_reaches_only_the_visitor_whose_conversation_it_is() {
    const ORIGIN: &str = "https://shop.example";
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow_long());
    let site = site_with_upstream(worker, "Stop scope shop", &upstream.base_url, false);
    let secret = new_token_secret(worker, &site);
    let (alice, bob) = (token_for(&secret, "alice"), token_for(&secret, "bob"));
    let as_visitor = |request: ureq::Request, token: Option<&str>, origin: &str| {
        let request = request
            .set("x-api-key", &site.public_key)
            .set("origin", origin);
        match token {
            Some(token) => request.set("x-user-token", token),
            None => request,
        }
    };
    let (status, body) = into_parts(
        as_visitor(
            agent().post(&worker.url("/conversations")),
            Some(&alice),
            ORIGIN,
        )
        .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let created: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = created["conversation_id"].as_str().expect("id").to_string();
    let response = as_visitor(
        agent().post(&worker.url(&format!("/conversations/{conversation}/messages"))),
        Some(&alice),
        ORIGIN,
    )
    .send_json(json!({"content": QUESTION}))
    .expect("answered");
    let mut reader = BufReader::new(response.into_reader());
    let mut seen = read_events_until(&mut reader, |events| chunks(events) >= 2);
    let stop_as = |token: Option<&str>, origin: &str| {
        into_parts(
            as_visitor(
                agent().post(&worker.url(&format!("/conversations/{conversation}/stop"))),
                token,
                origin,
            )
            .send_string(""),
        )
    };
    // Another visitor, an anonymous one, another origin: refused, and nothing stops.
    assert_eq!(stop_as(Some(&bob), ORIGIN).0, 404);
    assert_eq!(stop_as(None, ORIGIN).0, 404);
    assert_eq!(stop_as(Some(&alice), "https://elsewhere.example").0, 403);
    let before = chunks(&seen);
    seen.extend(read_events_until(&mut reader, |events| chunks(events) >= 2));
    assert!(chunks(&seen) > before, "the answer went on");
    // Alice stops her own turn.
    let (status, body) = stop_as(Some(&alice), ORIGIN);
    assert_eq!(status, 200, "{body}");
    seen.extend(read_events_until(&mut reader, |_| false));
    let (name, done) = terminal(&seen);
    assert_eq!(
        (name.as_str(), &done["reply"]["stopped"]),
        ("completed", &json!(true))
    );
}
