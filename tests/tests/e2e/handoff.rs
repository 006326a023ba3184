//! Human handoff over HTTP, against the real Worker under `wrangler dev` and a scripted
//! upstream on loopback (which records every model request, so "no model call" is
//! checked, not assumed): asking for a person, the console's list, taking over, a
//! person's reply, handing back (each change a line in the log, issue 45); the wait
//! running out; office hours; handoff off; the settings' checks; site scoping; no
//! regenerate of a notice or a person's reply (409 `fixed_answer`).

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use concierge_e2e::api::{
    create_conversation, error_code, eventually, fixed_sentence, history, send, site_with_upstream,
    streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// A request for a person that also names a product (with handoff off, the model answers it).
const ASK_WITH_PRODUCT: &str = "cho mình gặp nhân viên tư vấn về giá card RTX 4060";

fn patch_site(worker: &Worker, site: &TestSite, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

fn turn_handoff_on(worker: &Worker, site: &TestSite, settings: Value) {
    let (status, body) = patch_site(worker, site, json!({"handoff": settings}));
    assert_eq!(status, 200, "{body}");
}

pub(crate) fn handoffs(worker: &Worker, key: &str) -> (u16, Value) {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/handoffs"))
            .set("x-api-key", key)
            .call(),
    );
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn operate(worker: &Worker, key: &str, conversation: &str, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url(&format!("/admin/conversations/{conversation}/handoff")))
            .set("x-api-key", key)
            .send_json(body),
    )
}

fn human_reply(worker: &Worker, key: &str, conversation: &str, content: &str) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url(&format!(
                "/admin/conversations/{conversation}/messages/human"
            )))
            .set("x-api-key", key)
            .send_json(json!({"content": content})),
    )
}

