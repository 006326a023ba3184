//! Issue 10, turns: concurrent turns on one conversation, background (`Prefer:
//! respond-async`) turns on a durable queue, and retries that never store the visitor's
//! question twice — each observed as a client does: the SSE events (exactly one terminal
//! event, ids announced in `started`) and the stored rows through the history API.

use std::thread;
use std::time::Duration;

use concierge_e2e::api::{
    create_conversation, eventually, history, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, read_events};
use serde_json::{Value, json};

const FIRST_ANSWER: &str = "Dạ, với 20 triệu em đề xuất cấu hình Core i5 13400F, RTX 4060, RAM 16GB, SSD 1TB và nguồn 650W ạ. Quý khách cần em báo giá chi tiết từng linh kiện không ạ?";
const SECOND_ANSWER: &str = "Dạ, card RTX 4060 hiện có giá 8.490.000 VND, bảo hành 36 tháng chính hãng ạ. Quý khách muốn đặt hàng luôn không ạ?";
/// Two questions the shop template answers with the model (not a fixed sentence).
const FIRST_QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 20 triệu";
const SECOND_QUESTION: &str = "Card RTX 4060 giá bao nhiêu vậy shop?";

/// `text` streamed slowly: a word piece every 80 ms after 150 ms (about 2.5 s in all).
fn slow(text: &str) -> Reply {
    Reply::Tokens {
        tokens: split_tokens(text),
        first_token_after: Duration::from_millis(150),
        between: Duration::from_millis(80),
    }
}

/// What one `POST /conversations/{id}/messages` answered.
#[derive(Debug)]
struct Posted {
    status: u16,
    /// The SSE events (streamed turns).
    events: Vec<ReceivedEvent>,
    /// The JSON body (202 and errors).
    body: Value,
}

/// Post the visitor's `content` with extra `headers`, reading the SSE stream to its end.
fn post(
    worker: &Worker,
    key: &str,
    conversation: &str,
    content: &str,
    headers: &[(&str, &str)],
) -> Posted {
    let mut request = agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", key);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    let response = match request.send_json(json!({"content": content})) {
        Ok(response) | Err(ureq::Error::Status(_, response)) => response,
        Err(err) => panic!("post: {err}"),
    };
    let status = response.status();
    if response.content_type().starts_with("text/event-stream") {
        let events = read_events(response.into_reader());
        return Posted {
            status,
            events,
            body: Value::Null,
        };
    }
    let text = response.into_string().unwrap_or_default();
    Posted {
        status,
        events: Vec::new(),
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}

/// The data of the `started` event, which must come first.
fn started(events: &[ReceivedEvent]) -> Value {
    let first = events.first().expect("events");
    assert_eq!(first.event, "started", "{events:?}");
    serde_json::from_str(&first.data).expect("started JSON")
}

/// A streamed turn that completed: checks exactly one terminal event, `completed`, naming
/// the id announced in `started`; returns that id and the streamed text.
fn completed_turn(posted: &Posted) -> (String, String) {
    assert_eq!(posted.status, 200, "{posted:?}");
    let announced = started(&posted.events)["message_id"]
        .as_str()
        .expect("started.message_id")
        .to_string();
    let (name, data) = terminal(&posted.events);
    assert_eq!(name, "completed", "{:?}", posted.events);
    assert_eq!(
        data["message_id"],
        announced.as_str(),
        "completed names the announced id"
    );
    (announced, streamed_text(&posted.events))
}

fn message<'a>(stored: &'a [Value], id: &str) -> Option<&'a Value> {
    stored.iter().find(|m| m["id"] == id)
}

fn user_messages(stored: &[Value]) -> Vec<&Value> {
    stored.iter().filter(|m| m["role"] == "user").collect()
}

fn site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> TestSite {
    site_with_upstream(worker, name, &upstream.base_url, false)
}

