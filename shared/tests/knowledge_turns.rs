//! `knowledge` (seed 003) turns on the in-memory platform with a scripted model answering
//! by marker: the seed's plans run and produce its trace, progress and a resolved
//! conflict; chitchat skips the plan; a timed-out agent yields partial results and a
//! fallback; an invalid plan is re-asked once; the answer cache serves a repeated
//! question without a model call and never across scopes; every answer and piece of
//! evidence comes only from documents the visitor may read.
#![allow(clippy::unwrap_used)]

mod knowledge;

use concierge_core::conversation::Language;
use concierge_core::flows::knowledge::{
    CHITCHAT_RESPONSE, FINAL_MARKER, RAG_MARKER, ROUTER_MARKER, SUMMARY_MARKER, sentence,
};
use concierge_core::memory::MemoryBackend;
use concierge_core::turn::TurnEvent;
use knowledge::*;
use serde_json::Value;

/// Seed 003 §2.1's plan, verbatim.
const SEED_PLAN: &str = r#"{
  "original_query": "giá trị cốt lõi, muộn có ảnh hưởng đến giá trị nào không",
  "refined_query": "Công ty có bao nhiêu giá trị cốt lõi, và việc đi muộn có ảnh hưởng đến giá trị nào không?",
  "agents": {
    "general": {"queries": [{"1": "Giá trị cốt lõi của công ty là gì?"}], "tools": ["rag_tool"]},
    "hr": {"queries": [{"1": "Đi muộn có những ảnh hưởng gì đến công việc và quy định công ty?"},
                       {"2": "Hậu quả hoặc vấn đề khi nhân viên đi muộn"}],
           "tools": ["rag_tool", "summary_tool"]}
  },
  "permission": {"user_access": ["public", "private"]},
  "execution_flow": {
    "planning": {
      "tasks": [{
        "1": [{"agent": "general", "tool": "rag_tool", "message": "Truy vấn giá trị cốt lõi từ chung", "status": "pending"},
              {"agent": "hr", "tool": "rag_tool", "message": "Truy vấn nội quy và ảnh hưởng khi đi muộn", "status": "pending"}],
        "2": [{"agent": "hr", "tool": "rag_tool", "message": "Truy vấn hậu quả/vấn đề khi nhân viên đi muộn", "status": "pending"},
              {"agent": "hr", "tool": "summary_tool", "message": "Tóm tắt ảnh hưởng tổng hợp từ kết quả", "status": "pending"}],
        "3": [{"agent": "orchestrator", "tool": "summary_tool", "message": "Tổng hợp và phản hồi câu hỏi", "status": "pending"}]
      }],
      "aggregate_status": "pending"
    },
    "conflict_resolution": "So sánh kết quả giữa agents; ưu tiên HR khi liên quan quy định nội bộ"
  }
}"#;

/// Seed 003 §9.1's plan (three stages, one object per stage).
const SEED_PLAN_91: &str = r#"{
  "original_query": "Tính toán chi phí nghỉ phép và so sánh với chính sách công ty",
  "refined_query": "Tính toán chi phí nghỉ phép và so sánh với chính sách công ty",
  "agents": {"hr": {"queries": [{"1": "Tìm chính sách nghỉ phép của công ty"}, {"2": "Tính toán chi phí nghỉ phép dựa trên lương cơ bản"}],
                    "tools": ["rag_tool", "math_tool"], "sequential_tools": ["rag_tool", "summary_tool", "math_tool"]}},
  "execution_flow": {"planning": {"tasks": [
      {"1": [{"agent": "hr", "tool": "rag_tool", "purpose": "Tìm kiếm và thu thập thông tin về chính sách nghỉ phép từ cơ sở dữ liệu công ty", "message": "Tìm kiếm chính sách nghỉ phép, quyền lợi và quy định liên quan", "status": "pending"}]},
      {"2": [{"agent": "hr", "tool": "summary_tool", "purpose": "Phân tích và tóm tắt các chính sách đã tìm được để hiểu rõ quyền lợi", "message": "Tóm tắt các chính sách nghỉ phép quan trọng và quyền lợi liên quan", "status": "pending"}]},
      {"3": [{"agent": "hr", "tool": "math_tool", "purpose": "Tính toán chi phí nghỉ phép dựa trên lương và số ngày nghỉ", "message": "Tính toán chi phí nghỉ phép dựa trên lương cơ bản và số ngày nghỉ", "status": "pending"}]}
    ], "aggregate_status": "pending"},
    "conflict_resolution": "Chọn kết quả có độ tin cậy cao nhất và thông tin đầy đủ nhất"}
}"#;