fn listed_ids(list: &Value) -> Vec<(String, String)> {
    list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_string(),
                c["state"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn kinds(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn handoff_round_trip_request_take_reply_release_and_the_assistant_answers_again() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff shop", &upstream.base_url, false);
    turn_handoff_on(worker, &site, json!({"enabled": true, "wait_seconds": 600}));
    let key = site.secret_key.as_str();
    let (first, _) = create_conversation(worker, &site, json!({}));
    let (second, _) = create_conversation(worker, &site, json!({}));

    // Asking: a stored notice in the conversation's language, streamed as the turn; no model.
    let (status, events) = send(worker, key, &first, "Cho mình gặp nhân viên với");
    assert_eq!(status, 200);
    assert_eq!(events[0].event, "started");
    let (name, done) = terminal(&events);
    assert_eq!(name, "completed");
    assert_eq!(done["kind"], "handoff");
    assert_eq!(
        streamed_text(&events),
        fixed_sentence("handoff_fixed_vi.md", "waiting.em")
    );
    std::thread::sleep(Duration::from_millis(20));
    let (_, events) = send(worker, key, &second, "I want to talk to a human, please");
    assert_eq!(terminal(&events).1["kind"], "handoff");
    assert_eq!(
        streamed_text(&events),
        fixed_sentence("handoff_fixed_en.md", "waiting")
    );
    assert!(
        upstream.chat_requests().is_empty(),
        "no model call for a request"
    );
    let stored = history(worker, key, &first);
    assert_eq!(
        kinds(&stored)[1..],
        [
            ("user".into(), "text".into()),
            ("assistant".into(), "handoff".into()),
            ("assistant".into(), "handoff".into())
        ]
    );
    // The wait beginning is a line in the log too (issue 45): a reload shows it.
    assert_eq!(stored[2]["metadata"]["handoff"], "waiting");
    assert_eq!(stored[3]["metadata"]["handoff"], "requested");
    assert_eq!(
        stored[3]["content"],
        fixed_sentence("handoff_fixed_vi.md", "requested").as_str()
    );
    // Neither notice is the assistant's to answer again: 409 with a sentence, nothing
    // changes, no model call.
    let (status, body) = regenerate(worker, key, &first);
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_code(&body), "fixed_answer");
    assert!(
        error_message(&body).contains("cannot be regenerated"),
        "{body}"
    );
    assert_eq!(history(worker, key, &first), stored);

    // Listed, newest request first (issue 39: a flood cannot hide a new one), with the
    // waiting count.
    let (status, list) = handoffs(worker, key);
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["waiting"], 2);
    assert_eq!(
        listed_ids(&list),
        [
            (second.clone(), "waiting".into()),
            (first.clone(), "waiting".into())
        ]
    );
    let requested = |i: usize| {
        list["conversations"][i]["requested_at"]
            .as_u64()
            .expect("requested_at")
    };
    assert!(requested(0) >= requested(1));
    assert_eq!(list["conversations"][0]["last_message"]["kind"], "handoff");

    // A person takes the first one.
    let (status, body) = operate(
        worker,
        key,
        &first,
        json!({"action": "take", "agent": "Lan"}),
    );
    assert_eq!(status, 200, "{body}");
    let taken: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(taken["handoff"]["state"], "held");
    assert_eq!(taken["handoff"]["agent"], "Lan");
    let (_, list) = handoffs(worker, key);
    assert_eq!(list["waiting"], 1);
    assert_eq!(
        listed_ids(&list),
        [
            (second.clone(), "waiting".into()),
            (first.clone(), "held".into())
        ]
    );
    assert_eq!(list["conversations"][1]["agent"], "Lan");
    // The console's view of one conversation says so too.
    let console_view = |id: &str| {
        let (status, body) = into_parts(
            agent()
                .get(&worker.url(&format!("/admin/conversations/{id}")))
                .set("x-api-key", key)
                .call(),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).expect("JSON")["handoff"].clone()
    };
    let held = console_view(&first);
    assert_eq!(
        (&held["state"], &held["agent"]),
        (&json!("held"), &json!("Lan"))
    );
    // The takeover is a line in the log, naming the person.
    let stored = history(worker, key, &first);
    let joined = stored.last().expect("the takeover's line");
    assert_eq!(
        (&joined["kind"], &joined["metadata"]["handoff"]),
        (&json!("handoff"), &json!("joined"))
    );
    assert_eq!(joined["metadata"]["agent"], "Lan");
    assert_eq!(
        joined["content"],
        fixed_sentence("handoff_fixed_vi.md", "joined")
            .replace("{agent}", "Lan")
            .as_str()
    );
    assert_eq!(console_view(&second)["state"], "waiting");

    // Held: the visitor's message is stored; nobody but the person answers it.
    let (status, events) = send(worker, key, &first, "còn hàng không?");
    assert_eq!(status, 200);
    assert_eq!(events[0].event, "started");
    let (name, done) = terminal(&events);
    assert_eq!(
        (name.as_str(), &done["kind"]),
        ("completed", &json!("held"))
    );
    assert_eq!(streamed_text(&events), "");
    assert!(
        upstream.chat_requests().is_empty(),
        "no model call while held"
    );

    // The person's reply: stored like any message, marked as from a person.
    let (status, body) = human_reply(worker, key, &first, "Dạ em là Lan, mẫu này còn hàng ạ.");
    assert_eq!(status, 201, "{body}");
    let replied: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(replied["message"]["kind"], "human");
    assert_eq!(replied["message"]["author"]["name"], "Lan");
    let stored = history(worker, key, &first);
    let last_two = &stored[stored.len() - 2..];
    assert_eq!(
        kinds(last_two),
        [
            ("user".into(), "text".into()),
            ("assistant".into(), "human".into())
        ]
    );
    assert_eq!(last_two[0]["content"], "còn hàng không?");
    assert_eq!(last_two[1]["content"], "Dạ em là Lan, mẫu này còn hàng ạ.");
    assert_eq!(last_two[1]["metadata"]["author"]["name"], "Lan");
    assert_eq!(last_two[1]["author"]["name"], "Lan");
    // Embedded like any message (its words reach retrieval later).
    eventually(
        Duration::from_secs(20),
        "the person's reply embedded",
        || {
            upstream
                .recorded()
                .iter()
                .any(|r| {
                    r.path.ends_with("/embeddings")
                        && r.body["input"].to_string().contains("mẫu này còn hàng")
                })
                .then_some(())
        },
    );
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/conversations/export?format=json"))
            .set("x-api-key", key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let exported: Value = serde_json::from_str(&body).expect("JSON");
    assert!(
        exported["messages"]
            .as_array()
            .expect("rows")
            .iter()
            .any(|m| m["kind"] == "human"
                && m["author"] == "Lan"
                && m["content"] == "Dạ em là Lan, mẫu này còn hàng ạ."),
        "the export shows the person's reply: {body}"
    );

    // The person's reply is theirs: not regenerated either.
    let (status, body) = regenerate(worker, key, &first);
    assert_eq!(
        (status, error_code(&body)),
        (409, "held_by_person".into()),
        "{body}"
    );

    // Handed back: the assistant answers again, with the person's reply in its history
    // and the handoff notices left out.
    let (status, body) = operate(worker, key, &first, json!({"action": "release"}));
    assert_eq!(status, 200, "{body}");
    let (_, list) = handoffs(worker, key);
    assert_eq!(listed_ids(&list), [(second.clone(), "waiting".into())]);
    let stored = history(worker, key, &first);
    let back = stored.last().expect("the hand back's line");
    assert_eq!(back["metadata"]["handoff"], "released");
    let (status, body) = regenerate(worker, key, &first);
    assert_eq!(
        (status, error_code(&body)),
        (409, "fixed_answer".into()),
        "{body}"
    );
    // The export shows who wrote what: the person by name, the lines as handoff.
    let (_, body) = into_parts(
        agent()
            .get(&worker.url("/admin/conversations/export"))
            .set("x-api-key", key)
            .call(),
    );
    assert!(
        body.contains("\"assistant\",\"human\"") && body.contains("\"Lan\"\r\n"),
        "the CSV names the person: {body}"
    );
    assert!(
        body.contains("\"Lan đã tham gia cuộc trò chuyện.\""),
        "the CSV holds the takeover's line: {body}"
    );
    upstream.push(Reply::text("Dạ, RTX 4060 giá 8.490.000 VND ạ."));
    let (_, events) = send(worker, key, &first, "card RTX 4060 giá bao nhiêu?");
    assert_eq!(terminal(&events).1["kind"], "answer");
    assert_eq!(streamed_text(&events), "Dạ, RTX 4060 giá 8.490.000 VND ạ.");
    let requests = upstream.chat_requests();
    assert_eq!(requests.len(), 1, "the model answers again");
    let prompt = requests[0].body["messages"].to_string();
    assert!(
        prompt.contains("mẫu này còn hàng"),
        "the person's reply is in the prompt"
    );
    assert!(
        !prompt.contains(&fixed_sentence("handoff_fixed_vi.md", "waiting.em")),
        "the notice is not"
    );
    assert!(
        !prompt.contains("đã tham gia") && !prompt.contains("Đang chờ nhân viên"),
        "nor the handoff's lines: {prompt}"
    );
    // A new answer after the lines can be regenerated again.
    upstream.push(Reply::text("Dạ, RTX 4060 giá 8.390.000 VND ạ."));
    let (status, _) = regenerate(worker, key, &first);
    assert_eq!(status, 200);
}

/// `POST …/regenerate` with `key`: the status and the body (an SSE stream or a JSON error).
fn regenerate(worker: &Worker, key: &str, conversation: &str) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/regenerate")))
            .set("x-api-key", key)
            .send_json(json!({})),
    )
}

