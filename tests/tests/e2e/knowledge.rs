//! Issue 15 through the real Worker (`wrangler dev`, local D1 vectors, scripted upstream
//! answering by marker): the `knowledge` template (seed 003) — the seed's plan with its
//! trace ids and a resolved conflict, progress before the answer, chitchat, a timed-out
//! agent, a repaired plan, the answer cache, permissions by scope and department (asserted
//! on the stored document ids), log search over FTS5, the direct JSON interface, and the
//! stage wall-time benchmark.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use concierge_e2e::api::{eventually, fixed_sentence, history, site_with_upstream, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, into_parts, read_events};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

pub(super) const ROUTER: &str = "Reflection Semantic Router";
pub(super) const RAG: &str = "(rag_tool).";
pub(super) const SUMMARY: &str = "(summary_tool).";
pub(super) const FINAL: &str = "AnswerFormatter";
pub(super) const ORIGIN: &str = "https://shop.example";

/// Seed 003 §2.1's plan.
pub(super) const SEED_PLAN: &str = r#"{"original_query":"giá trị cốt lõi, muộn có ảnh hưởng đến giá trị nào không",
 "refined_query":"Công ty có bao nhiêu giá trị cốt lõi, và việc đi muộn có ảnh hưởng đến giá trị nào không?",
 "agents":{"general":{"queries":[{"1":"Giá trị cốt lõi của công ty là gì?"}],"tools":["rag_tool"]},
   "hr":{"queries":[{"1":"Đi muộn có những ảnh hưởng gì đến công việc và quy định công ty?"},{"2":"Hậu quả hoặc vấn đề khi nhân viên đi muộn"}],"tools":["rag_tool","summary_tool"]}},
 "permission":{"user_access":["public","private"]},
 "execution_flow":{"planning":{"tasks":[{"1":[{"agent":"general","tool":"rag_tool","message":"Truy vấn giá trị cốt lõi từ chung","status":"pending"},
   {"agent":"hr","tool":"rag_tool","message":"Truy vấn nội quy và ảnh hưởng khi đi muộn","status":"pending"}],
   "2":[{"agent":"hr","tool":"rag_tool","message":"Truy vấn hậu quả/vấn đề khi nhân viên đi muộn","status":"pending"},
   {"agent":"hr","tool":"summary_tool","message":"Tóm tắt ảnh hưởng tổng hợp từ kết quả","status":"pending"}],
   "3":[{"agent":"orchestrator","tool":"summary_tool","message":"Tổng hợp và phản hồi câu hỏi","status":"pending"}]}],
   "aggregate_status":"pending"},"conflict_resolution":"So sánh kết quả giữa agents; ưu tiên HR khi liên quan quy định nội bộ"}}"#;

