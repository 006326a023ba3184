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

const ROUTER: &str = "Reflection Semantic Router";
const RAG: &str = "(rag_tool).";
const SUMMARY: &str = "(summary_tool).";
const FINAL: &str = "AnswerFormatter";
const ORIGIN: &str = "https://shop.example";

/// Seed 003 §2.1's plan.
const SEED_PLAN: &str = r#"{"original_query":"giá trị cốt lõi, muộn có ảnh hưởng đến giá trị nào không",
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

fn one_task_plan(agent: &str, tool: &str, query: &str) -> String {
    json!({"refined_query": query,
        "agents": {agent: {"queries": [{"1": query}], "tools": [tool]}},
        "execution_flow": {"planning": {"tasks": [{"1": [{"agent": agent, "tool": tool, "message": "Tra cứu", "status": "pending"}]}]}}})
    .to_string()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A user token as the merchant's backend mints it.
fn mint(secret: &str, claims: &Value) -> String {
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC key");
    mac.update(payload.as_bytes());
    format!(
        "{payload}.{}",
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

fn admin(worker: &Worker, site: &TestSite, method: &str, path: &str, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .request(method, &worker.url(path))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

/// A `knowledge` site on `upstream`, every relevance kept (hashed test embeddings score
/// low), with `workflow` overrides.
fn knowledge_site(worker: &Worker, upstream: &ScriptedUpstream, workflow: Value) -> TestSite {
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

fn put_document(
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

fn wait_indexed(worker: &Worker, site: &TestSite, count: usize) {
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

fn demo_documents(worker: &Worker, site: &TestSite) {
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
fn ask(
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

fn streamed(events: &[ReceivedEvent]) -> String {
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

fn payload(events: &[ReceivedEvent], kind: &str) -> Option<Value> {
    events
        .iter()
        .filter(|e| e.event == "payload")
        .find_map(|e| {
            let v: Value = serde_json::from_str(&e.data).expect("payload JSON");
            (v["kind"] == kind).then(|| v["data"].clone())
        })
}

fn last_reply(worker: &Worker, site: &TestSite, conversation: &str) -> Value {
    history(worker, &site.secret_key, conversation)
        .last()
        .expect("reply")
        .clone()
}

fn node_ids(output: &Value) -> Vec<String> {
    output["flow_action"]
        .as_array()
        .expect("trace")
        .iter()
        .map(|e| e["node_id"].as_str().expect("id").to_string())
        .collect()
}

fn slow(text: &str, ms: u64) -> Reply {
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

/// An anonymous visitor, a token with `internal`, and a token with `private` + `hr` ask
/// the same question twice: each answer's evidence comes only from documents they may
/// read, and the cache serves the repeat without a model call, never across scopes.
#[test]
fn permissions_decide_the_evidence_including_through_the_cache() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    demo_documents(worker, &site);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/user-token-secret"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 201, "{body}");
    let secret = serde_json::from_str::<Value>(&body).unwrap()["user_token_secret"]
        .as_str()
        .unwrap()
        .to_string();
    let question = "đi muộn ảnh hưởng công việc quy định công ty";
    let plan = one_task_plan("hr", "rag_tool", question);
    let cases: [(Option<Value>, &[&str]); 3] = [
        (None, &["punctuality-old"]),
        (
            Some(json!({"sub": "u-int", "permissions": ["internal"]})),
            &["discipline", "punctuality-old"],
        ),
        (
            Some(json!({"sub": "u-hr", "permissions": ["private"], "department": "hr"})),
            &["punctuality", "punctuality-old"],
        ),
    ];
    for (claims, allowed) in cases {
        let token = claims.map(|mut c| {
            c["exp"] = (now_secs() + 600).into();
            mint(&secret, &c)
        });
        for round in 0..2 {
            let before = upstream.chat_requests().len();
            if round == 0 {
                upstream.push_for(ROUTER, Reply::text(&plan));
                upstream.push_for(RAG, Reply::text("Theo tài liệu."));
                upstream.push_for(FINAL, Reply::text("Câu trả lời."));
            }
            let with = |r: ureq::Request| {
                let r = r.set("x-api-key", &site.public_key).set("origin", ORIGIN);
                match &token {
                    Some(t) => r.set("x-user-token", t),
                    None => r,
                }
            };
            let (status, body) =
                into_parts(with(agent().post(&worker.url("/conversations"))).send_json(json!({})));
            assert_eq!(status, 201, "{body}");
            let id = serde_json::from_str::<Value>(&body).unwrap()["conversation_id"]
                .as_str()
                .unwrap()
                .to_string();
            let response =
                with(agent().post(&worker.url(&format!("/conversations/{id}/messages"))))
                    .send_json(json!({"content": question}))
                    .expect("turn");
            let events = read_events(response.into_reader());
            assert_eq!(terminal(&events).0, "completed", "{events:?}");
            let calls = upstream.chat_requests().len() - before;
            if round == 1 {
                assert_eq!(calls, 0, "served from the cache for {allowed:?}");
            } else {
                assert_eq!(
                    calls, 3,
                    "answered afresh for {allowed:?} (no other scope's cache)"
                );
                let rag = upstream
                    .chat_requests()
                    .into_iter()
                    .rev()
                    .find(|r| {
                        r.body["messages"][0]["content"]
                            .as_str()
                            .unwrap_or("")
                            .contains(RAG)
                    })
                    .unwrap();
                let prompt = rag.body["messages"][0]["content"]
                    .as_str()
                    .unwrap()
                    .to_string();
                assert_eq!(
                    prompt.contains("trừ KPI"),
                    allowed.contains(&"punctuality"),
                    "{prompt}"
                );
                assert_eq!(
                    prompt.contains("khiển trách"),
                    allowed.contains(&"discipline"),
                    "{prompt}"
                );
            }
            let stored = last_reply(worker, &site, &id);
            let ids: Vec<&str> = stored["metadata"]["document_ids"]
                .as_array()
                .expect("ids")
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert!(!ids.is_empty());
            for id in &ids {
                assert!(allowed.contains(id), "{id} outside {allowed:?}");
            }
            for e in stored["metadata"]["evidence"].as_array().expect("evidence") {
                assert!(allowed.contains(&e["document_id"].as_str().unwrap()), "{e}");
            }
        }
    }
    // A knowledge change invalidates the cache.
    put_document(
        worker,
        &site,
        "new-rule",
        "Đi muộn quy định mới",
        "public",
        "hr",
        "2026-11-22T00:00:00Z",
    );
    wait_indexed(worker, &site, 5);
    upstream.push_for(ROUTER, Reply::text(&plan));
    upstream.push_for(RAG, Reply::text("Mới."));
    upstream.push_for(FINAL, Reply::text("Quy định mới."));
    let (_, events) = ask(worker, &site, None, question);
    assert_eq!(streamed(&events), "Quy định mới.");
}

#[test]
fn log_search_runs_over_uploaded_logs_with_full_text_search() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    let lines = [
        json!({"ts": "2026-11-20T10:00:00Z", "level": "ERROR", "source": "vpn-gw", "message": "VPN login failed for user an.nguyen: bad password"}),
        json!({"ts": "2026-11-20T11:00:00Z", "level": "INFO", "source": "mail", "message": "mailbox quota ok"}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (status, text) = into_parts(
        agent()
            .request("PUT", &worker.url("/admin/logs"))
            .set("x-api-key", &site.secret_key)
            .send_string(&body),
    );
    assert_eq!(status, 200, "{text}");
    let (status, _) = into_parts(
        agent()
            .request("PUT", &worker.url("/admin/logs"))
            .set("x-api-key", &site.secret_key)
            .send_string("not json\n"),
    );
    assert_eq!(status, 400);
    upstream.push_for(
        ROUTER,
        Reply::text(&one_task_plan("it", "log_tool", "VPN login failed")),
    );
    upstream.push_for(FINAL, Reply::text("Có lỗi đăng nhập VPN."));
    let identity = json!({"user_id": "u-it", "permissions": ["internal"]});
    let (conversation, events) = ask(worker, &site, Some(identity), "VPN login failed?");
    assert_eq!(terminal(&events).0, "completed");
    let output = payload(&events, "final").expect("final");
    assert_eq!(node_ids(&output)[2], "it#log");
    let final_prompt = upstream
        .chat_requests()
        .into_iter()
        .rev()
        .find(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains(FINAL)
        })
        .unwrap();
    let prompt = final_prompt.body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("VPN login failed for user an.nguyen"),
        "{prompt}"
    );
    assert!(!prompt.contains("mailbox"), "{prompt}");
    let reply = last_reply(worker, &site, &conversation);
    assert_eq!(reply["metadata"]["evidence"][0]["source_type"], "log");
}

/// Benchmark (printed): a three-task stage's wall time under `wrangler dev` with a
/// scripted upstream of fixed latency must stay within 1.3× of its slowest task.
#[test]
#[allow(clippy::print_stdout, reason = "a benchmark prints its figure")]
fn bench_a_three_task_stage_overlaps() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    put_document(
        worker,
        &site,
        "a",
        "chính sách nghỉ phép năm",
        "public",
        "general",
        "2026-11-01T00:00:00Z",
    );
    put_document(
        worker,
        &site,
        "b",
        "chính sách nghỉ phép hr",
        "public",
        "hr",
        "2026-11-01T00:00:00Z",
    );
    put_document(
        worker,
        &site,
        "c",
        "chính sách bảo mật it",
        "public",
        "it",
        "2026-11-01T00:00:00Z",
    );
    wait_indexed(worker, &site, 3);
    let latency = 1500;
    let plan = json!({"refined_query": "nghỉ phép",
        "agents": {"general": {"queries": [{"1": "nghỉ phép"}], "tools": ["rag_tool"]},
                   "hr": {"queries": [{"1": "nghỉ phép"}], "tools": ["rag_tool"]},
                   "it": {"queries": [{"1": "bảo mật"}], "tools": ["rag_tool"]}},
        "execution_flow": {"planning": {"tasks": [{"1": [
            {"agent": "general", "tool": "rag_tool", "message": "a", "status": "pending"},
            {"agent": "hr", "tool": "rag_tool", "message": "b", "status": "pending"},
            {"agent": "it", "tool": "rag_tool", "message": "c", "status": "pending"}]}]}}})
    .to_string();
    upstream.push_for(ROUTER, Reply::text(&plan));
    for node in ["general#rag", "hr#rag", "it#rag"] {
        upstream.push_for(&format!("Task: {node}\n"), slow("ok", latency));
    }
    upstream.push_for(FINAL, Reply::text("Xong."));
    let (_, events) = ask(worker, &site, None, "nghỉ phép");
    assert_eq!(terminal(&events).0, "completed");
    let at = |stage: &str, last: bool| {
        let mut it = events.iter().filter(|e| {
            e.event == "progress" && e.data.contains(&format!("\"stage\":\"{stage}\""))
        });
        if last { it.next_back() } else { it.next() }
            .expect(stage)
            .arrived
    };
    let wall = at("task_completed", true).duration_since(at("executing_task", false));
    let ratio = wall.as_secs_f64() / (latency as f64 / 1000.0);
    println!(
        "knowledge stage bench: 3 tasks × {latency} ms upstream latency → stage wall time {} ms = {ratio:.2}× the slowest task (target ≤ 1.30×)",
        wall.as_millis()
    );
    assert!(ratio <= 1.3, "the tasks did not overlap: {ratio:.2}×");
}

#[test]
fn the_direct_json_interface_takes_the_seed_input_and_streams_its_node_outputs() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    demo_documents(worker, &site);
    let question = "đi muộn ảnh hưởng công việc quy định công ty";
    let input = json!({
        "query": question,
        "history_chat": [{"role": "user", "content": "chào", "timestamp": "2026-11-22T00:00:00Z"}],
        "user_context": {"user_id": "uuid-1", "tenant_id": site.id, "permissions": ["public", "private"], "department": "hr"},
        "agents": {"hr": {"desc": "…", "tools": [{"name": "rag_tool", "description": "…"}, {"name": "log_tool", "description": "not configured for hr"}]}},
    });
    let post = |body: &Value, key: &str, accept: &str| {
        into_parts(
            agent()
                .post(&worker.url("/knowledge/query"))
                .set("x-api-key", key)
                .set("accept", accept)
                .send_json(body.clone()),
        )
    };
    // JSON in, the seed's final output out.
    upstream.push_for(
        ROUTER,
        Reply::text(&one_task_plan("hr", "rag_tool", question)),
    );
    upstream.push_for(RAG, Reply::text("Trừ KPI."));
    upstream.push_for(
        FINAL,
        Reply::text("Đi muộn bị trừ KPI.\n---END\nREASONING: \"HR\"\nFOLLOW_UP: []"),
    );
    let (status, body) = post(&input, &site.secret_key, "application/json");
    assert_eq!(status, 200, "{body}");
    let output: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(output["answer"], "Đi muộn bị trừ KPI.");
    for key in [
        "evidence",
        "reasoning",
        "confidence_score",
        "follow_up_questions",
        "flow_action",
        "execution_metadata",
    ] {
        assert!(output.get(key).is_some(), "{key} in {output}");
    }
    assert_eq!(
        output["flow_action"][1]["details"]["scope"],
        json!(["private", "public"])
    );
    for e in output["evidence"].as_array().expect("evidence") {
        assert!(
            ["punctuality", "punctuality-old"].contains(&e["document_id"].as_str().unwrap()),
            "{e}"
        );
    }
    // The planner was offered only the agent the input named, without a tool it lacks.
    let router = upstream
        .chat_requests()
        .into_iter()
        .find(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains(ROUTER)
        })
        .unwrap();
    let prompt = router.body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("- hr:") && !prompt.contains("- general:") && !prompt.contains("log_tool"),
        "{prompt}"
    );
    // Streamed: the seed's node outputs, then the final output.
    let plan = json!({"refined_query": question,
        "agents": {"hr": {"queries": [{"1": question}], "tools": ["rag_tool"]}},
        "execution_flow": {"planning": {"tasks": [{"1": [{"agent": "hr", "tool": "rag_tool", "purpose": "Tìm nội quy", "message": "Tra cứu", "status": "pending"}]}]}}}).to_string();
    upstream.push_for(ROUTER, Reply::text(&plan));
    upstream.push_for(RAG, Reply::text("Trừ KPI."));
    upstream.push_for(FINAL, Reply::text("Đi muộn bị trừ KPI (luồng)."));
    let mut streamed_input = input.clone();
    streamed_input["query"] = "đi muộn ảnh hưởng công việc quy định công ty?".into();
    let response = agent()
        .post(&worker.url("/knowledge/query"))
        .set("x-api-key", &site.secret_key)
        .set("accept", "text/event-stream")
        .send_json(streamed_input)
        .expect("stream");
    let events = read_events(response.into_reader());
    let data: Vec<Value> = events
        .iter()
        .map(|e| serde_json::from_str(&e.data).expect("data JSON"))
        .collect();
    let statuses: Vec<&str> = data
        .iter()
        .filter(|d| d["node"] == "execute_planning")
        .map(|d| d["output"]["processing_status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "plan_ready",
            "executing_task",
            "task_completed",
            "ready_for_resolution"
        ]
    );
    assert_eq!(data[0]["output"]["plan_summary"]["total_tasks"], 1);
    assert_eq!(
        data[1]["output"]["progress_message"],
        "Task 1/1: Tìm nội quy"
    );
    assert_eq!(data[1]["output"]["current_task"]["agent"], "hr");
    assert_eq!(data[2]["output"]["completed_task"]["status"], "completed");
    assert_eq!(data[2]["output"]["progress_percentage"], 95.0);
    let last = data.last().expect("final output");
    assert_eq!(last["answer"], "Đi muộn bị trừ KPI (luồng).");
    assert!(last["flow_action"].is_array());
    // Another tenant is refused; a public key cannot call it.
    let mut other = input.clone();
    other["user_context"]["tenant_id"] = "site_someone_else".into();
    assert_eq!(post(&other, &site.secret_key, "application/json").0, 403);
    assert_eq!(post(&input, &site.public_key, "application/json").0, 403);
}