/// The error's sentence (`{"error": {"message"}}`).
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap_or_default()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn nobody_takes_it_within_the_wait_and_the_assistant_carries_on() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff timeout shop", &upstream.base_url, false);
    turn_handoff_on(worker, &site, json!({"enabled": true, "wait_seconds": 10}));
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(worker, key, &conversation, "gặp nhân viên");
    assert_eq!(terminal(&events).1["kind"], "handoff");
    // While it waits, the assistant still answers other questions.
    upstream.push(Reply::text("Dạ, còn hàng ạ."));
    let (_, events) = send(worker, key, &conversation, "card RTX 4060 còn hàng không?");
    assert_eq!(terminal(&events).1["kind"], "answer");
    assert_eq!(handoffs(worker, key).1["waiting"], 1);
    let timeout = fixed_sentence("handoff_fixed_vi.md", "timeout.em");
    let stored = eventually(Duration::from_secs(30), "the timeout notice", || {
        let stored = history(worker, key, &conversation);
        stored
            .last()
            .is_some_and(|m| m["kind"] == "handoff" && m["content"] == timeout.as_str())
            .then_some(stored)
    });
    assert_eq!(stored.last().expect("notice")["role"], "assistant");
    let (_, list) = handoffs(worker, key);
    assert_eq!(list["waiting"], 0);
    assert!(listed_ids(&list).is_empty());
    // The answer before the timeout notice is no longer the last: the notice is not
    // regenerated into a model answer.
    let (status, body) = regenerate(worker, key, &conversation);
    assert_eq!(
        (status, error_code(&body)),
        (409, "fixed_answer".into()),
        "{body}"
    );
    assert_eq!(history(worker, key, &conversation), stored);
}

