//! Issue 27 item 4: the greeting is not a stored message of a `guarded` conversation
//! (seed 004's conversations hold only questions and answers), on every surface that opens
//! one; the widget's API still hands the greeting over to be shown, beside the messages.

use concierge_e2e::api::{create_conversation, history, send, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

use super::guarded::{guarded_site, put_pages, rpc};

fn get(worker: &Worker, key: &str, path: &str) -> Value {
    let (status, body) = into_parts(agent().get(&worker.url(path)).set("x-api-key", key).call());
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("JSON")
}

#[test]
fn a_widget_conversation_shows_the_greeting_but_stores_only_questions_and_answers() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let (status, text) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"language": "vi"})),
    );
    assert_eq!(status, 201, "{text}");
    let created: Value = serde_json::from_str(&text).expect("JSON");
    let conversation = created["conversation_id"].as_str().expect("id").to_string();
    assert_eq!(created["messages"], json!([]), "{created}");
    let greeting = created["greeting"]["content"].as_str().expect("a greeting");
    assert!(!greeting.trim().is_empty());
    assert_eq!(created["greeting"]["kind"], "greeting");
    let loaded = get(
        worker,
        &site.secret_key,
        &format!("/conversations/{conversation}/history"),
    );
    assert_eq!(loaded["messages"], json!([]), "{loaded}");
    assert_eq!(loaded["greeting"]["content"], greeting);

    // A refused first question leaves it empty.
    upstream.push(Reply::text("NO"));
    let (_, events) = send(worker, &site.secret_key, &conversation, "Giá vàng hôm nay?");
    assert_eq!(terminal(&events).1["kind"], "refusal");
    assert!(history(worker, &site.secret_key, &conversation).is_empty());

    // One question and its answer: two messages.
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text("Nên chải răng hai lần mỗi ngày."));
    upstream.push(Reply::text("Tóm tắt"));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Chải răng thế nào cho đúng?",
    );
    assert_eq!(terminal(&events).0, "completed");
    let stored = history(worker, &site.secret_key, &conversation);
    let roles: Vec<&str> = stored
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{stored:?}");
    assert!(stored.iter().all(|m| m["kind"] != "greeting"));

    // Other templates still store theirs.
    let shop = worker.create_site(json!({"name": "Greeting shop"}));
    let (_, first) = create_conversation(worker, &shop, json!({}));
    assert_eq!(first["kind"], "greeting", "{first}");
}

#[test]
fn conversations_opened_by_the_openai_endpoint_or_json_rpc_hold_only_questions_and_answers() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let key = &site.secret_key;
    let completion = |question: &str, chat_id: Option<&str>| {
        let mut body = json!({"model": "dental-duckduckgo",
            "messages": [{"role": "user", "content": question}]});
        if let Some(id) = chat_id {
            body["chat_id"] = json!(id);
        }
        let (status, text) = into_parts(
            agent()
                .post(&worker.url("/v1/chat/completions"))
                .set("authorization", &format!("Bearer {key}"))
                .send_json(body),
        );
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<Value>(&text).expect("JSON")
    };
    let all_messages = |chat_id: &str| {
        let all = rpc(
            worker,
            key,
            "memory-server/memory/get_all_messages",
            json!({"conversation_id": chat_id}),
        );
        all["result"]["messages"]
            .as_array()
            .cloned()
            .expect("messages")
    };

    // A rejected first question: the new conversation is empty.
    upstream.push(Reply::text("NO"));
    let refused = completion("Thời tiết Hà Nội hôm nay?", None);
    let chat_id = refused["chat_id"].as_str().expect("chat_id").to_string();
    assert_eq!(all_messages(&chat_id), Vec::<Value>::new());

    // One question and answer in a new one: exactly two.
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text("Niềng răng thường mất 18 đến 24 tháng."));
    upstream.push(Reply::text("Tóm tắt"));
    let answered = completion("Niềng răng mất bao lâu?", None);
    let chat_id = answered["chat_id"].as_str().expect("chat_id").to_string();
    let all = all_messages(&chat_id);
    let roles: Vec<&str> = all
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{all:?}");
    assert_eq!(all[0]["content"], "Niềng răng mất bao lâu?");

    // Opened by JSON-RPC: nothing until messages are added.
    let created = rpc(
        worker,
        key,
        "memory-server/memory/get_or_create",
        json!({"conversation_id": "client-chosen"}),
    );
    let id = created["result"]["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(all_messages(&id), Vec::<Value>::new());
}
