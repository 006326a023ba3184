//! `knowledge`'s log search over FTS5 in the site's own object (`SiteObject`), the import of
//! logs an older version kept in the shared D1, and the stage wall-time benchmark.
#![allow(clippy::unwrap_used)]

use concierge_e2e::api::terminal;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::json;

use super::*;

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
    let (conversation, prompt) = ask_logs(worker, &upstream, &site, "VPN login failed");
    assert!(
        prompt.contains("VPN login failed for user an.nguyen"),
        "{prompt}"
    );
    assert!(!prompt.contains("mailbox"), "{prompt}");
    let reply = last_reply(worker, &site, &conversation);
    assert_eq!(reply["metadata"]["evidence"][0]["source_type"], "log");
    // The lines live in the site's object, not in the shared D1.
    let rows = worker.d1_rows(&format!(
        "SELECT COUNT(*) AS n FROM kb_logs WHERE site_id = '{}'",
        site.id
    ));
    assert_eq!(rows[0]["n"], 0, "no log line in the shared D1");
}

/// Asks `site` (through `log_tool`, words `keywords`) as an internal user; the
/// conversation and the final prompt the model was given.
fn ask_logs(
    worker: &Worker,
    upstream: &ScriptedUpstream,
    site: &concierge_e2e::TestSite,
    keywords: &str,
) -> (String, String) {
    upstream.push_for(
        ROUTER,
        Reply::text(&one_task_plan("it", "log_tool", keywords)),
    );
    upstream.push_for(FINAL, Reply::text("Có lỗi đăng nhập VPN."));
    let identity = json!({"user_id": "u-it", "permissions": ["internal"]});
    let (conversation, events) = ask(worker, site, Some(identity), &format!("{keywords}?"));
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
    (conversation, prompt)
}

/// Logs an older version kept in the shared D1 (`kb_logs`, as migration 0026 leaves a
/// site that had some: `kb_versions.has_logs` set) are found after the upgrade: the site's
/// object imports them on its first call and deletes them from D1.
#[test]
fn logs_kept_in_d1_by_an_older_version_are_imported_by_the_site_object() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    worker.d1_rows(&format!(
        "INSERT INTO kb_logs (site_id, id, ts, level, source, message) VALUES \
         ('{id}', '1', '2026-11-19T08:00:00Z', 'ERROR', 'printer-3', 'Printer jam on tầng 3: paper tray empty'), \
         ('{id}', '2', '2026-11-19T09:00:00Z', 'INFO', 'mail', 'mailbox quota ok'); \
         INSERT INTO kb_versions (site_id, version, has_logs) VALUES ('{id}', 1, 1) \
         ON CONFLICT (site_id) DO UPDATE SET has_logs = 1",
        id = site.id
    ));
    let (_, prompt) = ask_logs(worker, &upstream, &site, "printer jam");
    assert!(
        prompt.contains("Printer jam on tầng 3: paper tray empty"),
        "the older line is found: {prompt}"
    );
    assert!(!prompt.contains("mailbox"), "{prompt}");
    let rows = worker.d1_rows(&format!(
        "SELECT COUNT(*) AS n FROM kb_logs WHERE site_id = '{}'",
        site.id
    ));
    assert_eq!(rows[0]["n"], 0, "imported, then deleted from the shared D1");
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
    // Under the test Worker's 3 s first-token limit; long enough that the fixed costs of a
    // task (embedding, D1 reads) weigh little against the latency being overlapped.
    let latency = 2500;
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
    assert!(
        ratio <= 1.3,
        "the tasks did not overlap: {} ms = {ratio:.2}×",
        wall.as_millis()
    );
}