/// Today's weekday (1 = Monday … 7 = Sunday) in UTC.
fn utc_weekday_today() -> u8 {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        / 86_400;
    // 1970-01-01 was a Thursday (4).
    ((days + 3) % 7) as u8 + 1
}

#[test]
fn outside_office_hours_the_visitor_is_told_the_hours_and_nothing_waits() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff hours shop", &upstream.base_url, false);
    // Open only the day after tomorrow (UTC): closed now, whatever the time.
    let open_day = (utc_weekday_today() + 1) % 7 + 1;
    turn_handoff_on(
        worker,
        &site,
        json!({"enabled": true, "time_zone": "UTC",
               "office_hours": [{"days": [open_day], "start": "09:00", "end": "17:00"}]}),
    );
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(
        worker,
        key,
        &conversation,
        "cho tôi nói chuyện với người thật",
    );
    assert_eq!(terminal(&events).1["kind"], "handoff");
    let day = [
        "thứ Hai",
        "thứ Ba",
        "thứ Tư",
        "thứ Năm",
        "thứ Sáu",
        "thứ Bảy",
        "Chủ nhật",
    ][usize::from(open_day - 1)];
    let expected = fixed_sentence("handoff_fixed_vi.md", "outside_hours.em")
        .replace("{hours}", &format!("9:00–17:00, {day}"));
    assert_eq!(streamed_text(&events), expected);
    assert!(upstream.chat_requests().is_empty());
    let (_, list) = handoffs(worker, key);
    assert_eq!(list["waiting"], 0);
    assert!(listed_ids(&list).is_empty(), "nothing waits outside hours");
    // Nothing waits, so no line says so; the notice is not regenerated.
    let stored = history(worker, key, &conversation);
    assert_eq!(stored.last().expect("notice")["content"], expected.as_str());
    let (status, body) = regenerate(worker, key, &conversation);
    assert_eq!(
        (status, error_code(&body)),
        (409, "fixed_answer".into()),
        "{body}"
    );
    assert!(upstream.chat_requests().is_empty(), "no model call");
}

#[test]
fn with_handoff_off_a_request_for_a_person_reaches_the_model() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "No handoff shop", &upstream.base_url, false);
    upstream.push(Reply::text("Dạ, RTX 4060 giá 8.490.000 VND ạ."));
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(worker, key, &conversation, ASK_WITH_PRODUCT);
    assert_eq!(terminal(&events).1["kind"], "answer");
    assert_eq!(streamed_text(&events), "Dạ, RTX 4060 giá 8.490.000 VND ạ.");
    assert_eq!(upstream.chat_requests().len(), 1);
    assert!(listed_ids(&handoffs(worker, key).1).is_empty());

    // The same words with handoff on: a notice, no model call.
    turn_handoff_on(worker, &site, json!({"enabled": true}));
    let (_, events) = send(worker, key, &conversation, ASK_WITH_PRODUCT);
    assert_eq!(terminal(&events).1["kind"], "handoff");
    assert_eq!(upstream.chat_requests().len(), 1);
}

