//! Issue 27 item 8: the native stream says what kind of rental reply it was — `completed`
//! carries seed 002's `data | content | control` and the reply's envelope (`{kind,
//! timestamp, payload?}`) for every reply, content included, replays too — and a message
//! sent with `Accept: application/json` gets the seed's whole `ChatResponse` as JSON.

use concierge_e2e::api::{history, send, terminal};
use concierge_e2e::{agent, into_parts};
use serde_json::{Value, json};

use super::{Q1_SQL, rental_site};

/// The `completed` event's data of one streamed turn.
fn completed(r: &super::Rental, conversation: &str, question: &str) -> Value {
    let (status, events) = send(r.worker, &r.site.secret_key, conversation, question);
    assert_eq!(status, 200);
    let (name, data) = terminal(&events);
    assert_eq!(name, "completed", "{events:?}");
    data
}

fn is_iso_utc(text: &Value) -> bool {
    text.as_str().is_some_and(|t| {
        t.len() == 20 && t.ends_with('Z') && t.as_bytes()[10] == b'T' && t.starts_with("20")
    })
}

#[test]
fn completed_says_data_content_or_control_with_the_replys_envelope() {
    let r = rental_site("Rental reply kinds");
    let conversation = r.conversation(json!({}));

    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(Q1_SQL);
    r.reply("Đây là 2 phòng giá rẻ ở quận 1");
    r.reply("{\"isValid\": true}");
    let data = completed(&r, &conversation, "Phòng giá rẻ ở quận 1?");
    assert_eq!(data["kind"], "data", "{data}");
    assert_eq!(data["reply"]["kind"], "DATA");
    assert!(is_iso_utc(&data["reply"]["timestamp"]), "{data}");
    assert_eq!(data["reply"]["payload"]["mode"], "LIST");
    assert_eq!(data["reply"]["payload"]["list"]["total"], 2);
    let answer_id = data["message_id"].clone();

    r.orchestrate(
        "GENERAL_CHAT",
        false,
        "LIST",
        "Mình là trợ lý tìm phòng, rất vui được giúp bạn!",
    );
    let content = completed(&r, &conversation, "Bạn là ai vậy?");
    assert_eq!(content["kind"], "content", "{content}");
    assert_eq!(content["reply"]["kind"], "CONTENT");
    assert!(is_iso_utc(&content["reply"]["timestamp"]), "{content}");
    assert!(content["reply"].get("payload").is_none(), "{content}");

    r.orchestrate("CLARIFICATION", false, "LIST", "Bạn muốn tìm ở quận nào?");
    let control = completed(&r, &conversation, "Tìm phòng cho mình");
    assert_eq!(control["kind"], "control", "{control}");
    assert_eq!(control["reply"]["kind"], "CONTROL");
    assert_eq!(control["reply"]["payload"]["reason"], "CLARIFICATION");

    // The history keeps the stored kinds; the reply's kind is derived from it.
    let messages = history(r.worker, &r.site.secret_key, &conversation);
    let stored = messages
        .iter()
        .find(|m| m["id"] == answer_id)
        .expect("stored");
    assert_eq!(stored["metadata"]["kind"], "DATA");
}

#[test]
fn a_replayed_reply_says_the_same_kind() {
    let r = rental_site("Rental reply replay");
    let conversation = r.conversation(json!({}));
    r.orchestrate("CLARIFICATION", false, "LIST", "Bạn muốn thuê ở quận nào?");
    let post = || {
        agent()
            .post(
                &r.worker
                    .url(&format!("/conversations/{conversation}/messages")),
            )
            .set("x-api-key", &r.site.secret_key)
            .set("idempotency-key", "k-replay-1")
            .send_json(json!({"content": "Tìm phòng"}))
            .expect("200")
    };
    let first = concierge_e2e::read_events(post().into_reader());
    let again = concierge_e2e::read_events(post().into_reader());
    let (a, b) = (terminal(&first).1, terminal(&again).1);
    assert_eq!(a["kind"], "control", "{a}");
    assert_eq!((&a["kind"], &a["reply"]), (&b["kind"], &b["reply"]));
}

#[test]
fn accept_json_answers_the_seeds_chat_response() {
    let r = rental_site("Rental reply JSON");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "TABLE", "");
    r.reply(Q1_SQL);
    r.reply("Bảng giá các phòng ở quận 1");
    r.reply("{\"isValid\": true}");
    let response = agent()
        .post(
            &r.worker
                .url(&format!("/conversations/{conversation}/messages")),
        )
        .set("x-api-key", &r.site.secret_key)
        .set("accept", "application/json")
        .send_json(json!({"content": "Bảng giá phòng quận 1"}))
        .expect("200");
    assert!(response.content_type().starts_with("application/json"));
    let body: Value = response.into_json().expect("JSON");
    assert_eq!(body["kind"], "DATA", "{body}");
    assert_eq!(body["sessionId"], conversation.as_str());
    assert_eq!(body["conversation_id"], conversation.as_str());
    assert!(is_iso_utc(&body["timestamp"]), "{body}");
    assert_eq!(body["message"], "[GUEST] Bảng giá các phòng ở quận 1");
    assert_eq!(body["payload"]["mode"], "TABLE");
    assert_eq!(
        body["payload"]["table"]["rows"].as_array().map(Vec::len),
        Some(2)
    );
    // The same turn as a stream would have stored.
    let messages = history(r.worker, &r.site.secret_key, &conversation);
    let reply = messages.last().expect("reply");
    assert_eq!(reply["id"], body["message_id"]);
    assert_eq!(reply["content"], body["message"]);
    assert_eq!(
        messages.iter().filter(|m| m["role"] == "user").count(),
        1,
        "{messages:?}"
    );

    // A bad body is still the same clear error.
    let (status, text) = into_parts(
        agent()
            .post(
                &r.worker
                    .url(&format!("/conversations/{conversation}/messages")),
            )
            .set("x-api-key", &r.site.secret_key)
            .set("accept", "application/json")
            .send_json(json!({"content": "  "})),
    );
    assert_eq!(status, 400, "{text}");
}
