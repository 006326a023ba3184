//! Durable conversations (issue 28) on the other surfaces of a stored conversation: a
//! `POST /v1/chat/completions` continuing it (`chat_id`), MCP's `send_message` tool on it,
//! and a background turn (`Prefer: respond-async`) all go through the conversation's
//! object like the native post does: they wait for the turn in progress (never answered
//! beside it), and the clients attached to `GET …/events` see them live, text chunks
//! first, then their terminal event. Each surface keeps its own answer's format.

use std::io::{BufReader, Read};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use concierge_e2e::api::{
    create_conversation, eventually, history, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, read_events, read_events_until};
use serde_json::{Value, json};

use super::durable_clients::{
    ANSWER, QUESTION, assert_visitor_message, chunks, id_of, post, question, resume, slow,
    until_terminal, watch,
};

/// What the second surface's turn answers.
const SECOND: &str = "Dạ, cấu hình thứ hai gồm Ryzen 5 7600, RX 7600 và RAM 32 GB ạ.";

/// A native turn in progress on a new conversation, and a watcher of its `…/events`
/// attached before it started.
struct Running {
    upstream: ScriptedUpstream,
    site: TestSite,
    conversation: String,
    watcher: mpsc::Receiver<ReceivedEvent>,
    poster: BufReader<Box<dyn Read + Send + Sync>>,
    seen: Vec<ReceivedEvent>,
}

/// Starts the native turn (a slow answer, [`ANSWER`]) and reads its first two chunks; the
/// next chat request the upstream gets is answered with [`SECOND`], word by word.
fn running(name: &str) -> Running {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(ANSWER, Duration::from_millis(120)));
    upstream.push(slow(SECOND, Duration::from_millis(60)));
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let watcher = watch(worker, &site.secret_key, &conversation);
    let response = post(worker, &site.secret_key, &conversation, QUESTION);
    let mut poster = BufReader::new(response.into_reader());
    let seen = read_events_until(&mut poster, |events| chunks(events) >= 2);
    Running {
        upstream,
        site,
        conversation,
        watcher,
        poster,
        seen,
    }
}

impl Running {
    /// The native turn read to its end: it completed with the whole first answer.
    fn finish_native(&mut self) {
        let mut rest = Vec::new();
        self.poster
            .read_to_end(&mut rest)
            .expect("the poster's stream");
        self.seen.extend(read_events(rest.as_slice()));
        let (name, _) = terminal(&self.seen);
        assert_eq!(name, "completed", "{:?}", self.seen);
        assert_eq!(streamed_text(&self.seen), ANSWER);
    }

    /// What every surface must show: the second turn waited for the first (its prompt
    /// holds the first's whole stored answer), both answers are stored in order, and the
    /// watcher saw the first turn, then the second one live: the visitor's message, at
    /// least two text chunks, then `completed` naming the stored reply.
    fn assert_in_line_and_live(&self, second_question: &str) {
        let worker = Worker::shared();
        let requests = self.upstream.chat_requests();
        assert_eq!(requests.len(), 2, "{requests:?}");
        assert!(
            requests[1].body.to_string().contains(ANSWER),
            "the second turn asks the model only once the first is stored: {:?}",
            requests[1].body
        );
        let stored: Vec<(String, String)> =
            history(worker, &self.site.secret_key, &self.conversation)
                .iter()
                .filter(|m| m["kind"] != "greeting")
                .map(|m| {
                    let field = |f: &str| m[f].as_str().unwrap_or_default().to_string();
                    (field("role"), field("content"))
                })
                .collect();
        let expected: Vec<(String, String)> = [
            ("user", QUESTION),
            ("assistant", ANSWER),
            ("user", second_question),
            ("assistant", SECOND),
        ]
        .iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect();
        assert_eq!(stored, expected, "both answers stored, in order");
        let reply_id = history(worker, &self.site.secret_key, &self.conversation)
            .last()
            .map(|m| m["id"].clone())
            .expect("the second reply");

        let first = until_terminal(&self.watcher, Duration::from_secs(20));
        assert_eq!(
            first.last().map(|e| e.event.as_str()),
            Some("completed"),
            "{first:?}"
        );
        let second = until_terminal(&self.watcher, Duration::from_secs(20));
        assert_live_turn(&second, second_question, SECOND, &reply_id);
    }
}

