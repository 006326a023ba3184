//! The AI SDK UI message stream through the real Worker, read by the `ai` package's own
//! client code (`tests/clients/ai_sdk_client.mjs`): `DefaultChatTransport` — what
//! `useChat` sends and parses — against `POST /api/chat`, and the package's stream parser
//! against `POST /conversations/{id}/messages?format=ai-sdk`.

use std::io::Write;
use std::process::{Command, Stdio};

use concierge_e2e::api::{create_conversation, history, site_with_upstream};

use super::identity::tokens::{new_token_secret, token_for};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";
const QUESTION: &str = "tư vấn cấu hình pc chơi game";
const ANSWER: &str = "Dạ, với 20 triệu em đề xuất cấu hình i5 và RTX 4060 ạ.";

/// Run the client script with `input` (on its stdin); its JSON output.
fn client(input: Value) -> Value {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/clients/ai_sdk_client.mjs")
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run node");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(input.to_string().as_bytes())
        .expect("write the input");
    drop(stdin);
    let output = child.wait_with_output().expect("node's output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "ai_sdk_client.mjs failed:\n{stdout}\n{stderr}"
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("client output {e}: {stdout}{stderr}"))
}

/// `useChat`'s transport posting `messages` (`(role, text, id)`) as chat `chat_id` to
/// `/api/chat` with the site's public key from its allowed origin.
fn use_chat(worker: &Worker, key: &str, chat_id: Option<&str>, messages: &[(&str, &str)]) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(role, text)| json!({"role": role, "text": text}))
        .collect();
    use_chat_messages(worker, key, chat_id, &messages)
}

/// [`use_chat`] with the messages as the client script takes them (`{"role", "text",
/// "id"?}`).
fn use_chat_messages(
    worker: &Worker,
    key: &str,
    chat_id: Option<&str>,
    messages: &[Value],
) -> Value {
    use_chat_as(worker, key, None, chat_id, messages)
}

/// [`use_chat_messages`] with a signed user token (`X-User-Token`), if any.
fn use_chat_as(
    worker: &Worker,
    key: &str,
    user_token: Option<&str>,
    chat_id: Option<&str>,
    messages: &[Value],
) -> Value {
    let mut headers = json!({"x-api-key": key, "origin": ORIGIN});
    if let Some(token) = user_token {
        headers["x-user-token"] = json!(token);
    }
    client(json!({
        "mode": "transport",
        "url": worker.url("/api/chat"),
        "headers": headers,
        "chatId": chat_id,
        "messages": messages,
        "timeoutMs": 20_000,
    }))
}

/// `POST /conversations/{id}/messages?format=ai-sdk` read with the package's parser.
fn format_ai_sdk(worker: &Worker, key: &str, conversation: &str, content: &str) -> Value {
    client(json!({
        "mode": "format",
        "url": worker.url(&format!("/conversations/{conversation}/messages?format=ai-sdk")),
        "headers": {"x-api-key": key, "origin": ORIGIN},
        "content": content,
        "timeoutMs": 20_000,
    }))
}

fn count(out: &Value, kind: &str) -> usize {
    out["types"]
        .as_array()
        .map_or(0, |t| t.iter().filter(|t| *t == kind).count())
}

/// A completed stream, as `useChat` assembles it: the answer text, exactly one `finish`
/// (last), no error, the header, the reply's id as the message's.
fn assert_completed(out: &Value, text: &str) {
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(out["header"], "v1", "x-vercel-ai-ui-message-stream: {out}");
    assert_eq!(
        out["allowOrigin"], ORIGIN,
        "CORS for the allowed origin: {out}"
    );
    assert!(
        out["contentType"]
            .as_str()
            .is_some_and(|c| c.starts_with("text/event-stream")),
        "{out}"
    );
    assert_eq!(out["text"], text, "{out}");
    assert_eq!((count(out, "finish"), count(out, "error")), (1, 0), "{out}");
    assert_eq!(out["types"][0], "start", "{out}");
    assert_eq!(
        out["types"].as_array().and_then(|t| t.last()),
        Some(&json!("finish"))
    );
    assert_eq!(out["errors"], json!([]), "{out}");
    assert!(
        out["textStates"]
            .as_array()
            .is_some_and(|s| !s.is_empty() && s.iter().all(|s| s == "done")),
        "{out}"
    );
    assert_eq!(out["messageId"], out["metadata"]["message_id"], "{out}");
}

