//! `knowledge` permissions through the real Worker: evidence by scope and department
//! (asserted on stored document ids), through the answer cache, and the seed's direct
//! JSON interface.
#![allow(clippy::unwrap_used)]

use concierge_e2e::api::terminal;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

use super::*;

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