const FINAL: &str = "Công ty có 4 giá trị cốt lõi. Việc đi muộn ảnh hưởng trực tiếp đến giá trị Kỷ luật.\n---END\nREASONING: \"Ưu tiên kết quả từ HR (nguồn private, cập nhật mới hơn) khi nội dung liên quan quy định nội bộ.\"\nFOLLOW_UP: [\"Cụ thể có mấy giá trị cốt lõi?\", \"Nội quy đi muộn định nghĩa thế nào (số phút, số lần)?\"]";

fn demo_documents(backend: &MemoryBackend) {
    document(
        backend,
        "core-values",
        "Giá trị cốt lõi",
        "Giá trị cốt lõi của công ty: khách hàng, chính trực, hợp tác, kỷ luật",
        "public",
        "general",
        "2025-06-10T08:00:00Z",
    );
    document(
        backend,
        "punctuality-old",
        "Nội quy đi muộn (cũ)",
        "Đi muộn ảnh hưởng công việc: nhắc nhở miệng, quy định công ty cũ",
        "public",
        "hr",
        "2023-01-01T00:00:00Z",
    );
    document(
        backend,
        "punctuality",
        "Nội quy đi muộn",
        "Đi muộn ảnh hưởng công việc và quy định công ty: trừ KPI, cảnh báo nội bộ",
        "private",
        "hr",
        "2026-11-20T00:00:00Z",
    );
    document(
        backend,
        "discipline",
        "Kỷ luật",
        "Hậu quả khi nhân viên đi muộn: khiển trách, ảnh hưởng xét thưởng",
        "internal",
        "hr",
        "2026-10-01T00:00:00Z",
    );
}

