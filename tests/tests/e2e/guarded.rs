//! The `guarded` template (seed 004) end to end, with a scripted upstream and the local
//! search provider: the guardrail refuses off-domain questions in the visitor's language
//! with nothing stored and the answer model never called; an in-domain answer ends with
//! the seed's sources list; the summary accumulates and the fourth prompt carries it with
//! only the 6 recent messages; compression keeps the full display history; search and
//! model failures give one `failed` with the message stored; per-request models outside
//! the allow-list are refused. (The JSON-RPC and MCP surfaces: `guarded_rpc`.)

use concierge_e2e::api::{
    create_conversation, fixed_sentence, history, send, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, free_port, into_parts};
use serde_json::{Value, json};

const GUARDRAIL_VI: &str =
    "Câu hỏi có liên quan đến NHA KHOA không? Trả lời CHỈ một từ: YES hoặc NO";
const GUARDRAIL_EN: &str =
    "Is the question related to DENTISTRY? Answer with ONLY one word: YES or NO";

pub(crate) fn refusal(file: &str, domain: &str) -> String {
    fixed_sentence(file, "refusal").replace("{domain}", domain)
}

pub(crate) fn guarded_site(
    worker: &Worker,
    upstream: &ScriptedUpstream,
    search: Value,
) -> TestSite {
    worker.create_site(json!({
        "name": "Nha khoa test",
        "template": "guarded",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url),
                "model": "scripted", "embed_model": "scripted-embed"},
        "guarded": {"assistant_id": "dental-duckduckgo", "allowed_models": ["qwen2.5:3b-instruct"],
                    "search": search},
    }))
}

pub(crate) fn put_pages(worker: &Worker, site: &TestSite) {
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/search-pages"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"pages": [
                {"title": "Sâu răng: nguyên nhân và cách phòng ngừa", "url": "https://nhakhoa.example/sau-rang",
                 "content": "Sâu răng do vi khuẩn; chải răng với kem có fluor hai lần mỗi ngày."},
                {"url": "https://nhakhoa.example/fluor",
                 "content": "Fluor giúp men răng chắc khỏe và ngừa sâu răng."}
            ]})),
    );
    assert_eq!(status, 200, "{body}");
}

const SOURCES_VI: &str = "\n\nNguồn tham khảo:\n\n\
    1. Sâu răng: nguyên nhân và cách phòng ngừa - https://nhakhoa.example/sau-rang\n\
    2. https://nhakhoa.example/fluor";

fn system_prompts(upstream: &ScriptedUpstream) -> Vec<String> {
    upstream
        .chat_requests()
        .iter()
        .map(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

pub(crate) fn rpc(worker: &Worker, key: &str, method: &str, params: Value) -> Value {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/jsonrpc"))
            .set("x-api-key", key)
            .send_json(json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 7})),
    );
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(json["jsonrpc"], "2.0");
    assert_eq!(json["id"], 7);
    json
}

