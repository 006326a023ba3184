//! The clients of a durable conversation (issue 28) the e2e tests share: a poster, a
//! resumer, a watcher of `GET …/events`, and what they read (event ids, chunks, the
//! visitor's message), with a scripted upstream's slow answer.

use std::io::BufReader;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use concierge_e2e::upstream::{Reply, split_tokens};
use concierge_e2e::{ReceivedEvent, Worker, agent, read_events, read_events_until};
use serde_json::{Value, json};

/// A question the shop template answers with the model (its `assemble_pc` intent).
pub(crate) const QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 20 triệu";

/// The same question with another budget (another message).
pub(crate) fn question(budget: u32) -> String {
    format!("Tư vấn cấu hình PC chơi game tầm {budget} triệu")
}

pub(crate) const ANSWER: &str = "Dạ, với 20 triệu em đề xuất cấu hình i5 13400F, RTX 4060, RAM 16 GB, SSD 1 TB và nguồn 650 W ạ.";

/// `text` streamed word by word, `between` apart.
pub(crate) fn slow(text: &str, between: Duration) -> Reply {
    Reply::Tokens {
        tokens: split_tokens(text),
        first_token_after: Duration::from_millis(50),
        between,
    }
}

pub(crate) fn chunks(events: &[ReceivedEvent]) -> usize {
    events.iter().filter(|e| e.event.is_empty()).count()
}

pub(crate) fn id_of(event: &ReceivedEvent) -> u64 {
    event
        .id
        .as_deref()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("a numeric id on {event:?}"))
}

/// POST a message (native stream); the open response's body.
pub(crate) fn post(
    worker: &Worker,
    key: &str,
    conversation: &str,
    content: &str,
) -> ureq::Response {
    agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", key)
        .send_json(json!({"content": content}))
        .expect("the post is answered")
}

/// `GET /conversations/{id}/stream` with `Last-Event-ID: after`: status and events (read
/// on a thread, so a stream that never ends fails the test instead of hanging it).
pub(crate) fn resume(
    worker: &Worker,
    key: &str,
    conversation: &str,
    after: u64,
) -> (u16, Vec<ReceivedEvent>) {
    let url = worker.url(&format!("/conversations/{conversation}/stream"));
    let key = key.to_string();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let result = agent()
            .get(&url)
            .set("x-api-key", &key)
            .set("last-event-id", &after.to_string())
            .call();
        let out = match result {
            Ok(response) => {
                let status = response.status();
                (status, read_events(response.into_reader()))
            }
            Err(ureq::Error::Status(status, _)) => (status, Vec::new()),
            Err(err) => panic!("resume: {err}"),
        };
        let _ = tx.send(out);
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the resumed stream ends (no hang)")
}

/// Attaches to `GET /conversations/{id}/events`; its events arrive on the channel.
pub(crate) fn watch(
    worker: &Worker,
    key: &str,
    conversation: &str,
) -> mpsc::Receiver<ReceivedEvent> {
    watch_after(worker, key, conversation, None)
}

/// Attaches to `GET /conversations/{id}/events` (after `after` when given, as
/// `Last-Event-ID`); every event arrives on the channel as it comes.
pub(crate) fn watch_after(
    worker: &Worker,
    key: &str,
    conversation: &str,
    after: Option<u64>,
) -> mpsc::Receiver<ReceivedEvent> {
    let url = worker.url(&format!("/conversations/{conversation}/events"));
    let key = key.to_string();
    let (tx, rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::channel();
    thread::spawn(move || {
        let mut request = agent().get(&url).set("x-api-key", &key);
        if let Some(after) = after {
            request = request.set("last-event-id", &after.to_string());
        }
        let response = request.call().expect("attached");
        assert!(response.content_type().starts_with("text/event-stream"));
        let _ = ready_tx.send(());
        let mut reader = BufReader::new(response.into_reader());
        read_events_until(&mut reader, |events| {
            tx.send(events.last().expect("event").clone()).is_err()
        });
    });
    ready_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the live stream opens");
    rx
}

/// `seen` (a watcher's events) holds the visitor's message `question` (`message`, role
/// `user`).
pub(crate) fn assert_visitor_message(seen: &[ReceivedEvent], question: &str) {
    let message = seen
        .iter()
        .find(|e| e.event == "message")
        .unwrap_or_else(|| panic!("the visitor's message, live: {seen:?}"));
    let message: Value = serde_json::from_str(&message.data).expect("message JSON");
    assert_eq!(
        (&message["role"], &message["content"]),
        (&json!("user"), &json!(question)),
        "{seen:?}"
    );
}

/// Events from `rx` until a terminal one (or `timeout`).
pub(crate) fn until_terminal(
    rx: &mpsc::Receiver<ReceivedEvent>,
    timeout: Duration,
) -> Vec<ReceivedEvent> {
    let deadline = Instant::now() + timeout;
    let mut events = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(event) => {
                let end = event.event == "completed" || event.event == "failed";
                events.push(event);
                if end {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    events
}
