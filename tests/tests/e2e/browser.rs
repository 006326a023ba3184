//! The widget in real headless Chromium (`tests/browser/widget.mjs`, playwright-core)
//! against the real Worker under `wrangler dev`, with a scripted LLM upstream.
//!
//! Each test creates its own site whose LLM is its own [`ScriptedUpstream`], and opens a
//! merchant page that embeds the widget with the one tag: the demo shop page served from
//! its own origin ([`HostPage::demo`]), or a page with a strict CSP
//! ([`HostPage::strict_csp`]). The launcher test opens the Worker's own demo page (`/`).
//! Screenshots land in `target/test-artifacts/`. Browser runs are serialised: the machine
//! is small and each run is a whole Chromium.

use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use concierge_e2e::host_page::{HostPage, embed_tag_with};
use concierge_e2e::upstream::{Reply, ScriptedUpstream, split_tokens};
use concierge_e2e::{TestSite, Worker, repo_root, scratch_dir};
use serde_json::json;

/// The scripted model's answer: markdown, streamed in word pieces.
const ANSWER: &str = "Dạ, **Galaxy S23 Ultra** hiện có giá *22.490.000 VND*:\n- 12GB RAM\n- 256GB\n\nQuý khách cần em tư vấn thêm không ạ?";
/// What the final rendered answer must contain.
const ANSWER_MARK: &str = "22.490.000 VND";
/// A question the shop template classifies as shopping (answered by the model).
const ASK: &str = "Tôi muốn mua Galaxy S23 Ultra, giá bao nhiêu?";

/// Held while a Chromium runs (one at a time; see `browser_rich` too).
pub(crate) static BROWSER: Mutex<()> = Mutex::new(());

/// The answer, a word piece every 60 ms: slow enough to watch it arrive.
pub(crate) fn slow_answer() -> Reply {
    Reply::Tokens {
        tokens: split_tokens(ANSWER),
        first_token_after: Duration::from_millis(50),
        between: Duration::from_millis(60),
    }
}

/// A shop site whose LLM is `upstream`, usable from `origins`.
fn site(worker: &Worker, upstream: &ScriptedUpstream, origins: &[&str]) -> TestSite {
    worker.create_site(json!({
        "name": "An Phát PC (browser test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": origins,
        "starter_prompts": ["Kiểm tra bảo hành", "Galaxy S23 Ultra giá bao nhiêu?"],
    }))
}

/// A site plus the demo page embedding it from its own origin.
pub(crate) fn demo_site(worker: &Worker, upstream: &ScriptedUpstream) -> (TestSite, HostPage) {
    let page = HostPage::start();
    let site = site(worker, upstream, &[page.origin.as_str()]);
    page.show_demo(worker, &site.public_key);
    (site, page)
}

/// A site plus a page with a strict CSP embedding it.
fn strict_csp_site(worker: &Worker, upstream: &ScriptedUpstream) -> (TestSite, HostPage) {
    let page = HostPage::start();
    let site = site(worker, upstream, &[page.origin.as_str()]);
    page.show_strict_csp(worker, &site.public_key);
    (site, page)
}

/// Run one scenario of `widget.mjs` on `page_url`; panics with its output on failure.
pub(crate) fn run(scenario: &str, page_url: &str, env: &[(&str, &str)]) {
    // The defaults first: a scenario's own `env` wins.
    let mut all = vec![("ASK", ASK), ("EXPECT_ANSWER", ANSWER_MARK)];
    all.extend_from_slice(env);
    run_script("widget.mjs", scenario, page_url, &all);
}

/// Run scenario `scenario` of `tests/browser/<script>` on `page_url` in headless Chromium
/// (one browser at a time), with `env` set; panics with its output on failure.
pub(crate) fn run_script(script: &str, scenario: &str, page_url: &str, env: &[(&str, &str)]) {
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-profile");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            ". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/{script} \"$@\""
        ))
        .arg("node")
        .arg(scenario)
        .arg(page_url)
        .arg(&artifacts)
        .arg(&profile)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        output.status.success() && stdout.contains(&format!("ok {scenario}")),
        "{script} scenario {scenario} failed:\n{stdout}\n{stderr}"
    );
}

#[test]
fn the_demo_page_has_a_labelled_launcher_and_an_accessible_panel() {
    // The Worker's own demo page, exactly as deployed; needs no conversation API.
    let worker = Worker::shared();
    run("launcher", &worker.url("/"), &[]);
}