/// `seen` (a watcher's events) is a turn seen live: the visitor's `question`, at least
/// two text chunks making `answer`, then `completed` naming `reply_id`.
fn assert_live_turn(seen: &[ReceivedEvent], question: &str, answer: &str, reply_id: &Value) {
    assert_visitor_message(seen, question);
    let turn: Vec<ReceivedEvent> = seen
        .iter()
        .filter(|e| e.event != "message")
        .cloned()
        .collect();
    assert!(
        chunks(&turn) >= 2,
        "the text chunks as they come, before the end: {seen:?}"
    );
    let (name, done) = terminal(&turn);
    assert_eq!(name, "completed", "{seen:?}");
    assert_eq!(streamed_text(&turn), answer, "{seen:?}");
    assert_eq!(&done["message_id"], reply_id, "{seen:?}");
}

/// `POST /v1/chat/completions` continuing `running`'s conversation with `question`, sent
/// while the native turn runs; the native turn is read to its end, then the completion's
/// response is returned.
fn complete(running: &mut Running, question: &str, stream: bool) -> ureq::Response {
    let url = Worker::shared().url("/v1/chat/completions");
    let key = running.site.secret_key.clone();
    let body = json!({
        "model": format!("concierge-{}", running.site.id), "stream": stream,
        "chat_id": running.conversation,
        "messages": [{"role": "user", "content": question}],
    });
    let completion = thread::spawn(move || {
        agent()
            .post(&url)
            .set("authorization", &format!("Bearer {key}"))
            .send_json(body)
            .expect("200")
    });
    running.finish_native();
    completion.join().expect("the completion")
}

#[test]
fn a_v1_completion_on_a_stored_conversation_waits_its_turn_and_is_seen_live() {
    let mut running = running("Durable v1 shop");
    let second_question = question(30);
    let response = complete(&mut running, &second_question, true);
    let chat_id = response.header("x-concierge-chat-id").map(str::to_string);
    let content_type = response.content_type().to_string();
    let mut body = String::new();
    response
        .into_reader()
        .read_to_string(&mut body)
        .expect("body");

    // OpenAI's stream, as before: data lines of `chat.completion.chunk`s, one finish,
    // `[DONE]`; the conversation named.
    assert_eq!(chat_id.as_deref(), Some(running.conversation.as_str()));
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let lines: Vec<&str> = body.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines.iter().all(|l| l.starts_with("data: ")), "{body}");
    assert_eq!(lines.last(), Some(&"data: [DONE]"), "{body}");
    let chunks: Vec<Value> = lines[..lines.len() - 1]
        .iter()
        .map(|l| serde_json::from_str(&l["data: ".len()..]).expect("chunk JSON"))
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk" && c["chat_id"] == running.conversation),
        "{body}"
    );
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, SECOND);
    running.assert_in_line_and_live(&second_question);
}

#[test]
fn a_non_streamed_v1_completion_waits_its_turn_and_answers_one_completion() {
    let mut running = running("Durable v1 JSON shop");
    let second_question = question(31);
    let response = complete(&mut running, &second_question, false);
    let answer: Value = response.into_json().expect("JSON");
    assert_eq!(answer["object"], "chat.completion", "{answer}");
    assert_eq!(answer["chat_id"], running.conversation.as_str(), "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"], SECOND,
        "{answer}"
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "stop", "{answer}");
    running.assert_in_line_and_live(&second_question);
}