#[test]
fn off_domain_questions_are_refused_unstored_and_in_domain_ones_cite_sources() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    upstream.push(Reply::text("NO"));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Giá vàng hôm nay bao nhiêu?",
    );
    assert_eq!(status, 200);
    assert_eq!(
        streamed_text(&events),
        refusal("guarded_fixed_vi.md", "nha khoa")
    );
    let (kind, data) = terminal(&events);
    assert_eq!(
        (kind.as_str(), data["kind"].as_str()),
        ("completed", Some("refusal"))
    );

    upstream.push(Reply::text("No."));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "What is the weather in Paris today?",
    );
    assert_eq!(
        streamed_text(&events),
        refusal("guarded_fixed_en.md", "dentistry")
    );
    // Posted for a background answer: refused at once, nothing queued or stored.
    upstream.push(Reply::text("NO"));
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/messages")))
            .set("x-api-key", &site.secret_key)
            .set("prefer", "respond-async")
            .send_json(json!({"content": "Tỷ giá đô la hôm nay?"})),
    );
    assert_eq!(status, 200, "{body}");
    let refused: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(refused["refused"], true);
    assert_eq!(
        refused["message"]["content"],
        refusal("guarded_fixed_vi.md", "nha khoa")
    );
    // Only the guardrail was called (the test fails if the answer model was).
    assert_eq!(
        system_prompts(&upstream),
        [GUARDRAIL_VI, GUARDRAIL_EN, GUARDRAIL_VI]
    );
    let stored = history(worker, &site.secret_key, &conversation);
    // Nothing: refusals are not stored, and neither is the greeting (issue 27 item 4).
    assert_eq!(stored.len(), 0, "nothing stored: {stored:?}");

    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text(
        "Chải răng hai lần mỗi ngày với kem có fluor.\n\nNguồn tham khảo:\n1. x",
    ));
    upstream.push(Reply::text("Người dùng hỏi cách ngừa sâu răng."));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Làm sao để ngừa sâu răng?",
    );
    let expected = format!("Chải răng hai lần mỗi ngày với kem có fluor.{SOURCES_VI}");
    assert_eq!(streamed_text(&events), expected);
    assert_eq!(terminal(&events).0, "completed");
    assert!(
        events
            .iter()
            .any(|e| e.event == "tool_start" && e.data.contains("duckduckgo_search"))
    );
    let stored = history(worker, &site.secret_key, &conversation);
    // The question and its answer (no greeting: issue 27 item 4).
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(stored[1]["content"], expected.as_str());
    let prompt = &upstream.chat_requests()[4].body["messages"][1]["content"];
    let prompt = prompt.as_str().expect("prompt");
    assert!(prompt.contains("Title: Sâu răng: nguyên nhân"), "{prompt}");
    assert!(
        prompt.contains("Link: https://nhakhoa.example/fluor"),
        "{prompt}"
    );
}

#[test]
fn the_summary_accumulates_and_compression_keeps_the_display_history() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let mut chat_id = String::from("chat_client_chosen");
    for n in 1..=4 {
        upstream.push(Reply::text("YES"));
        upstream.push(Reply::text(&format!("Trả lời {n} về sâu răng.")));
        upstream.push(Reply::text(&format!("Summary {n}")));
        let (status, body) = into_parts(
            agent()
                .post(&worker.url("/v1/chat/completions"))
                .set("authorization", &format!("Bearer {}", site.secret_key))
                .send_json(json!({"model": "dental-duckduckgo", "chat_id": chat_id,
                    "messages": [{"role": "user", "content": format!("Câu {n}: sâu răng có nguy hiểm không?")}]})),
        );
        assert_eq!(status, 200, "{body}");
        let json: Value = serde_json::from_str(&body).expect("JSON");
        let content = json["choices"][0]["message"]["content"]
            .as_str()
            .expect("content");
        assert_eq!(content, format!("Trả lời {n} về sâu răng.{SOURCES_VI}"));
        if n == 1 {
            assert_ne!(json["chat_id"], "chat_client_chosen", "a server-minted id");
        }
        chat_id = json["chat_id"].as_str().expect("chat_id").to_string();
    }
    let fourth = upstream.chat_requests()[10].body["messages"][1]["content"]
        .as_str()
        .expect("prompt")
        .to_string();
    assert!(
        fourth.starts_with(
            "\n\nTóm tắt cuộc trò chuyện trước:\nSummary 1\n\nSummary 2\n\nSummary 3\n"
        ),
        "{fourth}"
    );
    for n in 1..=3 {
        assert!(
            fourth.contains(&format!("Người dùng: Câu {n}:")),
            "{fourth}"
        );
        assert!(fourth.contains(&format!("Trợ lý: Trả lời {n}")), "{fourth}");
    }
    assert!(
        !fourth.contains("Xin chào"),
        "the greeting is not a recent message: {fourth}"
    );
    let read = |path: &str| {
        let (status, body) = into_parts(
            agent()
                .get(&worker.url(path))
                .set("authorization", &format!("Bearer {}", site.secret_key))
                .call(),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).expect("JSON")
    };
    let conversation = read(&format!("/v1/conversations/{chat_id}"));
    assert_eq!(
        conversation["summary"],
        "Summary 1\n\nSummary 2\n\nSummary 3\n\nSummary 4"
    );
    let key = &site.secret_key;
    let params = json!({"conversation_id": chat_id});
    let old = rpc(
        worker,
        key,
        "memory-server/memory/get_old_messages",
        params.clone(),
    );
    assert_eq!(old["result"]["total_count"], 8);
    assert_eq!(
        old["result"]["old_messages"].as_array().map(Vec::len),
        Some(2)
    );
    let set = rpc(
        worker,
        key,
        "memory-server/memory/set_summary",
        json!({"conversation_id": chat_id, "summary": "Tóm tắt", "compress": true}),
    );
    assert_eq!(set["result"], json!({"ok": true, "compressed": 2}));
    let old = rpc(
        worker,
        key,
        "memory-server/memory/get_old_messages",
        params.clone(),
    );
    assert_eq!(old["result"]["old_messages"], json!([]));
    let context = rpc(
        worker,
        key,
        "memory-server/memory/get_context",
        json!({"conversation_id": chat_id, "max_messages": 20}),
    );
    let recent = context["result"]["messages"].as_array().expect("messages");
    assert_eq!(recent.len(), 6);
    assert_eq!(recent[0]["content"], "Câu 2: sâu răng có nguy hiểm không?");
    // Full display history: all 8 messages, compressed ones included (the greeting is not
    // a stored message of a guarded conversation: issue 27 item 4).
    let conversation = read(&format!("/v1/conversations/{chat_id}"));
    assert_eq!(conversation["messages"].as_array().map(Vec::len), Some(8));
    let all = rpc(worker, key, "memory-server/memory/get_all_messages", params);
    assert_eq!(all["result"]["messages"].as_array().map(Vec::len), Some(8));
}

