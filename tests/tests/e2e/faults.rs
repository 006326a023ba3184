//! Upstream faults through the real Worker: each ends the stream with exactly one `failed`
//! event, the visitor's message stays stored, and no half answer is stored as complete.

use std::time::{Duration, Instant};

use concierge_e2e::api::{
    create_conversation, history, send, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, free_port};
use serde_json::json;

const QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 20 triệu";

/// Run one turn against `upstream_base` and check the failure contract. Returns the
/// streamed text and the failure code.
fn failing_turn(upstream_base: &str) -> (String, String) {
    let worker = Worker::shared();
    let site = site_with_upstream(worker, "Fault shop", upstream_base, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, QUESTION);
    assert_eq!(status, 200);
    assert_eq!(events.first().map(|e| e.event.as_str()), Some("started"));
    let (name, data) = terminal(&events);
    assert_eq!(name, "failed", "{events:?}");
    let code = data["error"]["code"]
        .as_str()
        .expect("error.code")
        .to_string();
    assert!(
        data["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(
        !data.to_string().contains("127.0.0.1"),
        "no internal detail leaks: {data}"
    );

    let stored = history(worker, &site.secret_key, &conversation);
    let user: Vec<_> = stored.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(
        user.len(),
        1,
        "the visitor's message stays stored: {stored:?}"
    );
    assert_eq!(user[0]["content"], QUESTION);
    for message in stored.iter().filter(|m| m["kind"] == "answer") {
        assert_eq!(
            message["metadata"]["incomplete"], true,
            "no half answer stored as complete: {message}"
        );
    }
    (streamed_text(&events), code)
}

#[test]
fn connection_refused() {
    let closed = format!("http://127.0.0.1:{}", free_port());
    let (text, code) = failing_turn(&closed);
    assert_eq!(text, "");
    assert!(
        code == "model_failed" || code == "retrieval_unavailable",
        "{code}"
    );
}

#[test]
fn upstream_answers_500() {
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Status(500));
    let (text, code) = failing_turn(&upstream.base_url);
    assert_eq!((text.as_str(), code.as_str()), ("", "model_failed"));
    assert_eq!(
        upstream.chat_requests().len(),
        2,
        "one retry before the first token"
    );
}

#[test]
fn upstream_stalls_past_the_timeout() {
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Stall(Duration::from_secs(20)));
    let started = Instant::now();
    let (text, code) = failing_turn(&upstream.base_url);
    assert_eq!((text.as_str(), code.as_str()), ("", "model_failed"));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "gave up after the timeouts: {:?}",
        started.elapsed()
    );
}

#[test]
fn upstream_cuts_the_stream_mid_answer() {
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::CutAfter(vec!["Dạ, ".into(), "cấu hình ".into()]));
    let (text, code) = failing_turn(&upstream.base_url);
    assert_eq!(
        text, "Dạ, cấu hình ",
        "the tokens before the cut were streamed"
    );
    assert_eq!(code, "model_failed");
    assert_eq!(
        upstream.chat_requests().len(),
        1,
        "no retry once tokens reached the visitor"
    );
}

#[test]
fn upstream_sends_a_malformed_chunk() {
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::MalformedAfter(vec!["Dạ, ".into()]));
    let (text, code) = failing_turn(&upstream.base_url);
    assert_eq!(text, "Dạ, ");
    assert_eq!(code, "model_failed");
}
