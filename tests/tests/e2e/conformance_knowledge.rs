//! Issue 27, `knowledge` (seed 003) through the real Worker with a scripted upstream:
//! - the seed's own §9.1 plan runs as the seed's §9.2 stream shows it: 3 tasks, progress
//!   75 → 81.7 → 88.3 → 95; hr's query 2 (no `rag_tool` task of its own) feeds hr's math
//!   task instead of becoming a fourth task (TEMPLATES.md §3.2, amended mapping rule);
//! - a chitchat reply carries `execution_metadata` (no queries, no agents);
//! - a router reply that is not JSON (twice) leaves `plan_fallback: true` on the Router
//!   trace entry; a usable plan leaves it `false`;
//! - every task's attempts are in the trace (retried tasks included, failed ones on the
//!   ErrorHandler entry).

#![allow(clippy::unwrap_used)]

use concierge_e2e::api::terminal;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{ReceivedEvent, Worker, agent, read_events};
use serde_json::{Value, json};

use super::knowledge::{
    FINAL, RAG, ROUTER, SUMMARY, admin, ask, knowledge_site, last_reply, node_ids, payload,
    put_document, streamed, wait_indexed,
};

const MATH: &str = "(math_tool).";

/// Seed 003 §9.1's plan, verbatim (one object per stage).
const SEED_PLAN_91: &str = r#"{
  "original_query": "Tính toán chi phí nghỉ phép và so sánh với chính sách công ty",
  "refined_query": "Tính toán chi phí nghỉ phép và so sánh với chính sách công ty",
  "agents": {
    "hr": {
      "queries": [
        {"1": "Tìm chính sách nghỉ phép của công ty"},
        {"2": "Tính toán chi phí nghỉ phép dựa trên lương cơ bản"}
      ],
      "tools": ["rag_tool", "math_tool"],
      "sequential_tools": ["rag_tool", "summary_tool", "math_tool"]
    }
  },
  "execution_flow": {
    "planning": {
      "tasks": [
        {"1": [{"agent": "hr", "tool": "rag_tool",
                "purpose": "Tìm kiếm và thu thập thông tin về chính sách nghỉ phép từ cơ sở dữ liệu công ty",
                "message": "Tìm kiếm chính sách nghỉ phép, quyền lợi và quy định liên quan", "status": "pending"}]},
        {"2": [{"agent": "hr", "tool": "summary_tool",
                "purpose": "Phân tích và tóm tắt các chính sách đã tìm được để hiểu rõ quyền lợi",
                "message": "Tóm tắt các chính sách nghỉ phép quan trọng và quyền lợi liên quan", "status": "pending"}]},
        {"3": [{"agent": "hr", "tool": "math_tool",
                "purpose": "Tính toán chi phí nghỉ phép dựa trên lương và số ngày nghỉ",
                "message": "Tính toán chi phí nghỉ phép dựa trên lương cơ bản và số ngày nghỉ", "status": "pending"}]}
      ],
      "aggregate_status": "pending"
    },
    "conflict_resolution": "Chọn kết quả có độ tin cậy cao nhất và thông tin đầy đủ nhất"
  }
}"#;

const QUERY_91: &str = "Tính toán chi phí nghỉ phép và so sánh với chính sách công ty";
const P1: &str = "Tìm kiếm và thu thập thông tin về chính sách nghỉ phép từ cơ sở dữ liệu công ty";
const P2: &str = "Phân tích và tóm tắt các chính sách đã tìm được để hiểu rõ quyền lợi";
const P3: &str = "Tính toán chi phí nghỉ phép dựa trên lương và số ngày nghỉ";

fn progress(events: &[ReceivedEvent]) -> Vec<(String, f64, String)> {
    events
        .iter()
        .filter(|e| e.event == "progress")
        .map(|e| {
            let p: Value = serde_json::from_str(&e.data).expect("progress");
            (
                p["stage"].as_str().expect("stage").to_string(),
                p["percentage"].as_f64().expect("pct"),
                p["message"].as_str().expect("message").to_string(),
            )
        })
        .collect()
}

fn requests_with(upstream: &ScriptedUpstream, marker: &str) -> Vec<Value> {
    upstream
        .chat_requests()
        .into_iter()
        .filter(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains(marker)
        })
        .map(|r| r.body)
        .collect()
}

fn script_91(upstream: &ScriptedUpstream) {
    upstream.push_for(ROUTER, Reply::text(SEED_PLAN_91));
    upstream.push_for(
        RAG,
        Reply::text("12 ngày phép năm; lương cơ bản 10.000.000."),
    );
    upstream.push_for(SUMMARY, Reply::text("Nhân viên có 12 ngày phép năm."));
    upstream.push_for(MATH, Reply::text("EXPRESSION: 10000000 / 26 * 12"));
    upstream.push_for(
        FINAL,
        Reply::text(
            "Chi phí nghỉ phép khoảng 4.615.385 đồng.\n---END\nREASONING: \"HR\"\nFOLLOW_UP: []",
        ),
    );
}