#[test]
fn search_and_model_failures_fail_once_and_keep_the_message() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // A SearXNG instance nobody listens on.
    let closed = format!("http://127.0.0.1:{}", free_port());
    let site = guarded_site(
        worker,
        &upstream,
        json!({"provider": "searxng", "url": closed}),
    );
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    upstream.push(Reply::text("YES"));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Răng khôn mọc lệch phải làm sao?",
    );
    let (kind, data) = terminal(&events);
    assert_eq!(
        (kind.as_str(), data["error"]["code"].as_str()),
        ("failed", Some("search_unavailable"))
    );
    assert_eq!(
        upstream.chat_requests().len(),
        1,
        "no answer without search results"
    );

    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::Status(500));
    upstream.push(Reply::Status(500));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Sâu răng có lây không?",
    );
    assert_eq!(terminal(&events).0, "failed");
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["content"], "Sâu răng có lây không?");
}

#[test]
fn per_request_models_come_only_from_the_allow_list() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    let post = |body: Value| {
        into_parts(
            agent()
                .post(&worker.url("/v1/chat/completions"))
                .set("authorization", &format!("Bearer {}", site.secret_key))
                .send_json(body),
        )
    };
    let messages = json!([{"role": "user", "content": "Giá vàng hôm nay?"}]);
    let (status, body) = post(json!({"model": "dental-duckduckgo", "messages": messages,
        "ollama_model": "gpt-4.5-preview"}));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("ollama_model"), "{body}");
    let (status, body) = post(json!({"model": "concierge-other", "messages": messages}));
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("model_not_found"), "{body}");
    upstream.push(Reply::text("NO"));
    let (status, body) = post(json!({"model": "dental-duckduckgo", "messages": messages,
        "ollama_guardrail_model": "qwen2.5:3b-instruct"}));
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        json["choices"][0]["message"]["content"],
        refusal("guarded_fixed_vi.md", "nha khoa")
    );
    assert_eq!(json["choices"][0]["finish_reason"], "stop");
    let requests = upstream.chat_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "qwen2.5:3b-instruct");
}
