//! The Workers AI provider through the real Worker, its `AI` binding served by the double
//! (`tests/doubles/workers-ai/`, the binding's documented shapes, run beside the Worker by
//! `wrangler dev`): streamed turns, document embeddings and retrieval, and the faults —
//! a stream failing mid-answer, a call refused before it, an embedding reply of the wrong
//! shape.
//!
//! These tests share one Worker whose operator default is Workers AI
//! (`LLM_PROVIDER=workers-ai`, no `LLM_BASE_URL`), so a site without LLM settings uses the
//! binding; the double's plans are routed by a marker in each site's persona or document.

use std::sync::OnceLock;
use std::time::Duration;

use concierge_e2e::api::{
    create_conversation, error_code, eventually, history, search, send, streamed_text, terminal,
};
use concierge_e2e::workers_ai::{AiPlan, AiScript};
use concierge_e2e::{
    OPERATOR_TOKEN, TestSite, Worker, WorkerOptions, agent, into_parts, test_vars,
};
use serde_json::{Value, json};

const QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 20 triệu";

/// The Worker with the Workers AI double, and the double's script server.
fn worker() -> &'static (Worker, AiScript) {
    static WORKER: OnceLock<(Worker, AiScript)> = OnceLock::new();
    WORKER.get_or_init(|| {
        let script = AiScript::start();
        let mut vars = test_vars();
        vars.push(("LLM_PROVIDER".into(), "workers-ai".into()));
        let worker = Worker::start(&WorkerOptions {
            vars,
            workers_ai_script: Some(script.base_url.clone()),
            ..WorkerOptions::default()
        });
        (worker, script)
    })
}

/// A shop site whose persona carries `marker`, with `llm` settings (none: the operator's
/// default, Workers AI).
fn site(worker: &Worker, marker: &str, llm: Option<Value>) -> TestSite {
    let mut body = json!({
        "name": format!("Workers AI shop {marker}"),
        "allowed_origins": ["https://shop.example"],
        "persona": format!("Em là trợ lý của cửa hàng {marker}.\nGreeting: Dạ, em chào anh chị ạ."),
    });
    if let Some(llm) = llm {
        body["llm"] = llm;
    }
    worker.create_site(body)
}

fn put_document(worker: &Worker, site: &TestSite, id: &str, content: &str) {
    let (status, body) = into_parts(
        agent()
            .put(&worker.url(&format!("/admin/knowledge/{id}")))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"title": id, "content": content})),
    );
    assert_eq!(status, 201, "{body}");
}

/// Wait until the site's only document's `index_status` is `status`.
fn wait_index_status(worker: &Worker, site: &TestSite, status: &str) {
    eventually(
        Duration::from_secs(60),
        &format!("the document to be {status}"),
        || {
            let (_, text) = into_parts(
                agent()
                    .get(&worker.url("/admin/knowledge"))
                    .set("x-api-key", &site.secret_key)
                    .call(),
            );
            text.contains(&format!("\"index_status\":\"{status}\""))
                .then_some(())
        },
    );
}

#[test]
fn a_turn_streams_through_the_workers_ai_binding_and_the_answer_is_stored() {
    let (worker, script) = worker();
    let marker = "WAI-STREAM-7Q";
    // The operator's default provider: the site sets no LLM at all.
    let site = site(worker, marker, None);
    let answer = "Dạ, với 20 triệu em đề xuất cấu hình i5 và RTX 4060 ạ.";
    script.push(marker, AiPlan::text(answer));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, QUESTION);
    assert_eq!(status, 200);
    let (name, data) = terminal(&events);
    assert_eq!(name, "completed", "{events:?}");
    let chunks = events.iter().filter(|e| e.event.is_empty()).count();
    assert!(chunks > 1, "the answer arrived in pieces ({chunks} chunks)");
    assert_eq!(streamed_text(&events), answer);

    let stored = history(worker, &site.secret_key, &conversation);
    let last = stored.last().expect("messages");
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["content"], answer);
    assert_eq!(last["id"], data["message_id"]);
    assert!(last["metadata"]["incomplete"].is_null(), "{last}");

    let calls: Vec<_> = script
        .calls(marker)
        .into_iter()
        .filter(|c| !c.is_embedding())
        .collect();
    assert_eq!(calls.len(), 1, "one model call: {calls:?}");
    assert_eq!(calls[0].model, "@cf/meta/llama-3.1-8b-instruct");
    assert_eq!(calls[0].inputs["stream"], true);
    let messages = calls[0].inputs["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap_or("")
            .contains(marker),
        "the persona is in the system prompt"
    );
    let user = messages.last().expect("a message");
    assert_eq!(
        (user["role"].as_str(), user["content"].as_str()),
        (Some("user"), Some(QUESTION))
    );
}