#[test]
fn the_launcher_and_focus_work_across_origins() {
    // The same checks on the demo page served from another origin (as on a real shop):
    // focus moves into the cross-origin iframe and back to the launcher.
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let (_site, page) = demo_site(worker, &upstream);
    run("launcher", &page.url, &[]);
}

#[test]
fn a_visitor_chats_sees_tokens_stream_and_keeps_the_conversation_across_reloads() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (_site, page) = demo_site(worker, &upstream);
    run(
        "chat",
        &page.url,
        &[("EXPECT_MARKDOWN", "1"), ("EXPECT_STARTERS", "1")],
    );
}

#[test]
fn the_warranty_flow_finds_the_serial() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (site, page) = demo_site(worker, &upstream);
    let (status, body) = concierge_e2e::into_parts(
        concierge_e2e::agent()
            .post(&worker.url("/admin/warranty"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"records": [
                {"serial": "0979825281", "product": "S23 Ultra", "warranty_until": "2026-08-12"}
            ]})),
    );
    assert!(
        (200..300).contains(&status),
        "warranty upsert: {status} {body}"
    );
    run(
        "warranty",
        &page.url,
        &[
            ("WARRANTY_ASK", "Tôi muốn kiểm tra bảo hành"),
            ("SERIAL", "0979825281"),
            ("EXPECT_WARRANTY", "S23 Ultra"),
        ],
    );
}

#[test]
fn a_keyboard_only_session_works() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (_site, page) = demo_site(worker, &upstream);
    run("keyboard", &page.url, &[]);
}

#[test]
fn an_upstream_failure_shows_retry_and_retry_succeeds() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (_site, page) = demo_site(worker, &upstream);
    // The Worker retries once before the first token: both attempts fail, the turn ends
    // with `failed`; the visitor's retry then gets the default answer.
    upstream.push(Reply::Status(500)).push(Reply::Status(500));
    run("retry", &page.url, &[]);
    assert_eq!(
        upstream.chat_requests().len(),
        3,
        "two failed attempts, then the retry"
    );
}

#[test]
fn the_tag_options_position_colour_title_language_open_and_inline() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let (popup, inline) = (HostPage::start(), HostPage::start());
    let site = site(worker, &upstream, &[&popup.origin, &inline.origin]);
    let tag = embed_tag_with(
        worker,
        &site.public_key,
        r##"data-position="left" data-color="#ffd400" data-title="Cửa hàng Vàng" data-lang="en" data-open="true""##,
    );
    popup.set(
        format!("<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Options</title></head><body><h1>Options</h1>{tag}</body></html>"),
        Vec::new(),
    );
    let tag = embed_tag_with(worker, &site.public_key, r##"data-inline="#chat-here""##);
    inline.set(
        format!("<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Inline</title></head><body><h1>Inline</h1><div id=\"chat-here\"></div>{tag}</body></html>"),
        Vec::new(),
    );
    run("options", &popup.url, &[("INLINE_URL", &inline.url)]);
}

#[test]
fn a_page_with_a_strict_csp_boots_the_widget() {
    // No 'wasm-unsafe-eval', no inline styles on the host page: the loader is plain JS,
    // its styles are a constructable stylesheet, and the wasm runs in the Worker's iframe.
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let (_site, page) = strict_csp_site(worker, &upstream);
    run("csp", &page.url, &[("BOOT_ONLY", "1")]);
}

#[test]
fn a_page_with_a_strict_csp_gets_a_working_chat() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (_site, page) = strict_csp_site(worker, &upstream);
    run("csp", &page.url, &[]);
}

#[test]
fn an_attacker_page_cannot_use_a_victims_key_and_the_victims_page_still_chats() {
    // Issue 10: another website embedding embed.js with the victim's public key. The
    // browser must refuse to frame the panel there (frame-ancestors), the panel must not
    // run top-level, and it posts only to the parent the browser reports.
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (site, victim) = demo_site(worker, &upstream);
    let attacker = HostPage::start();
    attacker.set(
        format!(
            "<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Not the shop</title></head><body><h1>Free chat</h1>{}</body></html>",
            embed_tag_with(worker, &site.public_key, "")
        ),
        Vec::new(),
    );
    run(
        "attacker",
        &attacker.url,
        &[
            ("WORKER", &worker.base_url),
            ("SITE_KEY", &site.public_key),
            ("VICTIM_URL", &victim.url),
        ],
    );
    assert_eq!(
        upstream.chat_requests().len(),
        1,
        "the model answered the victim's one question and nothing else"
    );
}