/// Defect 4: two turns streaming at once on one conversation both store their answers,
/// each under the id its `started` event announced, with the complete streamed text.
#[test]
fn two_concurrent_streamed_turns_on_one_conversation_both_store_their_answers() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(FIRST_ANSWER)).push(slow(SECOND_ANSWER));
    let site = site(worker, &upstream, "Concurrent shop");
    let (conversation, greeting) = create_conversation(worker, &site, json!({}));

    let turns: Vec<_> = [FIRST_QUESTION, SECOND_QUESTION]
        .into_iter()
        .map(|question| {
            let key = site.secret_key.clone();
            let conversation = conversation.clone();
            // The second visitor message is stored while the first answer still streams.
            thread::sleep(Duration::from_millis(600));
            thread::spawn(move || post(Worker::shared(), &key, &conversation, question, &[]))
        })
        .collect();
    let posted: Vec<Posted> = turns
        .into_iter()
        .map(|t| t.join().expect("turn thread"))
        .collect();

    let stored = history(worker, &site.secret_key, &conversation);
    let mut texts = Vec::new();
    for turn in &posted {
        let (id, text) = completed_turn(turn);
        let answer = message(&stored, &id)
            .unwrap_or_else(|| panic!("the answer {id} is stored: {stored:?}"));
        assert_eq!(answer["content"], text.as_str(), "stored as streamed");
        assert_eq!(answer["kind"], "answer");
        assert_eq!(answer["metadata"].get("incomplete"), None);
        texts.push(text);
    }
    texts.sort();
    let mut expected = vec![FIRST_ANSWER.to_string(), SECOND_ANSWER.to_string()];
    expected.sort();
    assert_eq!(texts, expected, "both answers streamed in full");
    assert_eq!(
        stored.len(),
        5,
        "greeting, two questions, two answers: {stored:?}"
    );
    assert_eq!(stored[0]["id"], greeting["id"], "the greeting is kept");
    let questions: Vec<&Value> = user_messages(&stored)
        .into_iter()
        .map(|m| &m["content"])
        .collect();
    assert_eq!(questions, [FIRST_QUESTION, SECOND_QUESTION]);
}

/// Post with `Prefer: respond-async` (and `headers`); returns the 202 body.
fn post_async(
    worker: &Worker,
    site: &TestSite,
    conversation: &str,
    content: &str,
    headers: &[(&str, &str)],
) -> Value {
    let mut all = vec![("prefer", "respond-async")];
    all.extend_from_slice(headers);
    let posted = post(worker, &site.secret_key, conversation, content, &all);
    assert_eq!(posted.status, 202, "{posted:?}");
    for field in ["conversation_id", "user_message_id", "message_id"] {
        assert!(posted.body[field].is_string(), "{field} in {}", posted.body);
    }
    posted.body
}

/// The stored message `id`, once it is there.
fn wait_for_message(worker: &Worker, site: &TestSite, conversation: &str, id: &str) -> Value {
    eventually(Duration::from_secs(30), &format!("message {id}"), || {
        message(&history(worker, &site.secret_key, conversation), id).cloned()
    })
}

/// Defect 4, background: two `Prefer: respond-async` posts back to back both get their
/// answers, stored under the ids their 202 responses announced.
#[test]
fn two_back_to_back_respond_async_posts_both_get_their_answers() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow(SECOND_ANSWER));
    upstream.push(slow(FIRST_ANSWER));
    let site = site(worker, &upstream, "Async twice shop");
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    let first = post_async(worker, &site, &conversation, FIRST_QUESTION, &[]);
    let second = post_async(worker, &site, &conversation, SECOND_QUESTION, &[]);
    let mut texts = Vec::new();
    for accepted in [&first, &second] {
        let id = accepted["message_id"].as_str().expect("message_id");
        let answer = wait_for_message(worker, &site, &conversation, id);
        assert_eq!(answer["role"], "assistant");
        assert_eq!(answer["kind"], "answer");
        assert_eq!(answer["metadata"].get("incomplete"), None);
        texts.push(answer["content"].as_str().unwrap_or_default().to_string());
    }
    texts.sort();
    let mut expected = vec![FIRST_ANSWER.to_string(), SECOND_ANSWER.to_string()];
    expected.sort();
    assert_eq!(texts, expected);
    let stored = history(worker, &site.secret_key, &conversation);
    let users = user_messages(&stored);
    assert_eq!(users.len(), 2, "{stored:?}");
    assert_eq!(users[0]["id"], first["user_message_id"]);
    assert_eq!(users[1]["id"], second["user_message_id"]);
}

