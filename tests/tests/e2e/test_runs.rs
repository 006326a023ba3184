//! Test runs and the publish gate (issue 42's acceptance), with the scripted upstream:
//! 20 cases run against the live configuration within 60 s; a draft persona that breaks
//! exactly 3 of them is reported with exactly those 3; publishing over them is refused
//! (409 with a sentence) until confirmed, and the confirmation is recorded with the
//! version; restoring the earlier version brings the 20 passes back. Test conversations
//! never show in the site's conversations.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use concierge_e2e::api::error_code;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

/// The cases a draft persona breaks: the upstream answers a question with its case's code
/// unless the system prompt lists the case after this mark.
const BREAK: &str = "BREAK-CASES:";

fn call(worker: &Worker, method: &str, path: &str, key: &str, body: Option<Value>) -> (u16, Value) {
    let request = agent()
        .request(method, &worker.url(path))
        .set("x-api-key", key);
    let (status, text) = into_parts(match body {
        Some(body) => request.send_json(body),
        None => request.call(),
    });
    let json = serde_json::from_str(&text).unwrap_or_else(|_| json!({"text": text}));
    (status, json)
}

/// The run `id` once finished (polled), within `deadline`.
fn finished(worker: &Worker, key: &str, id: &str, deadline: Instant) -> Value {
    loop {
        let (status, run) = call(worker, "GET", &format!("/admin/tests/runs/{id}"), key, None);
        assert_eq!(status, 200, "{run}");
        if run["finished"] == true {
            return run;
        }
        if Instant::now() >= deadline {
            let log = worker.log();
            let lines: Vec<&str> = log.lines().filter(|l| l.contains("error")).collect();
            panic!("run {id} unfinished: {run}\n{}", lines.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The names of a run's cases with `status`.
fn named(run: &Value, status: &str) -> BTreeSet<String> {
    run["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["status"] == status)
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect()
}

/// A run of `target` started and finished within 60 s; every case's result kept.
fn run(worker: &Worker, key: &str, target: &str) -> Value {
    let started = Instant::now();
    let (status, run) = call(
        worker,
        "POST",
        "/admin/tests/runs",
        key,
        Some(json!({"target": target})),
    );
    assert_eq!(status, 202, "{run}");
    assert_eq!(run["target"], target);
    assert_eq!(run["total"], 20);
    let id = run["id"].as_str().expect("id").to_string();
    let run = finished(worker, key, &id, started + Duration::from_secs(60));
    assert!(started.elapsed() <= Duration::from_secs(60));
    run
}

#[test]
fn twenty_cases_run_a_regression_is_named_refused_confirmed_recorded_and_restore_brings_them_back()
{
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_responder(|body| {
        let messages = body["messages"].as_array()?;
        let system = messages.first()?["content"].as_str().unwrap_or("");
        let question = messages.iter().rev().find(|m| m["role"] == "user")?;
        let question = question["content"].as_str()?;
        let at = question.find("CASE-")?;
        let n = question.get(at + 5..at + 7)?;
        let broken = system
            .split(BREAK)
            .nth(1)
            .is_some_and(|list| list.split_whitespace().take(3).any(|b| b == n));
        Some(if broken {
            Reply::text("Dạ, em chưa rõ câu hỏi ạ.")
        } else {
            Reply::text(&format!("Dạ, mã của anh là CODE-{n} ạ."))
        })
    });
    let site = concierge_e2e::api::site_with_upstream(worker, "Runs", &upstream.base_url, false);
    let secret = site.secret_key.as_str();
    let (status, body) = call(
        worker,
        "PATCH",
        "/admin/site",
        secret,
        Some(json!({"persona": "Bạn là trợ lý của shop."})),
    );
    assert_eq!(status, 200, "{body}");
    for n in 1..=20 {
        let (status, body) = call(
            worker,
            "POST",
            "/admin/tests",
            secret,
            Some(json!({
                "name": format!("Mã {n:02}"),
                "question": format!("Xin chào, shop có giao hàng CASE-{n:02} không?"),
                "checks": {"contains": [format!("code-{n:02}")], "language": "vi",
                           "max_latency_ms": 30000}
            })),
        );
        assert_eq!(status, 201, "{body}");
    }

    // 20 cases against live, within 60 s: all pass, each with its answer and latency.
    let live = run(worker, secret, "live");
    assert_eq!(
        (live["passed"].as_u64(), live["failed"].as_u64()),
        (Some(20), Some(0)),
        "{live}"
    );
    let first = &live["results"][0];
    assert_eq!(first["answer"], "Dạ, mã của anh là CODE-01 ạ.", "{first}");
    assert!(first["latency_ms"].as_u64().is_some(), "{first}");

    // A draft persona that breaks exactly 3 cases.
    let (status, body) = call(
        worker,
        "PATCH",
        "/admin/site/draft",
        secret,
        Some(json!({"persona": format!("Bạn là trợ lý của shop. {BREAK} 03 08 15")})),
    );
    assert_eq!(status, 200, "{body}");
    // The gate needs the runs first.
    let (status, body) = call(worker, "POST", "/admin/publish", secret, Some(json!({})));
    assert_eq!(
        (status, error_code(&body.to_string()).as_str()),
        (409, "conflict"),
        "{body}"
    );
    assert!(
        body.to_string().contains("POST /admin/publish/check"),
        "{body}"
    );

    let started = Instant::now();
    let (status, check) = call(worker, "POST", "/admin/publish/check", secret, None);
    assert_eq!(status, 202, "{check}");
    let (draft_run, live_run) = (
        check["draft_run"].as_str().expect("draft run").to_string(),
        check["live_run"].as_str().expect("live run").to_string(),
    );
    let deadline = started + Duration::from_secs(60);
    let draft = finished(worker, secret, &draft_run, deadline);
    finished(worker, secret, &live_run, deadline);
    let broken: BTreeSet<String> = ["Mã 03", "Mã 08", "Mã 15"].map(String::from).into();
    assert_eq!(named(&draft, "failed"), broken, "{draft}");
    let failure = draft["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["name"] == "Mã 08")
        .expect("case 08");
    assert_eq!(failure["failed"], "contains \"code-08\"", "{failure}");
    assert_eq!(failure["answer"], "Dạ, em chưa rõ câu hỏi ạ.", "{failure}");

    let (status, compared) = call(
        worker,
        "GET",
        &format!("/admin/tests/compare?draft_run={draft_run}&live_run={live_run}"),
        secret,
        None,
    );
    assert_eq!(status, 200, "{compared}");
    assert_eq!(
        compared["draft"],
        json!({"passed": 17, "total": 20}),
        "{compared}"
    );
    assert_eq!(
        compared["live"],
        json!({"passed": 20, "total": 20}),
        "{compared}"
    );
    let regressions: BTreeSet<String> = compared["regressions"]
        .as_array()
        .expect("regressions")
        .iter()
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect();
    assert_eq!(regressions, broken, "{compared}");

    // Publishing over them without confirmation: 409 with a sentence naming them.
    let runs = json!({"draft_run": draft_run, "live_run": live_run, "note": "persona mới"});
    let (status, refused) = call(worker, "POST", "/admin/publish", secret, Some(runs.clone()));
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "regressions", "{refused}");
    let sentence = refused["error"]["message"].as_str().expect("message");
    assert!(sentence.starts_with("Bản nháp trượt 3 ca"), "{sentence}");
    assert!(sentence.contains("The draft fails 3 cases"), "{sentence}");
    for name in &broken {
        assert!(sentence.contains(name.as_str()), "{name} not in {sentence}");
    }
    let (status, versions) = call(worker, "GET", "/admin/versions", secret, None);
    assert_eq!(status, 200, "{versions}");
    let before = versions["live_version"].as_u64().expect("live version");
    assert_eq!(
        versions["draft_pending"], true,
        "nothing published: {versions}"
    );

    // With confirmation: published, and the confirmation recorded with the version.
    let mut confirmed = runs.clone();
    confirmed["confirm_regressions"] = true.into();
    let (status, published) = call(worker, "POST", "/admin/publish", secret, Some(confirmed));
    assert_eq!(status, 200, "{published}");
    let (_, versions) = call(worker, "GET", "/admin/versions", secret, None);
    let newest = &versions["versions"][0];
    assert_eq!(newest["version"], published["version"], "{versions}");
    assert_eq!(newest["source"], "published");
    assert_eq!(newest["regressions"]["confirmed"], true, "{newest}");
    let recorded: BTreeSet<String> = newest["regressions"]["regressions"]
        .as_array()
        .expect("recorded")
        .iter()
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect();
    assert_eq!(recorded, broken, "{newest}");

    // Live now fails those 3; restoring the earlier version brings the 20 passes back.
    let after = run(worker, secret, "live");
    assert_eq!(named(&after, "failed"), broken, "{after}");
    let (status, body) = call(
        worker,
        "POST",
        &format!("/admin/versions/{before}/restore"),
        secret,
        Some(json!({})),
    );
    assert_eq!(status, 200, "{body}");
    let restored = run(worker, secret, "live");
    assert_eq!(restored["passed"], 20, "{restored}");

    // Test conversations are kept apart: the site's conversation list has none of them.
    let (status, list) = call(worker, "GET", "/admin/conversations", secret, None);
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["conversations"], json!([]), "{list}");
    // The public key can neither run nor read the tests.
    let (status, _) = call(
        worker,
        "POST",
        "/admin/tests/runs",
        &site.public_key,
        Some(json!({"target": "live"})),
    );
    assert_eq!(status, 403);
}

#[test]
fn a_test_case_is_proposed_from_a_real_conversation_and_saved() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(
        "Dạ, đơn CASE-07 giao trong 3 ngày, phí 30.000đ ạ.",
    ));
    let site = concierge_e2e::api::site_with_upstream(worker, "Propose", &upstream.base_url, false);
    let secret = site.secret_key.as_str();
    let (id, _) = concierge_e2e::api::create_conversation(worker, &site, json!({}));
    let (status, earlier) = call(
        worker,
        "POST",
        &format!("/conversations/{id}/messages"),
        secret,
        Some(json!({"content": "Chào shop, shop có giao hàng không?"})),
    );
    assert_eq!(status, 200, "{earlier}");
    let (status, answered) = call(
        worker,
        "POST",
        &format!("/conversations/{id}/messages"),
        secret,
        Some(json!({"content": "Shop giao hàng đơn CASE-07 mất mấy ngày?"})),
    );
    assert_eq!(status, 200, "{answered}");

    let (status, proposal) = call(
        worker,
        "POST",
        "/admin/tests/propose",
        secret,
        Some(json!({"conversation_id": id})),
    );
    assert_eq!(status, 200, "{proposal}");
    let case = &proposal["case"];
    assert_eq!(case["question"], "Shop giao hàng đơn CASE-07 mất mấy ngày?");
    assert_eq!(
        proposal["answer"],
        "Dạ, đơn CASE-07 giao trong 3 ngày, phí 30.000đ ạ."
    );
    assert_eq!(
        case["conversation"],
        json!([
            {"role": "user", "content": "Chào shop, shop có giao hàng không?"},
            {"role": "assistant", "content": "Dạ, đơn CASE-07 giao trong 3 ngày, phí 30.000đ ạ."},
        ]),
        "the greeting left out: {case}"
    );
    assert_eq!(
        case["checks"]["contains"],
        json!(["CASE-07", "30.000đ", "3"]),
        "{case}"
    );
    assert_eq!(case["checks"]["language"], "vi");
    // Saved as proposed (the console lets the merchant edit it first).
    let (status, saved) = call(worker, "POST", "/admin/tests", secret, Some(case.clone()));
    assert_eq!(status, 201, "{saved}");
    // Another site cannot read this conversation: 404.
    let other =
        concierge_e2e::api::site_with_upstream(worker, "Propose 2", &upstream.base_url, false);
    let (status, _) = call(
        worker,
        "POST",
        "/admin/tests/propose",
        &other.secret_key,
        Some(json!({"conversation_id": id})),
    );
    assert_eq!(status, 404);
}

#[test]
fn a_rubric_is_judged_by_the_model_and_its_verdict_kept() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_responder(|body| {
        let messages = body["messages"].as_array()?;
        let system = messages.first()?["content"].as_str().unwrap_or("");
        let last = messages.last()?["content"].as_str().unwrap_or("");
        Some(Reply::text(if system.starts_with("You judge one answer") {
            // The judge sees the rubric, the question and the answer.
            if !last.contains("Rubric: Trả lời lịch sự") || !last.contains("toàn quốc") {
                "FAIL: the judge was not given the rubric and the answer."
            } else if last.contains("CASE-02") {
                "FAIL: thiếu lời chào."
            } else {
                "PASS: lịch sự."
            }
        } else {
            "Dạ, shop giao hàng toàn quốc ạ."
        }))
    });
    let site = concierge_e2e::api::site_with_upstream(worker, "Rubric", &upstream.base_url, false);
    let secret = site.secret_key.as_str();
    for n in 1..=2 {
        let (status, body) = call(
            worker,
            "POST",
            "/admin/tests",
            secret,
            Some(json!({
                "name": format!("Lịch sự {n}"),
                "question": format!("Xin chào, shop có giao hàng CASE-0{n} không?"),
                "checks": {"contains": ["giao hàng"], "rubric": "Trả lời lịch sự"}
            })),
        );
        assert_eq!(status, 201, "{body}");
    }
    let started = Instant::now();
    let (status, run) = call(
        worker,
        "POST",
        "/admin/tests/runs",
        secret,
        Some(json!({"target": "live"})),
    );
    assert_eq!(status, 202, "{run}");
    let id = run["id"].as_str().expect("id");
    let run = finished(worker, secret, id, started + Duration::from_secs(60));
    let results = run["results"].as_array().expect("results");
    assert_eq!(results[0]["status"], "passed", "{run}");
    assert_eq!(results[0]["verdict"], "PASS: lịch sự.", "{run}");
    assert_eq!(results[1]["status"], "failed", "{run}");
    assert_eq!(results[1]["verdict"], "FAIL: thiếu lời chào.", "{run}");
    assert_eq!(
        results[1]["failed"], "rubric: FAIL: thiếu lời chào.",
        "{run}"
    );
}
