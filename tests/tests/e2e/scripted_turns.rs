//! Scripted turns (`POST /debug/conversations/{id}/script`, `DEBUG_ROUTES` only): a
//! conversation's next streamed turn plays a test's events through the real engine and
//! native encoder, and stores the reply with its payloads like any turn. The widget's
//! Chromium tests drive rich turns with it (`browser_rich`); production has no such route
//! (`hardening_keys::production`).

use concierge_e2e::api::{
    create_conversation, error_code, history, send, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// Stage `script` for `conversation`'s next turn with `key`.
pub(crate) fn stage(
    worker: &Worker,
    key: &str,
    conversation: &str,
    script: &Value,
) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url(&format!("/debug/conversations/{conversation}/script")))
            .set("x-api-key", key)
            .send_json(script.clone()),
    )
}

fn site(worker: &Worker, upstream: &ScriptedUpstream) -> TestSite {
    site_with_upstream(worker, "Scripted turns", &upstream.base_url, false)
}

fn list() -> Value {
    json!({"kind": "list", "data": {"items": [
        {"id": "r1", "title": "Phòng 101", "path": "/rooms/101", "entity": "room", "subtitle": "25 m²"}
    ], "total": 7}})
}

fn chart() -> Value {
    json!({"kind": "chart", "data": {"chart": "bar", "labels": ["T1", "T2"],
        "series": [{"name": "Doanh thu", "values": [120.5, 98.0]}], "alt": "Doanh thu tháng 1 và 2"}})
}

/// The staged chart as it is sent and stored: its own fields unchanged, plus seed 002's
/// chart object (issue 27 item 7).
fn assert_sent_chart(sent: &Value) {
    assert_eq!(sent["kind"], "chart");
    for (key, value) in chart()["data"].as_object().expect("fields") {
        assert_eq!(&sent["data"][key], value, "{key}: {sent}");
    }
    super::rental::assert_seed_chart(&sent["data"], &["T1", "T2"], &[120.5, 98.0]);
}

#[test]
fn a_staged_script_streams_its_events_and_stores_its_payloads_once() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Tokens {
        tokens: split_tokens("Dạ, em là trợ lý."),
        first_token_after: std::time::Duration::from_millis(10),
        between: std::time::Duration::from_millis(10),
    });
    let site = site(worker, &upstream);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let script = json!({"steps": [
        {"type": "tool_start", "call_id": "c1", "name": "search_rooms", "input": {"q": "101"}},
        {"type": "progress", "message": "Đang tìm phòng…", "percentage": 40, "stage": "executing_task"},
        {"type": "wait", "ms": 50},
        {"type": "tool_end", "call_id": "c1", "name": "search_rooms", "ok": true, "output": {"found": 1}},
        {"type": "chunk", "text": "Dạ, có "},
        {"type": "chunk", "text": "một phòng."},
        {"type": "payload", "kind": list()["kind"], "data": list()["data"]},
        {"type": "payload", "kind": "chart", "data": chart()["data"]},
    ]});
    let (status, body) = stage(worker, &site.secret_key, &conversation, &script);
    assert_eq!(status, 204, "{body}");

    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Còn phòng 101 không?",
    );
    assert_eq!(status, 200);
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        names,
        [
            "started",
            "tool_start",
            "progress",
            "tool_end",
            "",
            "",
            "payload",
            "payload",
            "completed"
        ]
    );
    let data = |i: usize| -> Value { serde_json::from_str(&events[i].data).expect("JSON") };
    assert_eq!(data(1)["name"], "search_rooms");
    assert_eq!(
        (data(2)["message"].clone(), data(2)["percentage"].clone()),
        (json!("Đang tìm phòng…"), json!(40.0))
    );
    assert_eq!(
        (data(3)["call_id"].clone(), data(3)["ok"].clone()),
        (json!("c1"), json!(true))
    );
    assert_eq!(data(6), list());
    assert_sent_chart(&data(7));
    assert_eq!(streamed_text(&events), "Dạ, có một phòng.");
    assert_eq!(terminal(&events).1["kind"], "answer");
    assert!(
        upstream.chat_requests().is_empty(),
        "the model was not called"
    );

    // Stored like a real reply: history shows the text and the payloads as they streamed.
    let messages = history(worker, &site.secret_key, &conversation);
    let reply = messages.last().expect("reply");
    assert_eq!(reply["content"], "Dạ, có một phòng.");
    assert_eq!(reply["payloads"][0], list());
    assert_eq!(reply["payloads"].as_array().map(Vec::len), Some(2));
    assert_sent_chart(&reply["payloads"][1]);

    // Played once: the next turn is the site's template again.
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Tôi muốn mua Galaxy S23 Ultra, giá bao nhiêu?",
    );
    assert_eq!(streamed_text(&events), "Dạ, em là trợ lý.");
    assert_eq!(upstream.chat_requests().len(), 1);
}

