//! The OpenAI-compatible API (`/v1/…`) through the official Python `openai` client
//! (tests/clients/openai_client.py, pinned in tests/clients/requirements.txt), against a
//! scripted upstream: models, non-streamed and streamed completions, a stored conversation
//! continued by `chat_id`, idempotent repeats, the conversation object, errors as the
//! client's exception classes, and another site's key seeing nothing. The stream's wire
//! format and the error bodies are also read raw.

use std::io::Read;
use std::process::Command;

use concierge_e2e::api::{create_conversation, fixed_sentence, history, site_with_upstream};
use concierge_e2e::upstream::{Reply, SHOP_INTENT_MARKER, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root};
use serde_json::{Value, json};

const NON_STREAMED: &str = "Dạ, với 20 triệu em đề xuất cấu hình i5 và RTX 4060 ạ.";
const STREAMED: &str = "Dạ, cấu hình Ryzen 5 và RTX 4070 chơi game rất mượt ạ.";

/// The site's assistant id, as `/v1/models` lists it.
fn model_of(site: &TestSite) -> String {
    format!("concierge-{}", site.id)
}

/// The venv's Python (`$CONCIERGE_PYTHON`, set by scripts/env.sh; else the project venv's).
fn python() -> String {
    std::env::var("CONCIERGE_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| {
            repo_root()
                .join(".tools/venv/bin/python")
                .display()
                .to_string()
        })
}

fn seed_warranty(worker: &Worker, site: &TestSite) {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/warranty"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"records": [
                {"serial": "0979825281", "product": "S23 Ultra", "warranty_until": "2026-08-12"}
            ]})),
    );
    assert_eq!(status, 200, "{body}");
}

/// Runs the client script; its JSON results.
fn run_client(worker: &Worker, a: &TestSite, b: &TestSite, chat_b: &str) -> Value {
    let config = json!({
        "base_url": worker.base_url, "key_a": a.secret_key, "key_b": b.secret_key,
        "model_a": model_of(a), "model_b": model_of(b), "chat_b": chat_b,
    });
    let output = Command::new(python())
        .arg(repo_root().join("tests/clients/openai_client.py"))
        .arg(config.to_string())
        .output()
        .expect("run the Python openai client (scripts/install.sh installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "openai_client.py failed: {}\nstdout: {stdout}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("client output is JSON ({e}): {stdout}"))
}

/// Asserts that `result` is the client's `class` exception with status and code.
fn assert_raised(result: &Value, class: &str, status: u16, code: &str) {
    assert_eq!(result["error"], class, "{result}");
    assert_eq!(result["status"], status, "{result}");
    assert_eq!(result["code"], code, "{result}");
}