/// Defect 5: a background turn whose upstream fails at first is retried (on the queue,
/// with backoff) until it is answered, under the id the 202 announced.
#[test]
fn a_background_turn_is_retried_until_its_answer_is_stored() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // The first attempt fails (the Worker's own retry before the first token too).
    upstream
        .push(Reply::Status(503))
        .push(Reply::Status(503))
        .push(Reply::text(SECOND_ANSWER));
    let site = site(worker, &upstream, "Async retry shop");
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let accepted = post_async(worker, &site, &conversation, SECOND_QUESTION, &[]);
    let id = accepted["message_id"].as_str().expect("message_id");

    let answer = wait_for_message(worker, &site, &conversation, id);
    assert_eq!(answer["content"], SECOND_ANSWER);
    assert_eq!(answer["kind"], "answer");
    assert_eq!(
        upstream.chat_requests().len(),
        3,
        "one failed attempt, then the answer"
    );
    let stored = history(worker, &site.secret_key, &conversation);
    let users = user_messages(&stored);
    assert_eq!(users.len(), 1, "{stored:?}");
    assert_eq!(users[0]["id"], accepted["user_message_id"]);
    assert_eq!(
        users[0]["metadata"].get("answer_failed"),
        None,
        "{stored:?}"
    );
    assert_eq!(stored.len(), 3, "{stored:?}");
}

/// Defect 5: a background turn that keeps failing is marked on the visitor's message
/// (`metadata.answer_failed`), so history shows it; nothing else is stored.
#[test]
fn a_background_turn_that_keeps_failing_is_marked_failed_in_history() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Status(500));
    let site = site(worker, &upstream, "Async failing shop");
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let accepted = post_async(worker, &site, &conversation, FIRST_QUESTION, &[]);
    let user_id = accepted["user_message_id"].as_str().expect("user id");

    let marked = eventually(Duration::from_secs(30), "the failure marker", || {
        message(&history(worker, &site.secret_key, &conversation), user_id)
            .filter(|m| m["metadata"]["answer_failed"].is_string())
            .cloned()
    });
    assert_eq!(marked["metadata"]["answer_failed"], "model_failed");
    assert_eq!(
        marked["content"], FIRST_QUESTION,
        "the visitor's message stays stored"
    );
    assert!(
        upstream.chat_requests().len() >= 4,
        "retried before giving up: {} model calls",
        upstream.chat_requests().len()
    );
    // No answer under the announced id; greeting and question only.
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(stored.len(), 2, "{stored:?}");
    let id = accepted["message_id"].as_str().expect("message_id");
    assert!(message(&stored, id).is_none());
}

/// Defect 10, at the API level (what the widget sends): a retry after `failed` with the
/// same `Idempotency-Key` reuses the stored question and answers it; a repeat after the
/// answer replays it without calling the model; the key with another text is refused.
#[test]
fn a_retry_with_the_same_idempotency_key_stores_the_question_once() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream
        .push(Reply::Status(500))
        .push(Reply::Status(500))
        .push(Reply::text(SECOND_ANSWER));
    let site = site(worker, &upstream, "Retry shop");
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let key = [("idempotency-key", "widget-7f3a9c2e-0001")];

    let failed = post(
        worker,
        &site.secret_key,
        &conversation,
        SECOND_QUESTION,
        &key,
    );
    assert_eq!(failed.status, 200);
    started(&failed.events);
    assert_eq!(terminal(&failed.events).0, "failed");
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(user_messages(&stored).len(), 1);
    assert_eq!(
        user_messages(&stored)[0]["metadata"]["answer_failed"],
        "model_failed",
        "a failed streamed turn is marked too: {stored:?}"
    );

    let retried = post(
        worker,
        &site.secret_key,
        &conversation,
        SECOND_QUESTION,
        &key,
    );
    let (answer_id, text) = completed_turn(&retried);
    assert_eq!(text, SECOND_ANSWER);
    let stored = history(worker, &site.secret_key, &conversation);
    let users = user_messages(&stored);
    assert_eq!(users.len(), 1, "the question is stored once: {stored:?}");
    assert_eq!(users[0]["content"], SECOND_QUESTION);
    assert_eq!(
        users[0]["metadata"].get("answer_failed"),
        None,
        "{stored:?}"
    );
    assert_eq!(
        message(&stored, &answer_id).map(|m| &m["content"]),
        Some(&Value::from(SECOND_ANSWER))
    );
    assert_eq!(stored.len(), 3, "greeting, question, answer: {stored:?}");
    let calls = upstream.chat_requests().len();

    // The same key again (e.g. the response was lost): the stored answer, replayed.
    let repeated = post(
        worker,
        &site.secret_key,
        &conversation,
        SECOND_QUESTION,
        &key,
    );
    let (replayed_id, replayed_text) = completed_turn(&repeated);
    assert_eq!(
        (replayed_id.as_str(), replayed_text.as_str()),
        (answer_id.as_str(), SECOND_ANSWER)
    );
    assert_eq!(
        upstream.chat_requests().len(),
        calls,
        "no model call for a replay"
    );
    assert_eq!(history(worker, &site.secret_key, &conversation), stored);

    // The same key with another text: refused, nothing stored.
    let reused = post(
        worker,
        &site.secret_key,
        &conversation,
        FIRST_QUESTION,
        &key,
    );
    assert_eq!(reused.status, 422, "{reused:?}");
    assert_eq!(reused.body["error"]["code"], "idempotency_key_reused");
    assert_eq!(history(worker, &site.secret_key, &conversation), stored);

    // A malformed key is refused.
    let bad = post(
        worker,
        &site.secret_key,
        &conversation,
        FIRST_QUESTION,
        &[("idempotency-key", "")],
    );
    assert_eq!(bad.status, 400, "{bad:?}");
    assert_eq!(history(worker, &site.secret_key, &conversation), stored);
}