#[test]
fn a_script_is_staged_only_where_the_caller_may_chat_and_only_when_valid() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site(worker, &upstream);
    let other = self::site(worker, &upstream);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let ok = json!({"steps": [{"type": "chunk", "text": "x"}]});

    // Another site's key does not reach this conversation.
    let (status, body) = stage(worker, &other.secret_key, &conversation, &ok);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (404, "not_found"),
        "{body}"
    );
    // No key at all.
    let (status, _) = into_parts(
        agent()
            .post(&worker.url(&format!("/debug/conversations/{conversation}/script")))
            .send_json(ok.clone()),
    );
    assert_eq!(status, 401);
    for bad in [
        json!({"steps": []}),
        json!({"steps": [{"type": "wait", "ms": 60_000}]}),
        json!({"steps": [{"type": "shell", "cmd": "x"}]}),
        json!({"steps": [{"type": "payload", "kind": "chart", "data": {"chart": "radar"}}]}),
    ] {
        let (status, body) = stage(worker, &site.secret_key, &conversation, &bad);
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{bad}: {body}"
        );
    }
}

/// Every turn of a conversation asks the model once. The object starts a turn's answer from
/// its memory of the conversation, which the previous turn left without reading D1 again
/// (its visitor's message and reply added to what it read); the turn's write compares that
/// memory with D1, and any difference answers the turn a second time. So this fails if the
/// memory ever differs from the stored history: a reply with tool rounds and payloads, then
/// more turns than the history window holds.
#[test]
fn consecutive_turns_are_answered_once_each_from_the_history_as_stored() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site(worker, &upstream);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let script = json!({"steps": [
        {"type": "tool_start", "call_id": "c1", "name": "search_rooms", "input": {"q": "101"}},
        {"type": "tool_end", "call_id": "c1", "name": "search_rooms", "ok": true, "output": {"found": 1}},
        {"type": "chunk", "text": "Dạ, có một phòng."},
        {"type": "payload", "kind": list()["kind"], "data": list()["data"]},
        {"type": "payload", "kind": "chart", "data": chart()["data"]},
    ]});
    let (status, body) = stage(worker, &site.secret_key, &conversation, &script);
    assert_eq!(status, 204, "{body}");
    let (status, events) = send(worker, &site.secret_key, &conversation, "Còn phòng 101?");
    assert_eq!((status, terminal(&events).0.as_str()), (200, "completed"));

    // Seven more turns: fourteen more messages, more than the window of twelve.
    let stored = history(worker, &site.secret_key, &conversation).len();
    let turns = 7;
    for n in 1..=turns {
        upstream.push(Reply::Tokens {
            tokens: split_tokens(&format!("Dạ, trả lời số {n}.")),
            first_token_after: std::time::Duration::from_millis(5),
            between: std::time::Duration::from_millis(2),
        });
        let question =
            format!("Tư vấn cấu hình PC chơi game, ngân sách {n}5 triệu, card nào hợp lý?");
        let (status, events) = send(worker, &site.secret_key, &conversation, &question);
        assert_eq!(status, 200);
        assert_eq!(terminal(&events).0, "completed", "{events:?}");
        assert_eq!(streamed_text(&events), format!("Dạ, trả lời số {n}."));
        assert_eq!(
            upstream.chat_requests().len(),
            n,
            "turn {n} asked the model once, from the history as stored"
        );
    }
    // The last turn's request carries the turns before it, in order, each once.
    let requests = upstream.chat_requests();
    let last = requests.last().expect("a request").body.to_string();
    let at = |text: &str| {
        last.find(text)
            .unwrap_or_else(|| panic!("{text} in {last}"))
    };
    assert!(at("ngân sách 55 triệu") < at("trả lời số 5"));
    assert!(at("trả lời số 5") < at("ngân sách 65 triệu"));
    assert_eq!(last.matches("ngân sách 65 triệu").count(), 1, "{last}");
    assert_eq!(
        history(worker, &site.secret_key, &conversation).len(),
        stored + 2 * turns
    );
}