#[test]
fn handoff_settings_are_checked_with_clear_messages() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff settings shop", &upstream.base_url, false);
    let hours = |span: Value| json!({"enabled": true, "office_hours": [span]});
    for (settings, says) in [
        (
            json!({"enabled": true, "wait_seconds": 5}),
            "wait_seconds` must be 10 to 3600",
        ),
        (
            json!({"enabled": true, "wait_seconds": 3601}),
            "wait_seconds` must be 10 to 3600",
        ),
        (
            json!({"enabled": true, "wait_seconds": -1}),
            "invalid value",
        ),
        (
            json!({"enabled": true, "time_zone": "Mars/Olympus"}),
            "not an IANA time zone",
        ),
        (
            json!({"enabled": true, "time_zone": ""}),
            "not an IANA time zone",
        ),
        (
            json!({"enabled": true, "office_hours": []}),
            "at least one span",
        ),
        (
            hours(json!({"days": [8], "start": "08:00", "end": "17:00"})),
            "8 is not a day",
        ),
        (
            hours(json!({"days": [], "start": "08:00", "end": "17:00"})),
            "at least one day",
        ),
        (
            hours(json!({"days": [1, 1], "start": "08:00", "end": "17:00"})),
            "lists 1 twice",
        ),
        (
            hours(json!({"days": [1], "start": "08:00", "end": "25:00"})),
            "`25:00` is not a time",
        ),
        (
            hours(json!({"days": [1], "start": "17:00", "end": "08:00"})),
            "`end` must be after `start`",
        ),
        (
            hours(json!({"days": [1], "start": "08:00"})),
            "missing field `end`",
        ),
        (
            json!({"enabled": true, "whatever": 1}),
            "unknown field `whatever`",
        ),
        (json!({"wait_seconds": 60}), "missing field `enabled`"),
    ] {
        let (status, body) = patch_site(worker, &site, json!({"handoff": settings}));
        assert_eq!(status, 400, "{settings}: {body}");
        assert_eq!(error_code(&body), "bad_request");
        assert!(body.contains(says), "{settings}: {body} should say {says}");
    }
    let (status, body) = patch_site(
        worker,
        &site,
        json!({"handoff": {"enabled": true, "wait_seconds": 90, "time_zone": " Asia/Ho_Chi_Minh ",
            "office_hours": [{"days": [1, 2, 3, 4, 5], "start": "8:00", "end": "17:30"}]}}),
    );
    assert_eq!(status, 200, "{body}");
    let saved: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        saved["site"]["config"]["handoff"],
        json!({"enabled": true, "wait_seconds": 90, "time_zone": "Asia/Ho_Chi_Minh",
            "office_hours": [{"days": [1, 2, 3, 4, 5], "start": "08:00", "end": "17:30"}]})
    );
    // Only `enabled` (as before office hours): the defaults.
    let (status, body) = patch_site(worker, &site, json!({"handoff": {"enabled": true}}));
    assert_eq!(status, 200, "{body}");
    let saved: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        saved["site"]["config"]["handoff"],
        json!({"enabled": true, "wait_seconds": 120, "time_zone": "Asia/Ho_Chi_Minh", "office_hours": null})
    );
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/widget/config"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON")["handoff"],
        true
    );
}

#[test]
fn console_operations_check_their_bodies_and_the_state() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff ops shop", &upstream.base_url, false);
    turn_handoff_on(worker, &site, json!({"enabled": true}));
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    for (body, says) in [
        (
            json!({"action": "grab", "agent": "Lan"}),
            "`action` must be",
        ),
        (json!({"action": "take"}), "`agent`"),
        (json!({"action": "take", "agent": "   "}), "`agent`"),
        (
            json!({"action": "take", "agent": "L".repeat(61)}),
            "`agent`",
        ),
        (
            json!({"action": "take", "agent": "Lan", "x": 1}),
            "unknown field `x`",
        ),
    ] {
        let (status, text) = operate(worker, key, &conversation, body.clone());
        assert_eq!(status, 400, "{body}: {text}");
        assert!(text.contains(says), "{body}: {text}");
    }
    // Not held: no person's reply, nothing to release.
    let (status, text) = human_reply(worker, key, &conversation, "Dạ em đây ạ");
    assert_eq!(status, 409, "{text}");
    let (status, text) = operate(worker, key, &conversation, json!({"action": "release"}));
    assert_eq!(status, 409, "{text}");
    let (status, _) = operate(
        worker,
        key,
        &conversation,
        json!({"action": "take", "agent": "Lan"}),
    );
    assert_eq!(status, 200);
    let (status, text) = human_reply(worker, key, &conversation, "   ");
    assert_eq!(status, 400, "{text}");
    // Someone else cannot take it while Lan holds it.
    let (status, text) = operate(
        worker,
        key,
        &conversation,
        json!({"action": "take", "agent": "Minh"}),
    );
    assert_eq!(status, 409, "{text}");
    let (status, text) = operate(
        worker,
        key,
        "no-such-conversation",
        json!({"action": "release"}),
    );
    assert_eq!(status, 404, "{text}");
}