/// Defect 10, background: repeating a `Prefer: respond-async` post with its key answers
/// with the same ids and stores nothing new.
#[test]
fn a_repeated_respond_async_post_with_its_key_is_stored_once() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(FIRST_ANSWER));
    let site = site(worker, &upstream, "Async repeat shop");
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let key = [("idempotency-key", "client-retry-42")];
    let accepted = post_async(worker, &site, &conversation, FIRST_QUESTION, &key);
    let id = accepted["message_id"].as_str().expect("message_id");
    wait_for_message(worker, &site, &conversation, id);
    let stored = history(worker, &site.secret_key, &conversation);

    let repeated = post_async(worker, &site, &conversation, FIRST_QUESTION, &key);
    assert_eq!(repeated, accepted, "the same ids");
    thread::sleep(Duration::from_millis(1500));
    assert_eq!(history(worker, &site.secret_key, &conversation), stored);
    assert_eq!(upstream.chat_requests().len(), 1);

    // An unknown conversation: the same 404 as a streamed post, nothing queued.
    let unknown = post(
        worker,
        &site.secret_key,
        "no-such-conversation",
        FIRST_QUESTION,
        &[("prefer", "respond-async")],
    );
    assert_eq!(unknown.status, 404, "{unknown:?}");
    assert_eq!(unknown.body["error"]["code"], "not_found");
}

/// Upstream failure mid-stream with a key: exactly one terminal event, the question stays
/// stored once, and the retry's answer is stored under its announced id.
#[test]
fn a_retry_after_a_cut_stream_keeps_one_question_and_stores_the_answer() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream
        .push(Reply::CutAfter(vec!["Dạ, ".into(), "cấu hình ".into()]))
        .push(Reply::text(FIRST_ANSWER));
    let site = site(worker, &upstream, "Cut retry shop");
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let key = [("idempotency-key", "cut-1")];

    let cut = post(
        worker,
        &site.secret_key,
        &conversation,
        FIRST_QUESTION,
        &key,
    );
    let cut_id = started(&cut.events)["message_id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(terminal(&cut.events).0, "failed");
    assert_eq!(streamed_text(&cut.events), "Dạ, cấu hình ");

    let retried = post(
        worker,
        &site.secret_key,
        &conversation,
        FIRST_QUESTION,
        &key,
    );
    let (answer_id, text) = completed_turn(&retried);
    assert_ne!(answer_id, cut_id);
    assert_eq!(text, FIRST_ANSWER);
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(user_messages(&stored).len(), 1, "{stored:?}");
    // What the visitor saw of the cut answer stays stored, marked incomplete.
    let partial = message(&stored, &cut_id).expect("the partial answer");
    assert_eq!(partial["metadata"]["incomplete"], true);
    assert_eq!(
        message(&stored, &answer_id).map(|m| &m["content"]),
        Some(&Value::from(FIRST_ANSWER))
    );
}

/// Defect 10 in real Chromium: the widget's retry after `failed` stores the question once
/// (the conversation restored after a reload shows one question and one answer).
#[test]
fn the_widget_retry_after_failed_stores_the_question_once() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(crate::browser::slow_answer());
    let (_site, page) = crate::browser::demo_site(worker, &upstream);
    upstream.push(Reply::Status(500)).push(Reply::Status(500));
    crate::browser::run("retry-stores-once", &page.url, &[]);
    assert_eq!(
        upstream.chat_requests().len(),
        3,
        "two failed attempts, then the retry"
    );
}