#[test]
fn documents_are_embedded_through_workers_ai_and_retrieved_into_the_answer() {
    let (worker, script) = worker();
    let marker = "WAI-RAG-4K";
    let site = site(
        worker,
        marker,
        Some(
            json!({"provider": "workers-ai", "model": "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
            "embed_model": "@cf/baai/bge-m3"}),
        ),
    );
    let code = "QUASAR-45";
    let document = format!(
        "Chính sách đổi trả {marker}: sản phẩm lỗi được đổi mới trong 45 ngày, mã chính sách {code}."
    );
    put_document(worker, &site, "doi-tra", &document);
    wait_index_status(worker, &site, "done");
    let embeds: Vec<_> = script
        .calls(marker)
        .into_iter()
        .filter(|c| c.is_embedding())
        .collect();
    assert!(!embeds.is_empty(), "the document went through the binding");
    assert_eq!(embeds[0].model, "@cf/baai/bge-m3");
    assert!(
        embeds[0].inputs["text"].is_array(),
        "a batch: {:?}",
        embeds[0].inputs
    );

    let found = search(worker, &site, "đổi trả sản phẩm lỗi", None);
    assert!(
        found.iter().any(|t| t.contains(code)),
        "retrieved by the binding's embeddings: {found:?}"
    );

    script.push(
        marker,
        AiPlan::text("Dạ, sản phẩm lỗi được đổi mới trong 45 ngày ạ."),
    );
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Giá đổi trả sản phẩm lỗi thế nào, mua rồi có được đổi không?",
    );
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let chats: Vec<_> = script
        .calls(marker)
        .into_iter()
        .filter(|c| !c.is_embedding())
        .collect();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].model, "@cf/meta/llama-3.3-70b-instruct-fp8-fast");
    assert!(
        chats[0].inputs["messages"].to_string().contains(code),
        "the retrieved passage is in the prompt: {}",
        chats[0].inputs["messages"]
    );
}

/// One failing turn on a Workers AI site: exactly one terminal `failed` event, last; the
/// visitor's message stored; no half answer stored as complete. Returns the streamed text,
/// the error code and the number of model calls.
fn failing_turn(marker: &str, plans: &[AiPlan]) -> (String, String, usize) {
    let (worker, script) = worker();
    let site = site(worker, marker, None);
    for plan in plans {
        script.push(marker, plan.clone());
    }
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, QUESTION);
    assert_eq!(status, 200);
    let (name, data) = terminal(&events);
    assert_eq!(name, "failed", "{events:?}");
    let code = data["error"]["code"].as_str().expect("code").to_string();
    let stored = history(worker, &site.secret_key, &conversation);
    let users: Vec<_> = stored.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 1, "the visitor's message stays stored");
    assert_eq!(users[0]["content"], QUESTION);
    for message in stored.iter().filter(|m| m["kind"] == "answer") {
        assert_eq!(message["metadata"]["incomplete"], true, "{message}");
    }
    let calls = script
        .calls(marker)
        .iter()
        .filter(|c| !c.is_embedding())
        .count();
    (streamed_text(&events), code, calls)
}

#[test]
fn a_workers_ai_stream_failing_mid_answer_ends_with_one_failed_event() {
    let (text, code, calls) = failing_turn(
        "WAI-CUT-2M",
        &[AiPlan::CutAfter(vec!["Dạ, ".into(), "cấu hình ".into()])],
    );
    assert_eq!(
        text, "Dạ, cấu hình ",
        "the pieces before the failure streamed"
    );
    assert_eq!(code, "model_failed");
    assert_eq!(calls, 1, "no retry once the visitor saw text");
}

#[test]
fn a_workers_ai_call_refused_before_the_stream_is_retried_once_then_fails() {
    let capacity = AiPlan::Error("3040: Capacity temporarily exceeded, please try again.".into());
    let (text, code, calls) = failing_turn("WAI-CAPACITY-9T", &[capacity.clone(), capacity]);
    assert_eq!((text.as_str(), code.as_str()), ("", "model_failed"));
    assert_eq!(calls, 2, "one retry before the first token");
}

#[test]
fn a_bad_embedding_reply_is_retried_then_the_document_is_marked_failed() {
    let (worker, script) = worker();
    let marker = "WAI-BADSHAPE-3P";
    let site = site(worker, marker, None);
    script.always(marker, AiPlan::BadShape);
    put_document(
        worker,
        &site,
        "bao-hanh",
        &format!("Bảo hành {marker}: mọi linh kiện được bảo hành 24 tháng, mã NEBULA-24."),
    );
    wait_index_status(worker, &site, "failed");
    let embeds = script
        .calls(marker)
        .iter()
        .filter(|c| c.is_embedding())
        .count();
    // EMBED_MAX_ATTEMPTS is 3 in the tests.
    assert!(embeds >= 3, "retried before giving up ({embeds} calls)");
    let found = search(worker, &site, "bảo hành linh kiện", None);
    assert!(
        found.iter().all(|t| !t.contains("NEBULA-24")),
        "nothing of the wrong shape was stored: {found:?}"
    );
}