#[test]
fn another_sites_key_cannot_list_take_or_reply() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff owner shop", &upstream.base_url, false);
    let other = site_with_upstream(worker, "Handoff other shop", &upstream.base_url, false);
    turn_handoff_on(worker, &site, json!({"enabled": true}));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(worker, &site.secret_key, &conversation, "gặp nhân viên");
    assert_eq!(terminal(&events).1["kind"], "handoff");
    assert_eq!(handoffs(worker, &site.secret_key).1["waiting"], 1);

    let (status, list) = handoffs(worker, &other.secret_key);
    assert_eq!(status, 200);
    assert_eq!(list["waiting"], 0);
    assert!(listed_ids(&list).is_empty());
    let (status, _) = operate(
        worker,
        &other.secret_key,
        &conversation,
        json!({"action": "take", "agent": "Mallory"}),
    );
    assert_eq!(status, 404);
    let (status, _) = human_reply(worker, &other.secret_key, &conversation, "hi");
    assert_eq!(status, 404);
    // The public key is not the console's.
    let (status, _) = handoffs(worker, &site.public_key);
    assert!(status == 401 || status == 403, "{status}");
    let (status, _) = operate(
        worker,
        &site.public_key,
        &conversation,
        json!({"action": "release"}),
    );
    assert!(status == 401 || status == 403, "{status}");
    // Still waiting, untouched.
    let (_, list) = handoffs(worker, &site.secret_key);
    assert_eq!(listed_ids(&list), [(conversation, "waiting".into())]);
}

/// Attaches to `GET /conversations/{id}/events`: each event's name and JSON data arrive on
/// the channel (pings and ids left out).
fn watch(worker: &Worker, key: &str, conversation: &str) -> mpsc::Receiver<(String, Value)> {
    let events = super::durable_clients::watch(worker, key, conversation);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for event in events.iter().filter(|e| !e.data.is_empty()) {
            let json = serde_json::from_str(&event.data).unwrap_or(Value::Null);
            if tx.send((event.event, json)).is_err() {
                return;
            }
        }
    });
    rx
}

/// Events from `rx` until one satisfies `last` (or 20 s pass).
fn until(
    rx: &mpsc::Receiver<(String, Value)>,
    last: impl Fn(&str, &Value) -> bool,
) -> Vec<(String, Value)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok((name, data)) = rx.recv_timeout(left) else {
            break;
        };
        let done = last(&name, &data);
        events.push((name, data));
        if done {
            return events;
        }
    }
    panic!("the awaited event never came; got {events:?}");
}