#[test]
fn the_official_python_client_lists_completes_continues_and_is_refused_where_it_should_be() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "OpenAI shop", &upstream.base_url, false);
    let other_upstream = ScriptedUpstream::start();
    let other = site_with_upstream(worker, "Other shop", &other_upstream.base_url, false);
    seed_warranty(worker, &site);
    upstream.push(Reply::text(NON_STREAMED));
    upstream.push(Reply::text(STREAMED));
    upstream.set_default(Reply::text("Dạ, em xin phép hỏi lại ạ."));
    other_upstream.set_default(Reply::Status(500));
    let (chat_b, _) = create_conversation(worker, &other, json!({}));

    let r = run_client(worker, &site, &other, &chat_b);
    let model = model_of(&site);
    let ask = fixed_sentence("shop_fixed_vi.md", "warranty.ask_serial");
    let remind = fixed_sentence("shop_fixed_vi.md", "warranty.remind_rule");
    let found = fixed_sentence("shop_fixed_vi.md", "warranty.found")
        .replace("{product}", "S23 Ultra")
        .replace("{serial}", "0979825281")
        .replace("{date}", "12/8/2026");
    let not_found = fixed_sentence("shop_fixed_vi.md", "warranty.not_found");

    // Models: the site's one assistant, its template visible.
    assert_eq!(
        r["models"].as_array().map(Vec::len),
        Some(1),
        "{}",
        r["models"]
    );
    let listed = &r["models"][0];
    assert_eq!(listed["id"], model.as_str());
    assert_eq!(listed["object"], "model");
    assert_eq!(listed["template"], "shop");
    assert_eq!(listed["owned_by"], "OpenAI shop");
    assert!(
        listed["created"]
            .as_u64()
            .is_some_and(|t| t > 1_600_000_000)
    );
    assert_eq!(r["model_retrieved"]["ok"], model.as_str());

    // Non-streamed and streamed completions: the scripted text, one finish, usage.
    let plain = &r["non_stream"];
    assert_eq!(plain["object"], "chat.completion");
    assert_eq!(plain["model"], model.as_str());
    assert_eq!(plain["content"], NON_STREAMED);
    assert_eq!(plain["role"], "assistant");
    assert_eq!(plain["finish_reason"], "stop");
    assert_eq!(plain["choices"], 1);
    assert_eq!(
        plain["usage"]["total_tokens"], 0,
        "the upstream reports no usage"
    );
    assert!(
        plain["chat_id"].is_null(),
        "a stateless turn names no conversation"
    );
    let streamed = &r["stream"];
    assert_eq!(streamed["content"], STREAMED);
    assert_eq!(streamed["finish_reasons"], json!(["stop"]));
    assert_eq!(
        streamed["usage"].as_array().map(Vec::len),
        Some(1),
        "{streamed}"
    );
    assert_eq!(streamed["chat_ids"], json!([]));
    // The caller's system message did not reach the model; the site's prompt did.
    let (intent_calls, requests): (Vec<_>, Vec<_>) =
        upstream.chat_requests().into_iter().partition(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.starts_with(SHOP_INTENT_MARKER))
        });
    assert_eq!(requests.len(), 2, "only the two answers called the model");
    // "em không nhớ ạ" alone is uncertain to the rules (issue 48): the model is asked to
    // classify it once (the scripted upstream says `unknown`), and the clarifying question
    // stands.
    assert_eq!(intent_calls.len(), 1, "one classification call");
    assert_eq!(
        intent_calls[0].body["messages"][1]["content"],
        "em không nhớ ạ"
    );
    let prompt = requests[0].body["messages"].to_string();
    assert!(!prompt.contains("Answer in French."), "{prompt}");
    assert!(prompt.contains("tư vấn cấu hình pc chơi game"), "{prompt}");

    // A stored conversation, continued by chat_id: remembered across requests.
    let opened = &r["opened"];
    let chat_id = opened["chat_id"]
        .as_str()
        .expect("chat_id of a new conversation");
    assert_eq!(opened["header_chat_id"], chat_id);
    assert_eq!(opened["content"], ask.as_str());
    assert_eq!(r["continued"]["content"], remind.as_str());
    assert_eq!(r["continued"]["chat_id"], chat_id);
    let lookup = &r["continued_stream"];
    assert_eq!(lookup["content"], found.as_str());
    assert!(found.contains("S23 Ultra") && found.contains("12/8/2026"));
    assert_eq!(lookup["chat_ids"], json!([chat_id]));
    assert_eq!(lookup["chunks_without_chat_id"], false);
    assert_eq!(lookup["finish_reasons"], json!(["stop"]));
    assert!(lookup["usage"].as_array().is_some_and(Vec::is_empty));
    // One idempotency key, two requests: one stored turn, the same answer.
    assert_eq!(r["repeated"][0]["content"], not_found.as_str());
    assert_eq!(r["repeated"][1]["content"], not_found.as_str());

    let conversation = &r["conversation"];
    assert_eq!(conversation["id"], chat_id);
    assert_eq!(conversation["object"], "conversation");
    assert!(
        conversation["created_at"]
            .as_u64()
            .is_some_and(|t| t > 1_600_000_000)
    );
    assert_eq!(conversation["metadata"]["template"], "shop");
    let messages: Vec<(String, String)> = conversation["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let user = |text: &str| ("user".to_string(), text.to_string());
    let assistant = |text: &str| ("assistant".to_string(), text.to_string());
    assert_eq!(messages.len(), 9, "{messages:#?}");
    assert_eq!(
        messages[1..],
        [
            user("Kiểm tra bảo hành giúp em"),
            assistant(&ask),
            user("em không nhớ ạ"),
            assistant(&remind),
            user("serial là 0979825281."),
            assistant(&found),
            user("SN: ZZZ-404-NOPE"),
            assistant(&not_found),
        ]
    );

    // Stateless: the bare message alone is not a reply to a serial question.
    assert_ne!(r["stateless_bare"]["content"], remind.as_str());
    assert_eq!(
        r["stateless_bare"]["content"],
        fixed_sentence("shop_fixed_vi.md", "clarify.general.1").as_str()
    );
    assert!(r["stateless_bare"]["chat_id"].is_null());
    let stateless_lookup = r["stateless_lookup"]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        stateless_lookup.contains("S23 Ultra") && stateless_lookup.contains("12/8/2026"),
        "{stateless_lookup}"
    );

    // Errors, as the client's exception classes.
    assert_raised(&r["wrong_key"], "AuthenticationError", 401, "unauthorized");
    assert_raised(&r["unknown_model"], "NotFoundError", 404, "model_not_found");
    assert_raised(&r["malformed"], "BadRequestError", 400, "bad_request");
    assert_raised(
        &r["unknown_chat"],
        "NotFoundError",
        404,
        "conversation_not_found",
    );

    // Site B's key sees none of site A's models or conversations.
    assert_eq!(r["b_models"], json!([model_of(&other)]));
    assert_raised(&r["b_model_a"], "NotFoundError", 404, "model_not_found");
    assert_raised(
        &r["b_retrieve_a_model"],
        "NotFoundError",
        404,
        "model_not_found",
    );
    assert_raised(
        &r["b_conversation_a"],
        "NotFoundError",
        404,
        "conversation_not_found",
    );
    assert_raised(
        &r["b_continue_a"],
        "NotFoundError",
        404,
        "conversation_not_found",
    );

    // A stored turn that fails after storing its message: not retried by the client, so
    // the message is stored once (and marked).
    assert_raised(&r["b_failing"], "InternalServerError", 502, "model_failed");
    let stored = history(worker, &other.secret_key, &chat_b);
    let users: Vec<&Value> = stored.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 1, "{stored:#?}");
    assert_eq!(users[0]["metadata"]["answer_failed"], "model_failed");
    assert_eq!(r["b_failing"]["should_retry"], "false");
}