#[test]
fn the_seed_91_plan_runs_as_three_tasks_with_the_seeds_progress() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({"enable_caching": false}));
    put_document(
        worker,
        &site,
        "leave",
        "Chính sách nghỉ phép: 12 ngày phép năm, lương cơ bản 10000000",
        "internal",
        "hr",
        "2026-11-01T00:00:00Z",
    );
    wait_indexed(worker, &site, 1);
    script_91(&upstream);
    let identity =
        json!({"user_id": "u-hr", "permissions": ["public", "internal"], "department": "hr"});
    let (conversation, events) = ask(worker, &site, Some(identity), QUERY_91);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let seen = progress(&events);
    let want = [
        ("plan_ready", 75.0, "Execution plan is ready".to_string()),
        ("executing_task", 75.0, format!("Task 1/3: {P1}")),
        ("task_completed", 81.7, format!("Completed 1/3: {P1}")),
        ("executing_task", 81.7, format!("Task 2/3: {P2}")),
        ("task_completed", 88.3, format!("Completed 2/3: {P2}")),
        ("executing_task", 88.3, format!("Task 3/3: {P3}")),
        ("task_completed", 95.0, format!("Completed 3/3: {P3}")),
        (
            "ready_for_resolution",
            95.0,
            "All tasks completed, proceeding to final response".to_string(),
        ),
    ]
    .map(|(s, p, m)| (s.to_string(), p, m));
    assert_eq!(seen, want);
    let plan = payload(&events, "plan").expect("plan payload");
    assert_eq!(plan["plan_summary"]["total_tasks"], 3);
    let tools: Vec<&str> = plan["plan_summary"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["rag_tool", "summary_tool", "math_tool"]);
    // hr's query 2 fed its math task; query 1 its retrieval.
    let math = requests_with(&upstream, MATH);
    assert_eq!(math.len(), 1);
    let math_text = math[0]["messages"].to_string();
    assert!(
        math_text.contains("Tính toán chi phí nghỉ phép dựa trên lương cơ bản\\n")
            || math_text.contains("Tính toán chi phí nghỉ phép dựa trên lương cơ bản\""),
        "{math_text}"
    );
    let rag = requests_with(&upstream, RAG);
    assert_eq!(rag.len(), 1);
    assert_eq!(
        rag[0]["messages"][1]["content"],
        "Tìm chính sách nghỉ phép của công ty"
    );
    let output = payload(&events, "final").expect("final payload");
    assert_eq!(
        node_ids(&output),
        [
            "Router",
            "PermissionCheck",
            "hr#rag",
            "hr#summary",
            "hr#math",
            "ConflictResolver",
            "AnswerFormatter"
        ]
    );
    assert_eq!(output["execution_metadata"]["total_tasks"], 3);
    let reply = last_reply(worker, &site, &conversation);
    assert_eq!(reply["metadata"]["flow_action"], output["flow_action"]);

    // The seed's direct interface streams §9.2's node outputs for the same plan.
    script_91(&upstream);
    let response = agent()
        .post(&worker.url("/knowledge/query"))
        .set("x-api-key", &site.secret_key)
        .set("accept", "text/event-stream")
        .send_json(json!({"query": QUERY_91,
            "user_context": {"user_id": "u-hr", "permissions": ["public", "internal"], "department": "hr"}}))
        .expect("stream");
    let data: Vec<Value> = read_events(response.into_reader())
        .iter()
        .map(|e| serde_json::from_str(&e.data).expect("data JSON"))
        .collect();
    let nodes: Vec<(String, f64)> = data
        .iter()
        .filter(|d| d["node"] == "execute_planning")
        .map(|d| {
            (
                d["output"]["processing_status"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                d["output"]["progress_percentage"].as_f64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, f64)> = [
        ("plan_ready", 75.0),
        ("executing_task", 75.0),
        ("task_completed", 81.7),
        ("executing_task", 81.7),
        ("task_completed", 88.3),
        ("executing_task", 88.3),
        ("task_completed", 95.0),
        ("ready_for_resolution", 95.0),
    ]
    .iter()
    .map(|(s, p)| (s.to_string(), *p))
    .collect();
    assert_eq!(nodes, want);
    assert_eq!(data[0]["output"]["plan_summary"]["total_tasks"], 3);
    assert_eq!(data[5]["output"]["current_task"]["tool"], "math_tool");
}

#[test]
fn chitchat_carries_execution_metadata_a_non_json_router_reply_is_a_fallback_and_attempts_are_traced()
 {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(
        worker,
        &upstream,
        json!({"enable_caching": false, "max_retries": 1}),
    );
    put_document(
        worker,
        &site,
        "leave",
        "Chính sách nghỉ phép: 12 ngày phép năm, lương cơ bản 10000000",
        "public",
        "hr",
        "2026-11-01T00:00:00Z",
    );
    wait_indexed(worker, &site, 1);

    // Chitchat: execution_metadata with no queries and no agents, in the final payload
    // and on the stored reply.
    upstream.push_for(ROUTER, Reply::text(r#"{"refined_query": "", "is_chitchat": true, "chitchat_response": "Xin chào! Tôi có thể giúp gì cho bạn?"}"#));
    let (conversation, events) = ask(worker, &site, None, "chào bạn");
    assert_eq!(streamed(&events), "Xin chào! Tôi có thể giúp gì cho bạn?");
    assert!(!events.iter().any(|e| e.event == "progress"));
    let reply = last_reply(worker, &site, &conversation);
    let meta = &reply["metadata"]["execution_metadata"];
    assert_eq!(meta["total_queries"], 0, "{reply}");
    assert_eq!(meta["agents_invoked"], json!([]), "{reply}");
    assert_eq!(meta["tools_executed"], json!([]), "{reply}");
    let output = payload(&events, "final").expect("final payload");
    assert_eq!(output["execution_metadata"]["total_queries"], 0);
    assert_eq!(output["execution_metadata"]["agents_invoked"], json!([]));
    assert_eq!(output["flow_action"][0]["metadata"]["decision"], "chitchat");
    // The direct interface's chitchat output carries it too.
    upstream.push_for(
        ROUTER,
        Reply::text(
            r#"{"refined_query": "", "is_chitchat": true, "chitchat_response": "Xin chào!"}"#,
        ),
    );
    let (status, body) = admin(
        worker,
        &site,
        "POST",
        "/knowledge/query",
        json!({"query": "xin chào"}),
    );
    assert_eq!(status, 200, "{body}");
    let direct: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(direct["answer"], "Xin chào!");
    assert_eq!(direct["is_chitchat"], true);
    assert_eq!(direct["execution_metadata"]["total_queries"], 0, "{direct}");

    // Not JSON, asked again, still not JSON: the direct plan, flagged on the Router entry.
    upstream.push_for(ROUTER, Reply::text("Kế hoạch: hỏi hr về nghỉ phép."));
    upstream.push_for(ROUTER, Reply::text("Vẫn không phải JSON."));
    upstream.push_for(RAG, Reply::text("12 ngày phép năm."));
    upstream.push_for(FINAL, Reply::text("Có 12 ngày phép năm."));
    let (_, events) = ask(worker, &site, None, "nghỉ phép bao nhiêu ngày");
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let output = payload(&events, "final").expect("final");
    let router = &output["flow_action"][0];
    assert_eq!(router["node_id"], "Router");
    assert_eq!(router["metadata"]["plan_fallback"], true, "{router}");
    assert_eq!(router["metadata"]["decision"], "reflection_needed");
    assert_eq!(node_ids(&output)[2], "general#rag");

    // A usable plan: no fallback. A math task whose first expression is unusable is
    // retried: its entry says 2 attempts, the others 1.
    let plan = json!({"refined_query": "chi phí nghỉ phép",
        "agents": {"hr": {"queries": [{"1": "chính sách nghỉ phép"}], "tools": ["rag_tool", "math_tool"]}},
        "execution_flow": {"planning": {"tasks": [
            {"1": [{"agent": "hr", "tool": "rag_tool", "message": "Tra cứu", "status": "pending"}]},
            {"2": [{"agent": "hr", "tool": "math_tool", "message": "Tính chi phí", "status": "pending"}]}]}}})
    .to_string();
    upstream.push_for(ROUTER, Reply::text(&plan));
    upstream.push_for(RAG, Reply::text("12 ngày phép, lương 10.000.000."));
    upstream.push_for(MATH, Reply::text("Tôi không chắc."));
    upstream.push_for(MATH, Reply::text("EXPRESSION: 10000000 / 26 * 12"));
    upstream.push_for(FINAL, Reply::text("Khoảng 4.615.385 đồng."));
    let (_, events) = ask(worker, &site, None, "chi phí nghỉ phép là bao nhiêu");
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let output = payload(&events, "final").expect("final");
    assert_eq!(output["flow_action"][0]["metadata"]["plan_fallback"], false);
    let attempts: Vec<(String, Value)> = output["flow_action"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "agent_tool")
        .map(|e| {
            (
                e["node_id"].as_str().unwrap().to_string(),
                e["attempts"].clone(),
            )
        })
        .collect();
    assert_eq!(
        attempts,
        [
            ("hr#rag".to_string(), json!(1)),
            ("hr#math".to_string(), json!(2))
        ]
    );

    // A task that fails every attempt: its attempts on the ErrorHandler entry.
    upstream.push_for(ROUTER, Reply::text(&plan));
    upstream.push_for(RAG, Reply::text("12 ngày phép, lương 10.000.000 (lần 2)."));
    upstream.push_for(MATH, Reply::text("Không biết."));
    upstream.push_for(MATH, Reply::text("Vẫn không biết."));
    upstream.push_for(FINAL, Reply::text("Chưa tính được chi phí."));
    let (_, events) = ask(worker, &site, None, "chi phí nghỉ phép năm nay");
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let error = payload(&events, "final").expect("error payload");
    assert_eq!(error["type"], "error", "{error}");
    let details = &error["flow_action"][0]["error_details"];
    assert_eq!(details["failed_tool"], "math_tool", "{error}");
    assert_eq!(details["attempts"], 2, "{error}");
}