#[test]
fn a_workers_ai_site_refuses_endpoint_settings_and_foreign_model_names() {
    let (worker, _) = worker();
    for (llm, field) in [
        (
            json!({"provider": "workers-ai", "base_url": "https://api.example.com/v1"}),
            "base_url",
        ),
        (
            json!({"provider": "workers-ai", "model": "gpt-4o-mini"}),
            "model",
        ),
        (
            json!({"provider": "workers-ai", "embed_model": "text-embedding-3-small"}),
            "embed_model",
        ),
    ] {
        let (status, body) = into_parts(
            agent()
                .post(&worker.url("/admin/sites"))
                .set("authorization", &format!("Bearer {OPERATOR_TOKEN}"))
                .send_json(json!({"name": "Refused", "llm": llm})),
        );
        assert_eq!(status, 400, "{llm}: {body}");
        assert_eq!(error_code(&body), "bad_request", "{body}");
        assert!(body.contains(&format!("llm.{field}")), "{body}");
    }
}

#[test]
fn tool_calls_and_constrained_replies_go_through_the_binding_whole() {
    // The `analyst` template: a classifier constrained to its labels (structured output),
    // an agent that must call a tool, then the formatter's streamed answer.
    const CLASSIFIER: &str = "Bạn là một classifier phân loại ý định người dùng.";
    const AGENT: &str = "Bạn là trợ lý phân tích dữ liệu kinh doanh.";
    const FORMATTER: &str = "Format kết quả phân tích dữ liệu cho người dùng.";
    let (worker, script) = worker();
    let site = worker.create_site(json!({
        "name": "Workers AI analyst",
        "template": "analyst",
        "allowed_origins": ["https://shop.example"],
    }));
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/data/don_hang?user_id=alice"))
            .set("x-api-key", &site.secret_key)
            .set("content-type", "text/csv")
            .send_string(
                "ngay,san_pham,doanh_thu\n05/01/2024,Áo thun,60.000.000\n\
                 15/1/2024,Quần jean,50.000.000\n2024-01-31,Áo thun,40.000.000\n\
                 2024-02-02,Giày,57.750.000\n",
            ),
    );
    assert_eq!(status, 200, "{body}");
    script.push(CLASSIFIER, AiPlan::text("data_query"));
    script.push(
        AGENT,
        AiPlan::ToolCalls(vec![(
            "aggregate_data".into(),
            json!({"connection_name": "don_hang", "operation": "sum", "field": "doanh_thu",
                "date_field": "ngay", "date_from": "2024-01-01", "date_to": "2024-01-31"}),
        )]),
    );
    script.push(
        AGENT,
        AiPlan::text("Tổng doanh thu tháng 1/2024 là 150000000 VND"),
    );
    script.push(
        FORMATTER,
        AiPlan::text("Tổng doanh thu tháng 1/2024: 150000000 VND"),
    );
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"user_id": "alice"})),
    );
    assert_eq!(status, 201, "{body}");
    let conversation: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = conversation["conversation_id"].as_str().expect("id");
    let (status, events) = send(
        worker,
        &site.secret_key,
        conversation,
        "Tổng doanh thu tháng 1/2024?",
    );
    assert_eq!(status, 200);
    let ends: Vec<Value> = events
        .iter()
        .filter(|e| e.event == "tool_end")
        .map(|e| serde_json::from_str(&e.data).expect("JSON"))
        .collect();
    assert_eq!(ends.len(), 1, "{events:?}");
    assert_eq!(ends[0]["ok"], true);
    assert_eq!(ends[0]["output"]["value"], 150_000_000);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    assert_eq!(
        streamed_text(&events),
        "Tổng doanh thu tháng 1/2024: 150.000.000 VND"
    );

    let classifier = &script.calls(CLASSIFIER)[0];
    assert_eq!(classifier.inputs["stream"], false);
    assert_eq!(
        classifier.inputs["response_format"]["json_schema"]["properties"]["choice"]["enum"],
        json!(["data_query", "chat", "unclear"])
    );
    let agent_calls = script.calls(AGENT);
    assert_eq!(
        agent_calls.len(),
        2,
        "the call, then the answer from its result"
    );
    assert_eq!(agent_calls[0].inputs["stream"], false);
    assert_eq!(
        agent_calls[0].inputs["tools"][0]["type"], "function",
        "{}",
        agent_calls[0].inputs["tools"]
    );
    let fed_back = agent_calls[1].inputs["messages"]
        .as_array()
        .expect("messages");
    assert!(
        fed_back.iter().any(|m| m["role"] == "tool"),
        "the tool's result went back to the model: {fed_back:?}"
    );
    assert_eq!(script.calls(FORMATTER)[0].inputs["stream"], true);
}