#[test]
fn a_watcher_sees_the_request_the_takeover_the_persons_reply_and_the_release_live() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff live shop", &upstream.base_url, false);
    turn_handoff_on(worker, &site, json!({"enabled": true}));
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let live = watch(worker, key, &conversation);

    let (_, events) = send(worker, key, &conversation, "gặp nhân viên");
    assert_eq!(terminal(&events).1["kind"], "handoff");
    let seen = until(&live, |name, _| name == "completed");
    let names: Vec<&str> = seen.iter().map(|(name, _)| name.as_str()).collect();
    // The state on attaching first (`none`), then the request as it happened.
    assert_eq!(
        names,
        [
            "handoff",
            "message",
            "started",
            "",
            "handoff",
            "message",
            "completed"
        ],
        "{seen:?}"
    );
    assert_eq!(seen[0].1["state"], "none");
    let (_, waiting) = &seen[4];
    assert_eq!(waiting["state"], "waiting");
    assert!(waiting["requested_at"].is_u64(), "{waiting}");
    // The line the wait leaves in the log, as history shows it.
    let (_, line) = &seen[5];
    assert_eq!(
        (&line["kind"], &line["metadata"]["handoff"]),
        (&json!("handoff"), &json!("requested"))
    );

    let (status, _) = operate(
        worker,
        key,
        &conversation,
        json!({"action": "take", "agent": "Lan"}),
    );
    assert_eq!(status, 200);
    let seen = until(&live, |name, _| name == "handoff");
    assert_eq!(seen.last().expect("handoff").1["state"], "held");
    assert_eq!(seen.last().expect("handoff").1["agent"], "Lan");
    let seen = until(&live, |name, _| name == "message");
    let (_, line) = seen.last().expect("the takeover's line");
    assert_eq!(
        (&line["metadata"]["handoff"], &line["metadata"]["agent"]),
        (&json!("joined"), &json!("Lan"))
    );

    // A visitor's message while held reaches the person live.
    let (_, events) = send(worker, key, &conversation, "em cần gấp ạ");
    assert_eq!(terminal(&events).1["kind"], "held");
    let seen = until(&live, |name, data| {
        name == "message" && data["role"] == "user"
    });
    assert_eq!(seen.last().expect("message").1["content"], "em cần gấp ạ");

    let (status, _) = human_reply(worker, key, &conversation, "Dạ Lan đây ạ.");
    assert_eq!(status, 201);
    let seen = until(&live, |name, data| {
        name == "message" && data["kind"] == "human"
    });
    let (_, message) = seen.last().expect("message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], "Dạ Lan đây ạ.");
    assert_eq!(message["author"]["name"], "Lan");

    let (status, _) = operate(worker, key, &conversation, json!({"action": "release"}));
    assert_eq!(status, 200);
    let seen = until(&live, |name, _| name == "handoff");
    assert_eq!(seen.last().expect("handoff").1["state"], "none");
    let seen = until(&live, |name, _| name == "message");
    assert_eq!(
        seen.last().expect("the hand back's line").1["metadata"]["handoff"],
        "released"
    );
}

#[test]
fn while_held_a_regenerate_is_refused_and_an_async_post_is_not_queued_for_the_model() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Handoff held shop", &upstream.base_url, false);
    turn_handoff_on(worker, &site, json!({"enabled": true}));
    let key = site.secret_key.as_str();
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    upstream.push(Reply::text("Dạ, còn hàng ạ."));
    let (_, events) = send(worker, key, &conversation, "card RTX 4060 còn hàng không?");
    assert_eq!(terminal(&events).1["kind"], "answer");
    let (status, _) = operate(
        worker,
        key,
        &conversation,
        json!({"action": "take", "agent": "Lan"}),
    );
    assert_eq!(status, 200);

    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/regenerate")))
            .set("x-api-key", key)
            .send_json(json!({})),
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_code(&body), "held_by_person");

    let async_post = |content: &str| {
        into_parts(
            agent()
                .post(&worker.url(&format!("/conversations/{conversation}/messages")))
                .set("x-api-key", key)
                .set("prefer", "respond-async")
                .send_json(json!({"content": content})),
        )
    };
    let (status, body) = async_post("giá card RTX 4070 bao nhiêu?");
    assert_eq!(status, 200, "answered at once, not queued: {body}");
    let answered: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answered["kind"], "held");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        upstream.chat_requests().len(),
        1,
        "no model call while held"
    );
    let stored = history(worker, key, &conversation);
    let last = stored.last().expect("the visitor's message");
    assert_eq!(
        (&last["role"], &last["content"]),
        (&json!("user"), &json!("giá card RTX 4070 bao nhiêu?"))
    );

    // Handed back, a request for a person posted async is answered at once with the notice.
    let (status, _) = operate(worker, key, &conversation, json!({"action": "release"}));
    assert_eq!(status, 200);
    let (status, body) = async_post("I want to talk to a human");
    assert_eq!(status, 200, "{body}");
    let answered: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answered["kind"], "handoff");
    assert_eq!(
        answered["message"],
        fixed_sentence("handoff_fixed_vi.md", "waiting.em").as_str()
    );
    assert_eq!(upstream.chat_requests().len(), 1);
}