fn user_messages(worker: &Worker, site: &TestSite, conversation: &str) -> Vec<String> {
    history(worker, &site.secret_key, conversation)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn use_chat_continues_a_stored_conversation_by_its_id() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(Reply::text(ANSWER));
    let site = site_with_upstream(worker, "AI SDK shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    // useChat sends the whole history; the stored conversation is continued with the last
    // message only (the earlier one is not stored again).
    let out = use_chat(
        worker,
        &site.public_key,
        Some(&conversation),
        &[
            ("user", "xin chào"),
            ("assistant", "Dạ, em chào anh ạ."),
            ("user", QUESTION),
        ],
    );
    assert_completed(&out, ANSWER);
    assert_eq!(out["metadata"]["intent"], "assemble_pc", "{out}");

    let stored = history(worker, &site.secret_key, &conversation);
    let last = stored.last().expect("messages");
    assert_eq!(
        (&last["role"], &last["content"]),
        (&json!("assistant"), &json!(ANSWER))
    );
    assert_eq!(last["id"], out["messageId"]);
    assert_eq!(user_messages(worker, &site, &conversation), [QUESTION]);

    // A message sent twice (same UIMessage id: a retry, or `regenerate`) is stored once;
    // the second time its stored answer is replayed.
    let follow_up = json!({"role": "user", "text": "Tư vấn cấu hình PC chơi game tầm 30 triệu", "id": "ui-msg-7"});
    upstream.push(Reply::text("Dạ, màn hình 27 inch 2K ạ."));
    let first = use_chat_messages(
        worker,
        &site.public_key,
        Some(&conversation),
        std::slice::from_ref(&follow_up),
    );
    let again = use_chat_messages(worker, &site.public_key, Some(&conversation), &[follow_up]);
    assert_completed(&first, "Dạ, màn hình 27 inch 2K ạ.");
    assert_completed(&again, "Dạ, màn hình 27 inch 2K ạ.");
    assert_eq!(again["messageId"], first["messageId"]);
    assert_eq!(
        user_messages(worker, &site, &conversation),
        [QUESTION, "Tư vấn cấu hình PC chơi game tầm 30 triệu"]
    );
    assert_eq!(
        upstream.chat_requests().len(),
        2,
        "the repeat called no model"
    );
}

#[test]
fn use_chat_with_its_own_chat_id_is_stateless() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(Reply::text(ANSWER));
    let site = site_with_upstream(worker, "AI SDK stateless shop", &upstream.base_url, false);
    let earlier = "Dạ, anh dự định chi khoảng bao nhiêu ạ?";

    // No chat id: the transport's own (generated by the package, not a conversation's).
    // The earlier answer has the parts useChat keeps in an assistant message; only its
    // text is history.
    let answered = json!({"role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "text", "text": earlier, "state": "done"},
        {"type": "tool-get_warranty", "toolCallId": "call-1", "state": "output-available",
         "input": {"serial": "0979825281"}, "output": {"found": false}},
        {"type": "data-payload", "data": {"kind": "products", "data": []}},
    ]});
    let out = use_chat_messages(
        worker,
        &site.public_key,
        None,
        &[
            json!({"role": "user", "text": QUESTION}),
            answered,
            json!({"role": "user", "text": "Tư vấn cấu hình PC chơi game tầm 20 triệu"}),
        ],
    );
    assert_completed(&out, ANSWER);

    // The caller's history reached the model; nothing was stored.
    let prompt = upstream
        .chat_requests()
        .last()
        .map(|r| r.body["messages"].to_string())
        .unwrap_or_default();
    assert!(
        !prompt.contains("0979825281"),
        "tool parts are not history: {prompt}"
    );
    assert!(
        prompt.contains(earlier),
        "the history reached the prompt: {prompt}"
    );
    let rows = worker.d1_rows(&format!(
        "SELECT COUNT(*) AS n FROM conversations WHERE site_id = '{}'",
        site.id
    ));
    assert_eq!(rows[0]["n"], 0, "a stateless turn stores no conversation");
}