fn node_ids(trace: &Value) -> Vec<String> {
    trace
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_seed_plan_runs_in_stages_with_its_trace_ids_and_a_resolved_conflict() {
    let backend = MemoryBackend::default();
    demo_documents(&backend);
    let model = MarkerModel::new(&backend.timer);
    model.on(ROUTER_MARKER, 10, Some(SEED_PLAN));
    model.on(
        "Task: general#rag\n",
        97,
        Some("Công ty có 4 giá trị cốt lõi."),
    );
    model.on("Task: hr#rag:1\n", 143, Some("Đi muộn bị trừ KPI."));
    model.on("Task: hr#rag:2\n", 156, Some("Có thể bị khiển trách."));
    model.on(
        SUMMARY_MARKER,
        55,
        Some("Đi muộn ảnh hưởng KPI và xét thưởng."),
    );
    model.on(FINAL_MARKER, 10, Some(FINAL));
    let identity = user(&["public", "private", "internal"], Some("hr"));
    let (_, events) = turn(
        &backend,
        &model,
        &config(),
        Some(identity),
        None,
        "giá trị cốt lõi, muộn có ảnh hưởng đến giá trị nào không",
    );
    assert_eq!(terminals(&events), 1);
    assert!(
        matches!(events.last(), Some(TurnEvent::Completed { .. })),
        "{events:?}"
    );
    assert_eq!(
        text_of(&events),
        "Công ty có 4 giá trị cốt lõi. Việc đi muộn ảnh hưởng trực tiếp đến giá trị Kỷ luật."
    );
    let output = payload(&events, "final").unwrap();
    assert_eq!(
        node_ids(&output["flow_action"]),
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
    let trace = output["flow_action"].as_array().unwrap();
    assert_eq!(trace[0]["metadata"]["decision"], "reflection_needed");
    assert_eq!(
        trace[5]["depends_on"],
        serde_json::json!(["hr#rag:1", "hr#rag:2"])
    );
    assert_eq!(trace[6]["resolved_conflicts"], 2);
    assert_eq!(trace[6]["policy"], "weighted_scoring");
    assert_eq!(trace[2]["input_hash"].as_str().unwrap().len(), 64);
    let orders: Vec<u64> = trace.iter().map(|e| e["order"].as_u64().unwrap()).collect();
    assert_eq!(orders, (1..=8).collect::<Vec<_>>());
    let meta = &output["execution_metadata"];
    assert_eq!(meta["agents_invoked"], serde_json::json!(["general", "hr"]));
    assert_eq!(
        meta["tools_executed"],
        serde_json::json!(["rag_tool", "summary_tool"])
    );
    assert_eq!(meta["total_queries"], 3);
    assert_eq!(meta["conflict_resolution_applied"], true);
    assert_eq!(
        meta["accessible_departments"],
        serde_json::json!(["hr", "it", "general"])
    );
    assert_eq!(
        output["reasoning"],
        "Ưu tiên kết quả từ HR (nguồn private, cập nhật mới hơn) khi nội dung liên quan quy định nội bộ."
    );
    assert_eq!(output["follow_up_questions"].as_array().unwrap().len(), 2);
    // Stage 1's two retrieval tasks overlapped: the stage took its slowest task's time.
    // Every task ran (no orchestrator task), and the final prompt ranks the answers.
    assert_eq!(model.calls_with(RAG_MARKER), 3);
    let final_prompt = model.requests.borrow().last().unwrap().messages[0]
        .content
        .clone();
    assert!(final_prompt.contains("[hr#rag:1]"), "{final_prompt}");
}

#[test]
fn progress_follows_the_seed_stream_before_the_answer() {
    let backend = MemoryBackend::default();
    document(
        &backend,
        "leave",
        "Chính sách nghỉ phép",
        "Chính sách nghỉ phép: 12 ngày phép năm, lương cơ bản 10000000",
        "internal",
        "hr",
        "2026-11-01T00:00:00Z",
    );
    let model = MarkerModel::new(&backend.timer);
    model.on(ROUTER_MARKER, 0, Some(SEED_PLAN_91));
    model.on(
        "Task: hr#rag\n",
        20,
        Some("12 ngày phép, lương 10.000.000."),
    );
    model.on(SUMMARY_MARKER, 20, Some("Nhân viên có 12 ngày phép."));
    model.on(
        "Task: hr#math\n",
        20,
        Some("EXPRESSION: 10000000 / 26 * 12"),
    );
    model.on(
        FINAL_MARKER,
        0,
        Some("Chi phí nghỉ phép khoảng 4.615.385 đồng."),
    );
    let (_, events) = turn(
        &backend,
        &model,
        &config(),
        Some(user(&["internal"], None)),
        None,
        "Tính toán chi phí nghỉ phép và so sánh với chính sách công ty",
    );
    let progress: Vec<(String, f32, String)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Progress {
                message,
                percentage,
                stage,
            } => Some((message.clone(), percentage.unwrap(), stage.clone().unwrap())),
            _ => None,
        })
        .collect();
    let stages: Vec<&str> = progress.iter().map(|p| p.2.as_str()).collect();
    // hr's query 2 has no rag_tool task: it feeds hr's math task (TEMPLATES.md §3.2,
    // amended), so the plan stays the seed's 3 tasks (issue 27).
    assert_eq!(
        stages,
        [
            "plan_ready",
            "executing_task",
            "task_completed",
            "executing_task",
            "task_completed",
            "executing_task",
            "task_completed",
            "ready_for_resolution"
        ]
    );
    assert_eq!(progress[0].0, "Execution plan is ready");
    assert_eq!(
        progress[1].0,
        "Task 1/3: Tìm kiếm và thu thập thông tin về chính sách nghỉ phép từ cơ sở dữ liệu công ty"
    );
    assert!(progress[2].0.starts_with("Completed 1/3: "), "{progress:?}");
    let percentages: Vec<f32> = progress.iter().map(|p| p.1).collect();
    assert_eq!(
        percentages,
        [75.0, 75.0, 81.7, 81.7, 88.3, 88.3, 95.0, 95.0]
    );
    assert_eq!(
        progress[7].0,
        "All tasks completed, proceeding to final response"
    );
    let math_request = model
        .requests
        .borrow()
        .iter()
        .find(|r| r.messages[0].content.contains("Task: hr#math\n"))
        .map(|r| r.messages[1].content.clone())
        .unwrap();
    assert!(
        math_request.contains("Tính toán chi phí nghỉ phép dựa trên lương cơ bản"),
        "{math_request}"
    );
    let first_chunk = events
        .iter()
        .position(|e| matches!(e, TurnEvent::Chunk { .. }))
        .unwrap();
    let last_progress = events
        .iter()
        .rposition(|e| matches!(e, TurnEvent::Progress { .. }))
        .unwrap();
    assert!(last_progress < first_chunk);
    let plan = payload(&events, "plan").unwrap();
    assert_eq!(plan["plan_summary"]["total_tasks"], 3);
    let output = payload(&events, "final").unwrap();
    let math = output["flow_action"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["node_id"] == "hr#math")
        .unwrap()
        .clone();
    assert_eq!(math["depends_on"], serde_json::json!(["hr#rag"]));
}