/// One JSON-RPC call to `/mcp` in session `session` (`None`: `initialize`): the body.
fn mcp(worker: &Worker, key: &str, session: Option<&str>, body: Value) -> (Option<String>, Value) {
    let mut request = agent()
        .post(&worker.url("/mcp"))
        .set("authorization", &format!("Bearer {key}"))
        .set("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.set("mcp-session-id", session);
    }
    let response = request.send_json(body).expect("200");
    let session = response.header("mcp-session-id").map(str::to_string);
    (session, response.into_json().expect("JSON-RPC"))
}

#[test]
fn mcp_send_message_on_a_stored_conversation_waits_its_turn_and_is_seen_live() {
    let worker = Worker::shared();
    let mut running = running("Durable MCP shop");
    let key = running.site.secret_key.clone();
    let (session, _) = mcp(
        worker,
        &key,
        None,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "durable-e2e", "version": "1"}}}),
    );
    let session = session.expect("a session");
    let second_question = question(32);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "send_message",
        "arguments": {"message": second_question, "conversation_id": running.conversation},
    }});
    let sent = thread::spawn(move || mcp(Worker::shared(), &key, Some(&session), call).1);
    running.finish_native();
    let answer = sent.join().expect("the tool call");

    // The tool's result, as before.
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["answer"], SECOND, "{answer}");
    assert_eq!(structured["stored"], true, "{answer}");
    assert_eq!(structured["conversation_id"], running.conversation.as_str());
    let reply_id = history(worker, &running.site.secret_key, &running.conversation)
        .last()
        .map(|m| m["id"].clone())
        .expect("the reply");
    assert_eq!(structured["message_id"], reply_id, "{answer}");
    running.assert_in_line_and_live(&second_question);
}

#[test]
fn a_background_turn_streams_live_to_watchers_and_can_be_resumed() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(ANSWER, Duration::from_millis(80)));
    let site = site_with_upstream(worker, "Durable async shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let watcher = watch(worker, &site.secret_key, &conversation);

    let response = agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", &site.secret_key)
        .set("prefer", "respond-async")
        .send_json(json!({"content": QUESTION}))
        .expect("accepted");
    assert_eq!(response.status(), 202);
    let accepted: Value = response.into_json().expect("JSON");
    let reply_id = accepted["message_id"].clone();

    // The watcher sees the answer's first chunks while it is produced; a client that lost
    // its stream there resumes the running background turn with exactly the rest.
    let mut seen = Vec::new();
    while chunks(&seen) < 2 {
        let event = watcher.recv_timeout(Duration::from_secs(20));
        seen.push(event.unwrap_or_else(|_| panic!("text chunks live: {seen:?}")));
    }
    let last = id_of(seen.last().expect("a chunk"));
    let (status, rest) = resume(worker, &site.secret_key, &conversation, last);
    assert_eq!(status, 200, "{rest:?}");
    assert_eq!(terminal(&rest).0, "completed", "{rest:?}");
    assert_eq!(id_of(&rest[0]), last + 1, "{rest:?}");
    let before: Vec<ReceivedEvent> = seen
        .iter()
        .filter(|e| e.event != "message")
        .cloned()
        .collect();
    assert_eq!(
        format!("{}{}", streamed_text(&before), streamed_text(&rest)),
        ANSWER
    );
    seen.extend(until_terminal(&watcher, Duration::from_secs(30)));
    let stored = eventually(Duration::from_secs(10), "the stored reply", || {
        history(worker, &site.secret_key, &conversation)
            .into_iter()
            .find(|m| m["id"] == reply_id)
    });
    assert_eq!(stored["content"], ANSWER);
    assert_live_turn(&seen, QUESTION, ANSWER, &reply_id);
    // The text came as it was produced, before the end.
    let end = seen.last().expect("terminal").arrived;
    let first_chunk = seen
        .iter()
        .find(|e| e.event.is_empty())
        .expect("a chunk")
        .arrived;
    assert!(
        end.duration_since(first_chunk) >= Duration::from_millis(500),
        "the chunks arrived live, not all at the end: {seen:?}"
    );
}
