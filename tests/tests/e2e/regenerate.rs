//! Regenerating the last answer (issue 26, item 9) through the real Worker:
//! `POST /conversations/{id}/regenerate` on the same authentication as posting a message,
//! answered with the same SSE stream; the stored visitor's message is answered again and
//! the old answer (with its votes) leaves history; a regenerate of an answer that is no
//! longer the last, or while the last turn is still being answered, is 409; another site's,
//! another visitor's or an unknown conversation is 404.

use std::time::Duration;

use concierge_e2e::api::{create_conversation, error_code, history, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";
const QUESTION: &str = "Giá RTX 4060 bao nhiêu ạ?";

/// A call with the site's public key from its allowed origin.
fn public(request: ureq::Request, site: &TestSite) -> ureq::Request {
    request
        .set("x-api-key", &site.public_key)
        .set("origin", ORIGIN)
}

/// `POST …/regenerate` with the public key: the status and, for a stream, its events;
/// otherwise the JSON body.
fn regenerate(
    worker: &Worker,
    site: &TestSite,
    conversation: &str,
    body: Value,
) -> (u16, Vec<ReceivedEvent>, String) {
    let url = worker.url(&format!("/conversations/{conversation}/regenerate"));
    match public(agent().post(&url), site).send_json(body) {
        Ok(response) => {
            let status = response.status();
            assert!(
                response.content_type().starts_with("text/event-stream"),
                "SSE response"
            );
            (status, read_events(response.into_reader()), String::new())
        }
        Err(ureq::Error::Status(status, response)) => (
            status,
            Vec::new(),
            response.into_string().unwrap_or_default(),
        ),
        Err(err) => panic!("regenerate: {err}"),
    }
}

/// One turn with the public key: (visitor's message id, answer id).
fn ask(worker: &Worker, site: &TestSite, conversation: &str, text: &str) -> (String, String) {
    let url = worker.url(&format!("/conversations/{conversation}/messages"));
    let response = public(agent().post(&url), site)
        .send_json(json!({"content": text}))
        .expect("turn");
    let answer = answer_id(&read_events(response.into_reader()));
    (last_question(worker, site, conversation), answer)
}

/// The id of the conversation's last stored visitor's message.
fn last_question(worker: &Worker, site: &TestSite, conversation: &str) -> String {
    let messages = history(worker, &site.secret_key, conversation);
    let question = messages.iter().rev().find(|m| m["role"] == "user");
    question.expect("a question")["id"]
        .as_str()
        .expect("id")
        .into()
}

/// The `completed` event's answer id (the `started` event announced the same).
fn answer_id(events: &[ReceivedEvent]) -> String {
    let started = events
        .iter()
        .find(|e| e.event == "started")
        .expect("started");
    let started: Value = serde_json::from_str(&started.data).expect("started JSON");
    let last = events.last().expect("events");
    assert_eq!(last.event, "completed", "{events:?}");
    let completed: Value = serde_json::from_str(&last.data).expect("completed JSON");
    assert_eq!(started["message_id"], completed["message_id"], "{events:?}");
    completed["message_id"].as_str().expect("answer id").into()
}

fn text(events: &[ReceivedEvent]) -> String {
    concierge_e2e::api::streamed_text(events)
}

/// `GET /admin/feedback`'s body.
fn feedback(worker: &Worker, site: &TestSite) -> String {
    let (status, votes) = into_parts(
        agent()
            .get(&worker.url("/admin/feedback"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{votes}");
    votes
}

fn anonymous(worker: &Worker, site: &TestSite) -> String {
    let url = worker.url("/conversations");
    let (status, body) = into_parts(public(agent().post(&url), site).send_json(json!({})));
    assert_eq!(status, 201, "{body}");
    serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .into()
}

#[test]
fn regenerate_replaces_the_last_answer_and_keeps_one_question() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Regenerate", &upstream.base_url, false);
    let conversation = anonymous(worker, &site);
    upstream.set_default(Reply::text("Dạ, bản cũ: i5 và RTX 3060 ạ."));
    let (question, old) = ask(worker, &site, &conversation, QUESTION);
    // The visitor's vote on the old answer goes with it.
    let vote_url = worker.url(&format!(
        "/conversations/{conversation}/messages/{old}/feedback"
    ));
    let (status, body) =
        into_parts(public(agent().post(&vote_url), &site).send_json(json!({"rating": "down"})));
    assert_eq!(status, 200, "{body}");
    assert!(feedback(worker, &site).contains(&old), "the vote is stored");

    upstream.set_default(Reply::text("Dạ, bản mới: Ryzen 5 7600 và RTX 4060 ạ."));
    let (status, events, body) =
        regenerate(worker, &site, &conversation, json!({"message_id": old}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(text(&events), "Dạ, bản mới: Ryzen 5 7600 và RTX 4060 ạ.");
    let new = answer_id(&events);
    assert_eq!(
        last_question(worker, &site, &conversation),
        question,
        "the stored question is answered again"
    );
    assert_ne!(new, old);

    let messages = history(worker, &site.secret_key, &conversation);
    let contents: Vec<&str> = messages[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        contents,
        [QUESTION, "Dạ, bản mới: Ryzen 5 7600 và RTX 4060 ạ."]
    );
    assert_eq!(messages[2]["id"], new.as_str());
    // The prompt of the regenerate held the question once and not the old answer.
    let prompt = upstream
        .chat_requests()
        .last()
        .expect("request")
        .body
        .to_string();
    assert_eq!(prompt.matches(QUESTION).count(), 1, "{prompt}");
    assert!(!prompt.contains("bản cũ"), "{prompt}");
    // The old answer's vote is gone with it.
    let votes = feedback(worker, &site);
    assert!(!votes.contains(&old), "{votes}");
    let rows = worker.site_rows(
        &site,
        &format!(
            "SELECT id FROM messages WHERE conversation_id = '{conversation}' AND role = 'user'"
        ),
    );
    assert_eq!(rows.len(), 1, "one stored question: {rows:?}");

    // Again on the answer already replaced (a double click): 409, nothing changes.
    let before = upstream.chat_requests().len();
    let (status, _, body) = regenerate(worker, &site, &conversation, json!({"message_id": old}));
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_code(&body), "not_last_turn");
    assert_eq!(upstream.chat_requests().len(), before);
    assert_eq!(history(worker, &site.secret_key, &conversation), messages);
    // Without `message_id`: the last turn, whichever it is.
    upstream.set_default(Reply::text("Dạ, bản thứ ba ạ."));
    let (status, events, body) = regenerate(worker, &site, &conversation, json!({}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(text(&events), "Dạ, bản thứ ba ạ.");
    assert_ne!(answer_id(&events), new);
    assert_eq!(last_question(worker, &site, &conversation), question);
}

#[test]
fn a_regenerate_while_one_runs_is_409_and_nobody_else_reaches_the_conversation() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Regenerate races", &upstream.base_url, false);
    let other = site_with_upstream(worker, "Another site", &upstream.base_url, false);
    let conversation = anonymous(worker, &site);
    // Nothing to regenerate yet (only the greeting): 409.
    let (status, _, body) = regenerate(worker, &site, &conversation, json!({}));
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_code(&body), "not_last_turn");
    upstream.set_default(Reply::text("Dạ, bản cũ ạ."));
    let (_, old) = ask(worker, &site, &conversation, QUESTION);

    // A slow regenerate, and a second one while it runs.
    upstream.set_default(Reply::Tokens {
        tokens: split_tokens("Dạ, bản chậm ạ."),
        first_token_after: Duration::from_millis(2_500),
        between: Duration::from_millis(5),
    });
    let slow = {
        let (site, conversation) = (site.clone(), conversation.clone());
        std::thread::spawn(move || regenerate(Worker::shared(), &site, &conversation, json!({})))
    };
    std::thread::sleep(Duration::from_millis(800));
    let (status, _, body) = regenerate(worker, &site, &conversation, json!({}));
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_code(&body), "turn_in_progress");
    let (status, events, body) = slow.join().expect("slow regenerate");
    assert_eq!(status, 200, "{body}");
    assert_eq!(text(&events), "Dạ, bản chậm ạ.");
    let messages = history(worker, &site.secret_key, &conversation);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(!format!("{messages:?}").contains(&old));

    // Another site's key, an identified conversation reached anonymously, an unknown
    // conversation: 404, and nothing changes.
    let (status, _, body) = regenerate(worker, &other, &conversation, json!({}));
    assert_eq!(status, 404, "{body}");
    let (bound, _) = create_conversation(worker, &site, json!({"user_id": "khach-1"}));
    let (status, _, body) = regenerate(worker, &site, &bound, json!({}));
    assert_eq!(status, 404, "{body}");
    let (status, _, body) = regenerate(worker, &site, "no-such-conversation", json!({}));
    assert_eq!(status, 404, "{body}");
    assert_eq!(history(worker, &site.secret_key, &conversation), messages);
    // A body that is not the contract: 400.
    let (status, _, body) = regenerate(worker, &site, &conversation, json!({"content": "x"}));
    assert_eq!(status, 400, "{body}");
}
