//! Running the `ai` package's client code (`tests/clients/ai_sdk_client.mjs`) and reading
//! what it assembled.

use std::io::Write;
use std::process::{Command, Stdio};

use concierge_e2e::api::history;
use concierge_e2e::{TestSite, Worker, repo_root};
use serde_json::{Value, json};

pub(crate) const ORIGIN: &str = "https://shop.example";
pub(super) const QUESTION: &str = "tư vấn cấu hình pc chơi game";
pub(super) const ANSWER: &str = "Dạ, với 20 triệu em đề xuất cấu hình i5 và RTX 4060 ạ.";

/// Run the client script with `input` (on its stdin); its JSON output.
pub(crate) fn client(input: Value) -> Value {
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
pub(super) fn use_chat(
    worker: &Worker,
    key: &str,
    chat_id: Option<&str>,
    messages: &[(&str, &str)],
) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(role, text)| json!({"role": role, "text": text}))
        .collect();
    use_chat_messages(worker, key, chat_id, &messages)
}

/// [`use_chat`] with the messages as the client script takes them (`{"role", "text",
/// "id"?}`).
pub(super) fn use_chat_messages(
    worker: &Worker,
    key: &str,
    chat_id: Option<&str>,
    messages: &[Value],
) -> Value {
    use_chat_as(worker, key, None, chat_id, messages)
}

/// [`use_chat_messages`] with a signed user token (`X-User-Token`), if any.
pub(super) fn use_chat_as(
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
pub(super) fn format_ai_sdk(
    worker: &Worker,
    key: &str,
    conversation: &str,
    content: &str,
) -> Value {
    client(json!({
        "mode": "format",
        "url": worker.url(&format!("/conversations/{conversation}/messages?format=ai-sdk")),
        "headers": {"x-api-key": key, "origin": ORIGIN},
        "content": content,
        "timeoutMs": 20_000,
    }))
}

pub(super) fn count(out: &Value, kind: &str) -> usize {
    out["types"]
        .as_array()
        .map_or(0, |t| t.iter().filter(|t| *t == kind).count())
}

/// A completed stream, as `useChat` assembles it: the answer text, exactly one `finish`
/// (last), no error, the header, the reply's id as the message's.
pub(super) fn assert_completed(out: &Value, text: &str) {
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

pub(super) fn user_messages(worker: &Worker, site: &TestSite, conversation: &str) -> Vec<String> {
    history(worker, &site.secret_key, conversation)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}
