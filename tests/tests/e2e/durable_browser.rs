//! Durable conversations (issue 28) in real headless Chromium (`tests/browser/durable.mjs`,
//! playwright-core) against the real Worker under `wrangler dev` (its Durable Objects run
//! locally), with a scripted LLM upstream (`ScriptedUpstream`: the answer is streamed a word
//! piece at a time, slowly enough to reload or cut the connection in the middle of it):
//! a reload mid-answer resumes in the widget, a dropped connection resumes by itself, an
//! object reset mid-answer shows the answer interrupted (not a hang), two
//! tabs of one conversation both see an answer live, and a full handoff round trip with the
//! widget page and the console page side by side; after a reload the widget shows who
//! holds the conversation; two tabs posting at once both show both answers in order; Stop
//! keeps the partial answer and stops the server's turn too. Screenshots:
//! `target/test-artifacts/durable-*.png`.

use std::process::Command;
use std::time::Duration;

use concierge_e2e::host_page::HostPage;
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root, scratch_dir};
use serde_json::json;

use crate::browser::BROWSER;

/// The scripted model's answer (markdown).
const ANSWER: &str = "Dạ, **Galaxy S23 Ultra** hiện có giá *22.490.000 VND*:\n- 12GB RAM\n- 256GB\n\nMáy còn hàng ở cả hai cửa hàng, giao trong ngày tại nội thành. Quý khách cần em tư vấn thêm không ạ?";
/// What the rendered answer contains, once.
const ANSWER_MARK: &str = "22.490.000 VND";
/// Questions the shop template sends to the model.
const ASK: &str = "Tôi muốn mua Galaxy S23 Ultra, giá bao nhiêu?";
const SECOND_ASK: &str = "Galaxy S23 Ultra còn hàng không, giá bao nhiêu?";

/// The answer, a word piece every `between` ms.
fn answer(between: u64) -> Reply {
    Reply::Tokens {
        tokens: split_tokens(ANSWER),
        first_token_after: Duration::from_millis(50),
        between: Duration::from_millis(between),
    }
}

/// A shop site whose LLM is `upstream`, embedded by `page`.
fn shop(worker: &Worker, upstream: &ScriptedUpstream, page: &HostPage) -> TestSite {
    let site = worker.create_site(json!({
        "name": "An Phát PC (durable test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": [page.origin],
    }));
    page.show_demo(worker, &site.public_key);
    site
}

/// Run scenario `scenario` of `durable.mjs` on `page_url`; panics with its output on failure.
fn run(scenario: &str, page_url: &str, env: &[(&str, &str)]) {
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-durable");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/durable.mjs \"$@\"")
        .arg("node")
        .arg(scenario)
        .arg(page_url)
        .arg(&artifacts)
        .arg(&profile)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("ASK", ASK)
        .env("SECOND_ASK", SECOND_ASK)
        .env("EXPECT_ANSWER", ANSWER_MARK);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        output.status.success() && stdout.contains(&format!("ok {scenario}")),
        "durable scenario {scenario} failed:\n{stdout}\n{stderr}"
    );
}

#[test]
fn a_reload_mid_answer_resumes_the_answer_in_the_widget_once() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(150));
    let page = HostPage::start();
    let _site = shop(worker, &upstream, &page);
    run("reload", &page.url, &[]);
    assert_eq!(
        upstream.chat_requests().len(),
        1,
        "the model answered once: the reload did not ask again"
    );
}

#[test]
fn a_dropped_connection_mid_answer_resumes_by_itself() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(100));
    let page = HostPage::start();
    let _site = shop(worker, &upstream, &page);
    run("drop", &page.url, &[]);
    assert_eq!(upstream.chat_requests().len(), 1, "the model answered once");
}

#[test]
fn an_object_reset_mid_answer_shows_the_answer_interrupted_not_a_hang() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(150));
    let page = HostPage::start();
    let site = shop(worker, &upstream, &page);
    run(
        "reset",
        &page.url,
        &[
            ("WORKER", &worker.base_url),
            ("SECRET_KEY", &site.secret_key),
        ],
    );
}

#[test]
fn two_tabs_of_one_conversation_both_see_an_answer_live() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(80));
    let page = HostPage::start();
    let _site = shop(worker, &upstream, &page);
    run("tabs", &page.url, &[]);
    assert_eq!(upstream.chat_requests().len(), 2, "one answer per question");
}

#[test]
fn a_person_takes_over_from_the_console_replies_in_the_widget_and_hands_back() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(40));
    let page = HostPage::start();
    let site = shop(worker, &upstream, &page);
    run(
        "handoff",
        &page.url,
        &[
            ("CONSOLE_URL", &worker.url("/console")),
            ("SECRET_KEY", &site.secret_key),
            ("REPLY", "Chào anh, em là Lan, em hỗ trợ anh ngay ạ."),
            ("THANKS", "Cảm ơn chị Lan"),
        ],
    );
    let asked = upstream.chat_requests();
    assert_eq!(
        asked.len(),
        1,
        "the model answered only after the hand back: {asked:?}"
    );
    // The console stored the settings the merchant chose.
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let site: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let handoff = &site["site"]["config"]["handoff"];
    assert_eq!(handoff["enabled"], true, "{handoff}");
    assert_eq!(handoff["wait_seconds"], 61, "{handoff}");
    assert_eq!(handoff["time_zone"], "Asia/Ho_Chi_Minh", "{handoff}");
}

#[test]
fn after_a_reload_the_widget_shows_who_holds_the_conversation() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(40));
    let page = HostPage::start();
    let site = shop(worker, &upstream, &page);
    run(
        "heldreload",
        &page.url,
        &[
            ("WORKER", &worker.base_url),
            ("CONSOLE_URL", &worker.url("/console")),
            ("SECRET_KEY", &site.secret_key),
        ],
    );
    assert!(
        upstream.chat_requests().is_empty(),
        "nobody asked the model"
    );
}

#[test]
fn two_tabs_posting_at_once_both_show_both_answers_in_order() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(80));
    let page = HostPage::start();
    let _site = shop(worker, &upstream, &page);
    run("queued", &page.url, &[]);
    assert_eq!(upstream.chat_requests().len(), 2, "one answer per question");
}

#[test]
fn stop_keeps_the_partial_answer_and_the_server_stops_too() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(answer(250));
    upstream.set_default(answer(20));
    let page = HostPage::start();
    let _site = shop(worker, &upstream, &page);
    run("stop", &page.url, &[]);
    assert_eq!(
        upstream.abandoned().len(),
        1,
        "the model's request was cancelled"
    );
}
