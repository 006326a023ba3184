//! What visitors see around a person (issue 45, items 1, 2 and 7) in real headless
//! Chromium (`tests/browser/handoff_ux.mjs`, playwright-core) against the real Worker
//! under `wrangler dev`, with a scripted LLM upstream: a person's reply and the handoff's
//! notices read the same after a reload as live (and the console names the person);
//! notices and fixed refusals offer no regenerate and no votes; a cut stream says it was
//! interrupted and "Đã dừng." survives a reload. axe-core finds nothing critical or serious
//! in any of these states. Screenshots: `target/test-artifacts/handoff-ux-*.png`.

use std::process::Command;
use std::time::Duration;

use concierge_e2e::host_page::HostPage;
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{TestSite, Worker, repo_root, scratch_dir};
use serde_json::json;

use crate::browser::BROWSER;

/// The scripted model's answer.
const ANSWER: &str = "Dạ, Galaxy S23 Ultra hiện có giá 22.490.000 VND, máy còn hàng ở cả hai cửa hàng và giao trong ngày tại nội thành ạ.";
/// What the rendered answer contains.
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
        "name": "An Phát PC (handoff UX test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": [page.origin],
    }));
    page.show_demo(worker, &site.public_key);
    site
}

/// Run scenario `scenario` of `handoff_ux.mjs` on `page`'s site; panics with its output on
/// failure.
fn run(scenario: &str, worker: &Worker, site: &TestSite, page: &HostPage, env: &[(&str, &str)]) {
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-handoff-ux");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/handoff_ux.mjs \"$@\"")
        .arg("node")
        .arg(scenario)
        .arg(&page.url)
        .arg(&artifacts)
        .arg(&profile)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("WORKER", &worker.base_url)
        .env("SECRET_KEY", &site.secret_key)
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
        "handoff UX scenario {scenario} failed:\n{stdout}\n{stderr}"
    );
}

#[test]
fn a_persons_reply_and_the_handoff_notices_read_the_same_after_a_reload() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(20));
    for (viewport, scheme) in [("desktop", "light"), ("phone", "dark")] {
        let page = HostPage::start();
        let site = shop(worker, &upstream, &page);
        run(
            "person",
            worker,
            &site,
            &page,
            &[("VIEWPORT", viewport), ("SCHEME", scheme)],
        );
    }
    assert!(
        upstream.chat_requests().is_empty(),
        "nobody asked the model"
    );
}

#[test]
fn handoff_timeout_and_outside_hours_notices_offer_no_regenerate_and_no_votes() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(answer(20));
    let page = HostPage::start();
    let site = shop(worker, &upstream, &page);
    run("notices", worker, &site, &page, &[]);
    assert!(
        upstream.chat_requests().is_empty(),
        "no notice was regenerated into a model answer"
    );
}

#[test]
fn guardeds_fixed_refusal_offers_no_regenerate_and_no_votes() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // The guardrail says the question is off its domain.
    upstream.set_default(Reply::text("NO"));
    let page = HostPage::start();
    let site = worker.create_site(json!({
        "name": "Nha khoa (handoff UX test)",
        "template": "guarded",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url),
                "model": "scripted", "embed_model": "scripted-embed"},
        "guarded": {"assistant_id": "dental-duckduckgo", "allowed_models": ["qwen2.5:3b-instruct"],
                    "search": {"provider": "local"}},
        "allowed_origins": [page.origin],
    }));
    page.show_demo(worker, &site.public_key);
    run(
        "refusal",
        worker,
        &site,
        &page,
        &[("QUESTION", "Giá vàng hôm nay bao nhiêu?")],
    );
}

#[test]
fn a_cut_answer_says_it_was_interrupted_and_a_stopped_one_stays_stopped_after_a_reload() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // The first answer is cut after a few pieces; the retry's is whole; the third is slow
    // enough to stop.
    let pieces = split_tokens(ANSWER);
    upstream.push(Reply::CutAfter(pieces[..6].to_vec()));
    upstream.push(answer(10));
    upstream.push(answer(250));
    upstream.set_default(answer(10));
    let page = HostPage::start();
    let site = shop(worker, &upstream, &page);
    run("cut", worker, &site, &page, &[]);
    assert_eq!(
        upstream.abandoned().len(),
        1,
        "the stopped answer's request was cancelled"
    );
}