#[test]
fn a_user_token_reaches_its_own_conversation_only() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(ANSWER));
    let site = site_with_upstream(worker, "AI SDK identity shop", &upstream.base_url, false);
    let secret = new_token_secret(worker, &site);
    let (alice, bob) = (token_for(&secret, "alice"), token_for(&secret, "bob"));
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.public_key)
            .set("origin", ORIGIN)
            .set("x-user-token", &alice)
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let conversation = serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    let ask = [json!({"role": "user", "text": QUESTION})];

    for (who, token) in [("bob", Some(bob.as_str())), ("anonymous", None)] {
        let out = use_chat_as(worker, &site.public_key, token, Some(&conversation), &ask);
        assert_eq!(
            (&out["ok"], &out["status"]),
            (&json!(false), &json!(404)),
            "{who}: {out}"
        );
    }
    assert!(user_messages(worker, &site, &conversation).is_empty());
    let out = use_chat_as(
        worker,
        &site.public_key,
        Some(&alice),
        Some(&conversation),
        &ask,
    );
    assert_completed(&out, ANSWER);
    assert_eq!(user_messages(worker, &site, &conversation), [QUESTION]);
}

#[test]
fn a_long_use_chat_history_is_accepted_up_to_its_cap() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(Reply::text(ANSWER));
    let site = site_with_upstream(worker, "AI SDK long shop", &upstream.base_url, false);
    // 40 exchanges with long answers, as useChat resends them on every turn: ~120 KB.
    let long_answer = "Dạ, cấu hình này gồm CPU, mainboard, RAM, SSD và card đồ hoạ ạ. ".repeat(40);
    let history_of = |exchanges: usize| -> Vec<Value> {
        let mut messages = Vec::new();
        for _ in 0..exchanges {
            messages.push(json!({"role": "user", "text": QUESTION}));
            messages.push(json!({"role": "assistant", "text": long_answer}));
        }
        messages.push(json!({"role": "user", "text": QUESTION}));
        messages
    };
    let messages = history_of(40);
    assert!(Value::from(messages.clone()).to_string().len() > 100 * 1024);
    let out = use_chat_messages(worker, &site.public_key, None, &messages);
    assert_completed(&out, ANSWER);

    // Past 256 KB the request is refused before any turn runs.
    let out = use_chat_messages(worker, &site.public_key, None, &history_of(100));
    assert_eq!(
        (&out["ok"], &out["status"]),
        (&json!(false), &json!(413)),
        "{out}"
    );
    assert_eq!(upstream.chat_requests().len(), 1);
}

#[test]
fn format_ai_sdk_streams_a_conversation_turn() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(Reply::text(ANSWER));
    let site = site_with_upstream(worker, "AI SDK format shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    let out = format_ai_sdk(worker, &site.secret_key, &conversation, QUESTION);
    assert_completed(&out, ANSWER);
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(stored.last().map(|m| &m["id"]), Some(&out["messageId"]));

    // Any other format is refused before anything is stored.
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!(
                "/conversations/{conversation}/messages?format=xml"
            )))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"content": "Tư vấn cấu hình PC chơi game tầm 30 triệu"})),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(user_messages(worker, &site, &conversation), [QUESTION]);
}

#[test]
fn a_browser_may_call_the_chat_route_from_an_allowed_origin_only() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "AI SDK CORS shop", &upstream.base_url, false);
    // The preflight a browser sends before useChat's POST (JSON body, key header).
    let (status, _) = into_parts(
        agent()
            .request("OPTIONS", &worker.url("/api/chat"))
            .set("origin", ORIGIN)
            .set("access-control-request-method", "POST")
            .set("access-control-request-headers", "content-type, x-api-key")
            .call(),
    );
    assert_eq!(status, 204);
    // The public key from an origin the site does not allow.
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/api/chat"))
            .set("x-api-key", &site.public_key)
            .set("origin", "https://elsewhere.example")
            .send_json(json!({"id": "abc", "messages": [
                {"id": "m1", "role": "user", "parts": [{"type": "text", "text": QUESTION}]}
            ], "trigger": "submit-message"})),
    );
    assert_eq!(status, 403, "{body}");
    assert!(upstream.chat_requests().is_empty());

    // `useChat({resume: true})` asks for a stream to resume on load: there is none.
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let out = client(json!({
        "mode": "reconnect",
        "url": worker.url("/api/chat"),
        "headers": {"x-api-key": site.public_key, "origin": ORIGIN},
        "chatId": conversation,
    }));
    assert_eq!(out, json!({"ok": true, "status": 204, "resumed": false}));
}