pub(super) fn one_task_plan(agent: &str, tool: &str, query: &str) -> String {
    json!({"refined_query": query,
        "agents": {agent: {"queries": [{"1": query}], "tools": [tool]}},
        "execution_flow": {"planning": {"tasks": [{"1": [{"agent": agent, "tool": tool, "message": "Tra cứu", "status": "pending"}]}]}}})
    .to_string()
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A user token as the merchant's backend mints it.
pub(super) fn mint(secret: &str, claims: &Value) -> String {
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC key");
    mac.update(payload.as_bytes());
    format!(
        "{payload}.{}",
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

pub(super) fn admin(
    worker: &Worker,
    site: &TestSite,
    method: &str,
    path: &str,
    body: Value,
) -> (u16, String) {
    into_parts(
        agent()
            .request(method, &worker.url(path))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

/// A `knowledge` site on `upstream`, every relevance kept (hashed test embeddings score
/// low), with `workflow` overrides.
pub(super) fn knowledge_site(
    worker: &Worker,
    upstream: &ScriptedUpstream,
    workflow: Value,
) -> TestSite {
    let site = site_with_upstream(worker, "Knowledge", &upstream.base_url, false);
    let mut settings = json!({"min_relevance_score": 0.0});
    for (k, v) in workflow.as_object().expect("object") {
        settings[k] = v.clone();
    }
    let (status, body) = admin(
        worker,
        &site,
        "PATCH",
        "/admin/site",
        json!({"template": "knowledge", "knowledge": {"workflow": settings}}),
    );
    assert_eq!(status, 200, "{body}");
    site
}

pub(super) fn put_document(
    worker: &Worker,
    site: &TestSite,
    id: &str,
    content: &str,
    scope: &str,
    department: &str,
    at: &str,
) {
    let (status, body) = admin(
        worker,
        site,
        "PUT",
        &format!("/admin/knowledge/{id}"),
        json!({
        "title": id, "content": content, "scope": scope, "department": department,
        "url": format!("https://intra.company/{id}"), "source_created_at": at}),
    );
    assert_eq!(status, 201, "{body}");
}

pub(super) fn wait_indexed(worker: &Worker, site: &TestSite, count: usize) {
    eventually(Duration::from_secs(60), "documents indexed", || {
        let (_, text) = into_parts(
            agent()
                .get(&worker.url("/admin/knowledge"))
                .set("x-api-key", &site.secret_key)
                .call(),
        );
        (text.matches("\"index_status\":\"done\"").count() >= count).then_some(())
    });
}

pub(super) fn demo_documents(worker: &Worker, site: &TestSite) {
    put_document(
        worker,
        site,
        "core-values",
        "Giá trị cốt lõi của công ty: khách hàng, chính trực, hợp tác, kỷ luật",
        "public",
        "general",
        "2025-06-10T08:00:00Z",
    );
    put_document(
        worker,
        site,
        "punctuality-old",
        "Đi muộn ảnh hưởng công việc quy định công ty: nhắc nhở miệng (chính sách cũ)",
        "public",
        "hr",
        "2023-01-01T00:00:00Z",
    );
    put_document(
        worker,
        site,
        "punctuality",
        "Đi muộn ảnh hưởng công việc quy định công ty: trừ KPI và cảnh báo nội bộ",
        "private",
        "hr",
        "2026-11-20T00:00:00Z",
    );
    put_document(
        worker,
        site,
        "discipline",
        "Hậu quả khi nhân viên đi muộn: khiển trách, ảnh hưởng xét thưởng",
        "internal",
        "hr",
        "2026-10-01T00:00:00Z",
    );
    wait_indexed(worker, site, 4);
}

/// `POST /conversations` then one message, with the secret key and `identity` in the
/// creation body (or anonymous).
pub(super) fn ask(
    worker: &Worker,
    site: &TestSite,
    identity: Option<Value>,
    text: &str,
) -> (String, Vec<ReceivedEvent>) {
    let (status, body) = admin(
        worker,
        site,
        "POST",
        "/conversations",
        identity.unwrap_or(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let id = serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    let response = agent()
        .post(&worker.url(&format!("/conversations/{id}/messages")))
        .set("x-api-key", &site.secret_key)
        .send_json(json!({"content": text}))
        .expect("turn");
    (id, read_events(response.into_reader()))
}

pub(super) fn streamed(events: &[ReceivedEvent]) -> String {
    events
        .iter()
        .filter(|e| e.event.is_empty())
        .map(|e| {
            serde_json::from_str::<Value>(&e.data).expect("chunk")["chunk"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

pub(super) fn payload(events: &[ReceivedEvent], kind: &str) -> Option<Value> {
    events
        .iter()
        .filter(|e| e.event == "payload")
        .find_map(|e| {
            let v: Value = serde_json::from_str(&e.data).expect("payload JSON");
            (v["kind"] == kind).then(|| v["data"].clone())
        })
}

pub(super) fn last_reply(worker: &Worker, site: &TestSite, conversation: &str) -> Value {
    history(worker, &site.secret_key, conversation)
        .last()
        .expect("reply")
        .clone()
}

pub(super) fn node_ids(output: &Value) -> Vec<String> {
    output["flow_action"]
        .as_array()
        .expect("trace")
        .iter()
        .map(|e| e["node_id"].as_str().expect("id").to_string())
        .collect()
}

pub(super) fn slow(text: &str, ms: u64) -> Reply {
    Reply::Tokens {
        tokens: vec![text.to_string()],
        first_token_after: Duration::from_millis(ms),
        between: Duration::ZERO,
    }
}

#[test]
fn the_seed_plan_runs_with_its_trace_a_resolved_conflict_and_progress_before_the_answer() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    demo_documents(worker, &site);
    upstream.push_for(ROUTER, Reply::text(SEED_PLAN));
    upstream.push_for(
        "Task: general#rag\n",
        Reply::text("Công ty có 4 giá trị cốt lõi."),
    );
    // As in the seed's trace, hr answers after general (the trace is in completion order).
    upstream.push_for("Task: hr#rag:1\n", slow("Đi muộn bị trừ KPI.", 400));
    upstream.push_for("Task: hr#rag:2\n", Reply::text("Có thể bị khiển trách."));
    upstream.push_for(SUMMARY, Reply::text("Đi muộn ảnh hưởng KPI và xét thưởng."));
    upstream.push_for(FINAL, Reply::text("Công ty có 4 giá trị cốt lõi; đi muộn ảnh hưởng Kỷ luật.\n---END\nREASONING: \"Ưu tiên HR\"\nFOLLOW_UP: [\"Cụ thể có mấy giá trị cốt lõi?\"]"));
    let identity = json!({"user_id": "u-hr", "permissions": ["public", "private", "internal"], "department": "hr"});
    let (conversation, events) = ask(
        worker,
        &site,
        Some(identity),
        "giá trị cốt lõi, muộn có ảnh hưởng đến giá trị nào không",
    );
    let (kind, _) = terminal(&events);
    assert_eq!(kind, "completed", "{events:?}");
    assert_eq!(
        streamed(&events),
        "Công ty có 4 giá trị cốt lõi; đi muộn ảnh hưởng Kỷ luật."
    );
    // Progress: the seed's stages, in order, percentages never decreasing, before any chunk.
    let progress: Vec<Value> = events
        .iter()
        .filter(|e| e.event == "progress")
        .map(|e| serde_json::from_str(&e.data).expect("progress"))
        .collect();
    assert_eq!(progress.first().expect("progress")["stage"], "plan_ready");
    assert_eq!(
        progress.first().unwrap()["message"],
        "Execution plan is ready"
    );
    assert_eq!(progress.last().unwrap()["stage"], "ready_for_resolution");
    assert_eq!(
        progress.last().unwrap()["message"],
        "All tasks completed, proceeding to final response"
    );
    let percentages: Vec<f64> = progress
        .iter()
        .map(|p| p["percentage"].as_f64().expect("pct"))
        .collect();
    assert!(
        percentages.windows(2).all(|w| w[0] <= w[1]),
        "{percentages:?}"
    );
    assert_eq!(percentages.first(), Some(&75.0));
    assert_eq!(percentages.last(), Some(&95.0));
    assert_eq!(
        progress
            .iter()
            .filter(|p| p["stage"] == "task_completed")
            .count(),
        4
    );
    let first_chunk = events
        .iter()
        .position(|e| e.event.is_empty())
        .expect("chunk");
    let last_progress = events
        .iter()
        .rposition(|e| e.event == "progress")
        .expect("progress");
    assert!(last_progress < first_chunk);
    let plan = payload(&events, "plan").expect("plan payload");
    assert_eq!(plan["plan_summary"]["total_tasks"], 4);
    // The final output: the seed's trace ids, a resolved conflict, stored with the answer.
    let output = payload(&events, "final").expect("final payload");
    assert_eq!(
        node_ids(&output),
        [
            "Router",
            "PermissionCheck",
            "general#rag",
            "hr#rag:1",
            "hr#rag:2",
            "hr#summary",
            "ConflictResolver",
            "AnswerFormatter"
        ]
    );
    assert_eq!(output["flow_action"][6]["resolved_conflicts"], 2);
    assert_eq!(
        output["execution_metadata"]["conflict_resolution_applied"],
        true
    );
    assert_eq!(
        output["follow_up_questions"],
        json!(["Cụ thể có mấy giá trị cốt lõi?"])
    );
    let reply = last_reply(worker, &site, &conversation);
    assert_eq!(reply["metadata"]["flow_action"], output["flow_action"]);
    assert!(reply["metadata"]["confidence_score"].as_f64().is_some());
    // The final prompt ranks the private, newer hr policy above the old public one.
    let final_prompt = upstream
        .chat_requests()
        .into_iter()
        .find(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains(FINAL)
        })
        .expect("final request");
    assert!(
        final_prompt.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("[hr#rag:1]")
    );
}

#[test]
fn chitchat_skips_the_plan() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    upstream.push_for(ROUTER, Reply::text(r#"{"refined_query": "", "is_chitchat": true, "chitchat_response": "Xin chào! Tôi có thể giúp gì cho bạn?"}"#));
    let (_, events) = ask(worker, &site, None, "chào bạn");
    assert_eq!(terminal(&events).0, "completed");
    assert_eq!(streamed(&events), "Xin chào! Tôi có thể giúp gì cho bạn?");
    assert!(!events.iter().any(|e| e.event == "progress"));
    assert_eq!(upstream.chat_requests().len(), 1);
}

#[test]
fn a_timed_out_agent_yields_partial_results_a_fallback_and_one_terminal_event() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(
        worker,
        &upstream,
        json!({"timeout_per_agent_ms": 1000, "max_retries": 0}),
    );
    demo_documents(worker, &site);
    upstream.push_for(ROUTER, Reply::text(SEED_PLAN));
    upstream.push_for(
        "Task: general#rag\n",
        Reply::text("Công ty có 4 giá trị cốt lõi."),
    );
    upstream.push_for(
        "Task: hr#rag:1\n",
        Reply::Stall(Duration::from_millis(2500)),
    );
    upstream.push_for("Task: hr#rag:2\n", Reply::text("Có thể bị khiển trách."));
    upstream.push_for(SUMMARY, Reply::text("Tóm tắt."));
    upstream.push_for(
        FINAL,
        Reply::text("Dựa trên thông tin có sẵn, công ty có 4 giá trị cốt lõi."),
    );
    let identity = json!({"user_id": "u-1", "permissions": ["private", "internal"]});
    let started = Instant::now();
    let (conversation, events) = ask(worker, &site, Some(identity), "giá trị cốt lõi, đi muộn?");
    assert!(started.elapsed() < Duration::from_secs(20));
    let (kind, _) = terminal(&events);
    assert_eq!(kind, "completed");
    assert_eq!(
        streamed(&events),
        "Dựa trên thông tin có sẵn, công ty có 4 giá trị cốt lõi."
    );
    let error = payload(&events, "final").expect("error payload");
    assert_eq!(error["type"], "error");
    assert_eq!(error["error_code"], "AGENT_EXECUTION_FAILED");
    assert_eq!(
        error["error_message"],
        "HR agent failed to execute rag_tool"
    );
    assert_eq!(error["partial_results"]["general"]["status"], "success");
    assert_eq!(
        error["partial_results"]["hr"],
        json!({"status": "failed", "error": "Tool timeout"})
    );
    assert_eq!(
        error["flow_action"][0]["error_details"]["error_type"],
        "timeout"
    );
    let reply = last_reply(worker, &site, &conversation);
    assert_eq!(reply["metadata"]["partial"], true);
    assert_eq!(
        reply["content"],
        "Dựa trên thông tin có sẵn, công ty có 4 giá trị cốt lõi."
    );
    let _ = fixed_sentence("knowledge_fixed_vi.md", "partial_fallback");
}

#[test]
fn an_invalid_plan_is_repaired_by_asking_once_more() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    demo_documents(worker, &site);
    upstream.push_for(ROUTER, Reply::text("Kế hoạch: hỏi hr về đi muộn."));
    upstream.push_for(
        ROUTER,
        Reply::text(&format!(
            "```json\n{}\n```",
            one_task_plan("hr", "rag_tool", "đi muộn ảnh hưởng công việc")
        )),
    );
    upstream.push_for(RAG, Reply::text("Trừ KPI."));
    upstream.push_for(FINAL, Reply::text("Đi muộn bị trừ KPI."));
    let (_, events) = ask(worker, &site, None, "đi muộn thì sao");
    assert_eq!(terminal(&events).0, "completed");
    let output = payload(&events, "final").expect("final");
    assert_eq!(output["execution_metadata"]["plan_repaired"], true);
    assert_eq!(node_ids(&output)[2], "hr#rag");
    let routers = upstream
        .chat_requests()
        .iter()
        .filter(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains(ROUTER)
        })
        .count();
    assert_eq!(routers, 2);
}

mod access;
mod logs;