#[test]
fn chitchat_skips_the_plan() {
    let backend = MemoryBackend::default();
    let model = MarkerModel::new(&backend.timer);
    model.on(ROUTER_MARKER, 0, Some(&format!("{{\"refined_query\": \"\", \"is_chitchat\": true, \"chitchat_response\": \"{CHITCHAT_RESPONSE}\"}}")));
    let (_, events) = turn(&backend, &model, &config(), None, None, "xin chào");
    assert_eq!(text_of(&events), "Xin chào! Tôi có thể giúp gì cho bạn?");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TurnEvent::Progress { .. }))
    );
    assert_eq!(model.calls(), 1);
    assert_eq!(terminals(&events), 1);
}

#[test]
fn a_timed_out_agent_yields_partial_results_and_a_fallback_answer() {
    let backend = MemoryBackend::default();
    demo_documents(&backend);
    let model = MarkerModel::new(&backend.timer);
    let mut config = config();
    config.workflow.timeout_per_agent_ms = 1000;
    config.workflow.max_retries = 1;
    model.on(ROUTER_MARKER, 0, Some(SEED_PLAN));
    model.on(
        "Task: general#rag\n",
        10,
        Some("Công ty có 4 giá trị cốt lõi."),
    );
    model.on("Task: hr#rag:1\n", 5000, Some("late"));
    model.on("Task: hr#rag:1\n", 5000, Some("late again"));
    model.on("Task: hr#rag:2\n", 10, Some("Có thể bị khiển trách."));
    model.on(SUMMARY_MARKER, 10, Some("Tóm tắt."));
    model.on(
        FINAL_MARKER,
        0,
        Some("Dựa trên thông tin có sẵn, công ty có 4 giá trị cốt lõi."),
    );
    let (_, events) = turn(
        &backend,
        &model,
        &config,
        Some(user(&["private"], None)),
        None,
        "giá trị cốt lõi, đi muộn?",
    );
    assert_eq!(terminals(&events), 1);
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    assert_eq!(
        text_of(&events),
        "Dựa trên thông tin có sẵn, công ty có 4 giá trị cốt lõi."
    );
    let error = payload(&events, "final").unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error_code"], "AGENT_EXECUTION_FAILED");
    assert_eq!(
        error["error_message"],
        "HR agent failed to execute rag_tool"
    );
    assert_eq!(error["partial_results"]["general"]["status"], "success");
    assert_eq!(
        error["partial_results"]["hr"],
        serde_json::json!({"status": "failed", "error": "Tool timeout"})
    );
    assert_eq!(error["flow_action"][0]["node_id"], "ErrorHandler");
    assert_eq!(error["flow_action"][0]["status"], "handled");
    assert_eq!(
        error["flow_action"][0]["error_details"]["error_type"],
        "timeout"
    );
    assert_eq!(
        error["fallback_answer"],
        "Dựa trên thông tin có sẵn, công ty có 4 giá trị cốt lõi."
    );
    assert_eq!(model.calls_with("Task: hr#rag:1\n"), 2, "one retry");
    // Every task failing: the product string, still completed (no cached result).
    config.workflow.enable_caching = false;
    let model = MarkerModel::new(&backend.timer);
    model.on(ROUTER_MARKER, 0, Some(SEED_PLAN));
    let (_, events) = turn(
        &backend,
        &model,
        &config,
        Some(user(&["private"], None)),
        None,
        "câu hỏi khác hẳn",
    );
    assert_eq!(text_of(&events), sentence(Language::Vi, "all_failed"));
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
}