#[test]
fn the_stream_is_data_lines_only_with_one_finish_and_a_usage_chunk() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "OpenAI wire shop", &upstream.base_url, false);
    upstream.push(Reply::text(STREAMED));
    // Accept: application/json, as the Python client sends even when streaming: the body's
    // `stream` decides.
    let response = agent()
        .post(&worker.url("/v1/chat/completions"))
        .set("authorization", &format!("Bearer {}", site.secret_key))
        .set("accept", "application/json")
        .send_json(json!({
            "model": model_of(&site), "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "tư vấn cấu hình pc chơi game"}],
        }))
        .expect("200");
    assert!(response.content_type().starts_with("text/event-stream"));
    let mut body = String::new();
    response
        .into_reader()
        .read_to_string(&mut body)
        .expect("body");
    let lines: Vec<&str> = body.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        lines.iter().all(|l| l.starts_with("data: ")),
        "data lines only (no id:, event: or comments): {body}"
    );
    assert_eq!(lines.last(), Some(&"data: [DONE]"));
    let chunks: Vec<Value> = lines[..lines.len() - 1]
        .iter()
        .map(|l| serde_json::from_str(&l["data: ".len()..]).expect("chunk JSON"))
        .collect();
    let finishes: Vec<&Value> = chunks
        .iter()
        .flat_map(|c| c["choices"].as_array().into_iter().flatten())
        .map(|choice| &choice["finish_reason"])
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finishes, [&json!("stop")], "exactly one finish_reason");
    let last = chunks.last().expect("chunks");
    assert_eq!(last["choices"], json!([]), "the usage chunk is last");
    assert!(last["usage"]["total_tokens"].is_u64());
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, STREAMED);
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
}

#[test]
fn errors_on_v1_take_openais_shape_and_the_rest_keep_the_apis() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "OpenAI errors shop", &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/v1/chat/completions"))
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .send_json(json!({"model": model_of(&site), "messages": [{"role": "assistant", "content": "hi"}]})),
    );
    assert_eq!(status, 400, "{body}");
    let error: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert_eq!(error["error"]["param"], "messages");
    assert_eq!(error["error"]["code"], "bad_request");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );

    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/v1/models"))
            .set("authorization", "Bearer sk_wrong")
            .call(),
    );
    assert_eq!(status, 401);
    let error: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(error["error"]["type"], "authentication_error");
    assert!(error["error"]["param"].is_null() && error["error"].get("param").is_some());

    // The public key is not for this API.
    let (status, _) = into_parts(
        agent()
            .get(&worker.url("/v1/models"))
            .set("authorization", &format!("Bearer {}", site.public_key))
            .set("origin", "https://shop.example")
            .call(),
    );
    assert_eq!(status, 403);

    // Elsewhere, the API's own shape.
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("authorization", "Bearer sk_wrong")
            .call(),
    );
    assert_eq!(status, 401);
    let error: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(error["error"]["code"], "unauthorized");
    assert!(error["error"].get("type").is_none());
}
