//! Issue 27 item 8, any template: a message sent with `Accept: application/json` gets the
//! whole reply as one JSON document instead of SSE — the same turn, the same stored
//! messages — and a failed turn its error, with the visitor's message kept.

use concierge_e2e::api::{create_conversation, history, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

fn post_json(worker: &Worker, key: &str, conversation: &str, content: &str) -> (u16, Value) {
    let (status, text) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/messages")))
            .set("x-api-key", key)
            .set("accept", "application/json, text/plain;q=0.5")
            .send_json(json!({"content": content})),
    );
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}")),
    )
}

#[test]
fn a_shop_answer_comes_whole_as_json_and_is_stored_like_a_streamed_one() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(
        "Dạ, cấu hình tầm 20 triệu gồm Ryzen 5 và RTX 4060 ạ.",
    ));
    let site = site_with_upstream(worker, "JSON shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, body) = post_json(
        worker,
        &site.secret_key,
        &conversation,
        "Tư vấn PC chơi game tầm 20 triệu",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["conversation_id"], conversation.as_str());
    assert_eq!(body["kind"], "answer");
    let message = body["message"].as_str().expect("message");
    assert!(message.contains("RTX 4060"), "{body}");
    assert!(body["payloads"].is_array(), "{body}");
    assert!(
        body.get("sessionId").is_none(),
        "only a template with an envelope: {body}"
    );
    let messages = history(worker, &site.secret_key, &conversation);
    let reply = messages.last().expect("reply");
    assert_eq!(reply["id"], body["message_id"]);
    assert_eq!(reply["content"], message);
    let user = messages.iter().find(|m| m["role"] == "user").expect("user");
    assert_eq!(user["id"], body["user_message_id"]);

    // `text/event-stream` named too: the stream stays.
    let response = agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", &site.secret_key)
        .set("accept", "application/json, text/event-stream")
        .send_json(json!({"content": "Còn tầm 15 triệu thì sao?"}))
        .expect("200");
    assert!(response.content_type().starts_with("text/event-stream"));
    let _ = response.into_string();
}

#[test]
fn a_failed_turn_answers_its_error_as_json_and_keeps_the_visitors_message() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Status(500));
    let site = site_with_upstream(worker, "JSON fault shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let question = "Tư vấn cấu hình PC chơi game tầm 20 triệu";
    let (status, body) = post_json(worker, &site.secret_key, &conversation, question);
    assert!(status >= 500, "{status} {body}");
    assert!(
        body["error"]["code"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert!(!body.to_string().contains("127.0.0.1"), "{body}");
    let messages = history(worker, &site.secret_key, &conversation);
    let user: Vec<_> = messages.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(user.len(), 1, "{messages:?}");
    assert_eq!(user[0]["content"], question);
}