#[test]
fn an_invalid_plan_is_asked_again_once() {
    let backend = MemoryBackend::default();
    demo_documents(&backend);
    let model = MarkerModel::new(&backend.timer);
    model.on(
        ROUTER_MARKER,
        0,
        Some("Đây là kế hoạch: agents hr, general (không phải JSON)"),
    );
    model.on(
        ROUTER_MARKER,
        0,
        Some(&format!("```json\n{SEED_PLAN}\n```")),
    );
    model.on(RAG_MARKER, 0, Some("a"));
    model.on(RAG_MARKER, 0, Some("b"));
    model.on(RAG_MARKER, 0, Some("c"));
    model.on(SUMMARY_MARKER, 0, Some("d"));
    model.on(FINAL_MARKER, 0, Some("Trả lời."));
    let (_, events) = turn(&backend, &model, &config(), None, None, "giá trị cốt lõi");
    assert_eq!(model.calls_with(ROUTER_MARKER), 2);
    let second = model.requests.borrow()[1].messages[0].content.clone();
    assert!(second.contains("không hợp lệ"), "the re-ask says why");
    let output = payload(&events, "final").unwrap();
    assert_eq!(output["execution_metadata"]["plan_repaired"], true);
    assert_eq!(node_ids(&output["flow_action"]).len(), 8);
    // Trailing commas are repaired without asking again.
    let broken = SEED_PLAN.replace("\"pending\"}]", "\"pending\",}]");
    assert!(concierge_core::flows::knowledge::extract_json(&broken).is_some());
}