#[test]
fn a_failing_upstream_yields_an_error_part_not_a_hang() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::CutAfter(vec!["Dạ, ".into(), "cấu hình ".into()]));
    let site = site_with_upstream(worker, "AI SDK fault shop", &upstream.base_url, false);

    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let via_chat = use_chat(
        worker,
        &site.public_key,
        Some(&conversation),
        &[("user", QUESTION)],
    );
    let (other, _) = create_conversation(worker, &site, json!({}));
    let via_format = format_ai_sdk(worker, &site.secret_key, &other, QUESTION);

    for out in [&via_chat, &via_format] {
        assert_eq!(
            (&out["ok"], &out["timedOut"]),
            (&json!(true), &json!(false)),
            "{out}"
        );
        assert_eq!(out["header"], "v1", "{out}");
        assert_eq!(
            out["text"], "Dạ, cấu hình ",
            "the text before the cut: {out}"
        );
        assert_eq!((count(out, "error"), count(out, "finish")), (1, 0), "{out}");
        assert_eq!(
            out["types"].as_array().and_then(|t| t.last()),
            Some(&json!("error"))
        );
        let errors = out["errors"].as_array().expect("errors");
        assert!(
            errors.len() == 1 && errors[0].as_str().is_some_and(|e| !e.is_empty()),
            "one error reported to the app: {out}"
        );
        assert!(
            !out.to_string().contains("127.0.0.1"),
            "no internal detail: {out}"
        );
        assert!(
            out["elapsedMs"].as_u64().is_some_and(|ms| ms < 15_000),
            "{out}"
        );
    }
    // The visitor's message stays stored, as on the native stream.
    assert_eq!(user_messages(worker, &site, &conversation), [QUESTION]);
}

#[test]
fn another_sites_key_or_identity_cannot_reach_a_conversation() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(ANSWER));
    let site_a = site_with_upstream(worker, "AI SDK shop A", &upstream.base_url, false);
    let site_b = site_with_upstream(worker, "AI SDK shop B", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site_a, json!({}));
    let (identified, _) = create_conversation(worker, &site_a, json!({"user_id": "u-42"}));

    // Site B's public key, through useChat's transport.
    let out = use_chat(
        worker,
        &site_b.public_key,
        Some(&conversation),
        &[("user", QUESTION)],
    );
    assert_eq!(
        (&out["ok"], &out["status"]),
        (&json!(false), &json!(404)),
        "{out}"
    );
    // Site B's secret key, on ?format=ai-sdk.
    let out = format_ai_sdk(worker, &site_b.secret_key, &conversation, QUESTION);
    assert_eq!(
        (&out["ok"], &out["status"]),
        (&json!(false), &json!(404)),
        "{out}"
    );
    // Site A's public key, anonymous, on a conversation bound to a user: 404 on both.
    let out = use_chat(
        worker,
        &site_a.public_key,
        Some(&identified),
        &[("user", QUESTION)],
    );
    assert_eq!(
        (&out["ok"], &out["status"]),
        (&json!(false), &json!(404)),
        "{out}"
    );
    let out = format_ai_sdk(worker, &site_a.public_key, &identified, QUESTION);
    assert_eq!(
        (&out["ok"], &out["status"]),
        (&json!(false), &json!(404)),
        "{out}"
    );

    for id in [&conversation, &identified] {
        assert!(
            user_messages(worker, &site_a, id).is_empty(),
            "nothing stored in {id}"
        );
    }
    assert!(upstream.chat_requests().is_empty(), "no turn ran");
}
