//! Client helpers for the conversation API, shared by the end-to-end tests.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{ReceivedEvent, TestSite, Worker, agent, into_parts, read_events};

/// A fixed sentence from `prompts/<file>`, by key (`key: text` lines).
pub fn fixed_sentence(file: &str, key: &str) -> String {
    let text = std::fs::read_to_string(crate::repo_root().join("prompts").join(file))
        .expect("prompt file");
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("{key} in prompts/{file}"))
        .trim()
        .to_string()
}

/// A test site whose LLM is `upstream_base` (OpenAI-compatible unless `ollama`).
pub fn site_with_upstream(
    worker: &Worker,
    name: &str,
    upstream_base: &str,
    ollama: bool,
) -> TestSite {
    let (provider, base) = if ollama {
        ("ollama", upstream_base.to_string())
    } else {
        ("openai", format!("{upstream_base}/v1"))
    };
    worker.create_site(json!({
        "name": name,
        "allowed_origins": ["https://shop.example"],
        "llm": {"provider": provider, "base_url": base, "model": "scripted", "embed_model": "scripted-embed"}
    }))
}

/// `POST /conversations` with the secret key; returns the id and the greeting.
pub fn create_conversation(worker: &Worker, site: &TestSite, body: Value) -> (String, Value) {
    let (status, text) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    );
    assert_eq!(status, 201, "create conversation: {text}");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    (
        json["conversation_id"].as_str().expect("id").to_string(),
        json["messages"][0].clone(),
    )
}

/// One streamed turn: the HTTP status and the received SSE events.
pub fn send(
    worker: &Worker,
    key: &str,
    conversation: &str,
    content: &str,
) -> (u16, Vec<ReceivedEvent>) {
    let result = agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", key)
        .send_json(json!({"content": content}));
    match result {
        Ok(response) => {
            let status = response.status();
            assert!(
                response.content_type().starts_with("text/event-stream"),
                "SSE response"
            );
            (status, read_events(response.into_reader()))
        }
        Err(ureq::Error::Status(status, _)) => (status, Vec::new()),
        Err(err) => panic!("send: {err}"),
    }
}

/// Turns after a conversation's first until its first question is embedded: a message is
/// embedded one turn before it leaves the 12-message history window (memory retrieval only
/// returns what has left it), which the greeting and six turns reach.
pub const TURNS_UNTIL_EMBEDDED: usize = 5;

/// Sends `n` short turns to `conversation`, each completed (a conversation grown past its
/// history window, see [`TURNS_UNTIL_EMBEDDED`]).
pub fn more_turns(worker: &Worker, key: &str, conversation: &str, n: usize) {
    for i in 1..=n {
        let (status, events) = send(
            worker,
            key,
            conversation,
            &format!("Cho em hỏi thêm câu {i} ạ?"),
        );
        assert_eq!(status, 200, "turn {i}");
        assert_eq!(terminal(&events).0, "completed", "turn {i}");
    }
}

/// The text of a turn's `{"chunk"}` events, concatenated.
pub fn streamed_text(events: &[ReceivedEvent]) -> String {
    events
        .iter()
        .filter(|e| e.event.is_empty())
        .map(|e| {
            let data: Value = serde_json::from_str(&e.data).expect("chunk JSON");
            data["chunk"].as_str().expect("chunk text").to_string()
        })
        .collect()
}

/// The single terminal event (`completed` or `failed`) and its data; panics unless
/// there is exactly one and it is last.
pub fn terminal(events: &[ReceivedEvent]) -> (String, Value) {
    let terminals: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| e.event == "completed" || e.event == "failed")
        .collect();
    assert_eq!(
        terminals.len(),
        1,
        "exactly one terminal event in {events:?}"
    );
    let last = events.last().expect("events");
    assert!(
        last.event == "completed" || last.event == "failed",
        "terminal event is last: {events:?}"
    );
    (
        last.event.clone(),
        serde_json::from_str(&last.data).expect("terminal JSON"),
    )
}

/// `GET /conversations/{id}/history` messages.
pub fn history(worker: &Worker, key: &str, conversation: &str) -> Vec<Value> {
    let (status, text) = into_parts(
        agent()
            .get(&worker.url(&format!("/conversations/{conversation}/history")))
            .set("x-api-key", key)
            .call(),
    );
    assert_eq!(status, 200, "history: {text}");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    json["messages"].as_array().expect("messages").clone()
}

/// Poll `check` every 200 ms until it returns `Some`, or panic after `timeout`.
pub fn eventually<T>(timeout: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `POST /admin/search` results (id, source, title, text, score).
pub fn search_results(
    worker: &Worker,
    site: &TestSite,
    query: &str,
    conversation: Option<&str>,
) -> Vec<Value> {
    let mut body = json!({"query": query});
    if let Some(c) = conversation {
        body["conversation_id"] = c.into();
    }
    let (status, text) = into_parts(
        agent()
            .post(&worker.url("/admin/search"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    );
    assert_eq!(status, 200, "search: {text}");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    json["results"].as_array().cloned().unwrap_or_default()
}

/// `POST /admin/search` results' texts.
pub fn search(
    worker: &Worker,
    site: &TestSite,
    query: &str,
    conversation: Option<&str>,
) -> Vec<String> {
    search_results(worker, site, query, conversation)
        .iter()
        .map(|r| r["text"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `error.code` of a JSON error body; panics unless the body is the API's error shape
/// `{"error":{"code","message"}}` with a non-empty message.
pub fn error_code(body: &str) -> String {
    let value: Value =
        serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON error body: {body}"));
    let message = value["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "an error message: {body}");
    value["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("error.code in {body}"))
        .to_string()
}