#[test]
fn permissions_decide_every_answer_and_piece_of_evidence_including_through_the_cache() {
    let backend = MemoryBackend::default();
    demo_documents(&backend);
    let question = "đi muộn ảnh hưởng công việc quy định công ty";
    let plan = r#"{"refined_query": "đi muộn ảnh hưởng công việc quy định công ty",
        "agents": {"hr": {"queries": [{"1": "đi muộn ảnh hưởng công việc quy định công ty"}], "tools": ["rag_tool"]}},
        "execution_flow": {"planning": {"tasks": [{"1": [{"agent": "hr", "tool": "rag_tool", "message": "Tra cứu", "status": "pending"}]}]}}}"#;
    let cases: [(Option<concierge_core::identity::UserIdentity>, &[&str]); 3] = [
        (None, &["punctuality-old"]),
        (
            Some(user(&["internal"], None)),
            &["discipline", "punctuality-old"],
        ),
        (
            Some(user(&["private"], Some("hr"))),
            &["punctuality", "punctuality-old"],
        ),
    ];
    for (identity, allowed) in cases {
        for round in 0..2 {
            let model = MarkerModel::new(&backend.timer);
            if round == 0 {
                model.on(ROUTER_MARKER, 0, Some(plan));
                model.on(RAG_MARKER, 0, Some("Trả lời theo tài liệu."));
                model.on(FINAL_MARKER, 0, Some("Câu trả lời."));
            }
            let (conversation, events) = turn(
                &backend,
                &model,
                &config(),
                identity.clone(),
                None,
                question,
            );
            assert!(
                matches!(events.last(), Some(TurnEvent::Completed { .. })),
                "{events:?}"
            );
            if round == 1 {
                assert_eq!(
                    model.calls(),
                    0,
                    "the repeated question is served from the cache"
                );
            } else {
                // The rag prompt holds only passages the visitor may read.
                let rag = model
                    .requests
                    .borrow()
                    .iter()
                    .find(|r| r.messages[0].content.contains(RAG_MARKER))
                    .unwrap()
                    .messages[0]
                    .content
                    .clone();
                assert!(
                    !rag.contains("trừ KPI") || allowed.contains(&"punctuality"),
                    "{rag}"
                );
                assert!(
                    !rag.contains("khiển trách") || allowed.contains(&"discipline"),
                    "{rag}"
                );
            }
            let stored = backend
                .store
                .messages(concierge_core::conversation::Scope::new(
                    SITE,
                    &conversation,
                ));
            let reply = stored.last().unwrap();
            let ids: Vec<&str> = reply.metadata["document_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert!(!ids.is_empty());
            for id in &ids {
                assert!(allowed.contains(id), "{id} for {allowed:?}");
            }
            for e in reply.metadata["evidence"].as_array().unwrap() {
                assert!(allowed.contains(&e["document_id"].as_str().unwrap()), "{e}");
            }
        }
    }
    // A later question in a conversation leans on it: never answered from the cache.
    let model = MarkerModel::new(&backend.timer);
    model.on(ROUTER_MARKER, 0, Some(plan));
    model.on(ROUTER_MARKER, 0, Some(plan));
    model.on(RAG_MARKER, 0, Some("Theo tài liệu."));
    model.on(FINAL_MARKER, 0, Some("Lần một."));
    model.on(FINAL_MARKER, 0, Some("Lần hai."));
    let (conversation, _) = turn(&backend, &model, &config(), None, None, "câu hỏi mở đầu");
    let (_, events) = turn(
        &backend,
        &model,
        &config(),
        None,
        Some(&conversation),
        question,
    );
    assert_eq!(text_of(&events), "Lần hai.");
    // A knowledge change invalidates the cache: the question is answered again.
    document(
        &backend,
        "new-policy",
        "Chính sách mới",
        "đi muộn quy định mới",
        "public",
        "hr",
        "2026-11-21T00:00:00Z",
    );
    let model = MarkerModel::new(&backend.timer);
    model.on(ROUTER_MARKER, 0, Some(plan));
    model.on(RAG_MARKER, 0, Some("Mới."));
    model.on(FINAL_MARKER, 0, Some("Mới."));
    let (_, events) = turn(&backend, &model, &config(), None, None, question);
    assert_eq!(text_of(&events), "Mới.");
    assert_eq!(model.calls(), 3);
}

#[test]
fn a_final_answer_failure_ends_with_one_failed_event_and_keeps_the_visitor_message() {
    let backend = MemoryBackend::default();
    demo_documents(&backend);
    let model = MarkerModel::new(&backend.timer);
    let plan = r#"{"refined_query": "đi muộn",
        "agents": {"hr": {"queries": [{"1": "đi muộn"}], "tools": ["rag_tool"]}},
        "execution_flow": {"planning": {"tasks": [{"1": [{"agent": "hr", "tool": "rag_tool", "message": "Tra cứu", "status": "pending"}]}]}}}"#;
    model.on(ROUTER_MARKER, 0, Some(plan));
    model.on(RAG_MARKER, 0, Some("Trừ KPI."));
    model.on(FINAL_MARKER, 0, None);
    let (conversation, events) = turn(&backend, &model, &config(), None, None, "đi muộn thì sao");
    assert_eq!(terminals(&events), 1);
    assert!(
        matches!(events.last(), Some(TurnEvent::Failed { .. })),
        "{events:?}"
    );
    let stored = backend
        .store
        .messages(concierge_core::conversation::Scope::new(
            SITE,
            &conversation,
        ));
    assert!(stored.iter().any(|m| m.content == "đi muộn thì sao"));
}
