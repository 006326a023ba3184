//! The visitor's flow around the conversation (issue 26, items 1, 6, 7, 8, 9) in real
//! headless Chromium (`tests/browser/flow.mjs`), at a desktop (1280×800) and a phone
//! (390×844) viewport, through the real Worker with a scripted upstream; axe-core runs over
//! the panel in each state (0 critical, 0 serious). Screenshots:
//! `target/test-artifacts/flow-<scenario>-<state>-{desktop,phone}.png`.

use std::process::Command;

use concierge_e2e::host_page::{HostPage, embed_tag_with};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root, scratch_dir};
use serde_json::{Value, json};

use crate::browser::{BROWSER, demo_site, slow_answer};

/// Run scenario `scenario` of `flow.mjs` on `page_url`; panics with its output on failure.
fn run(scenario: &str, page_url: &str, env: &[(&str, &str)]) {
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-profile");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/flow.mjs \"$@\"")
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
        "flow scenario {scenario} failed:\n{stdout}\n{stderr}"
    );
}

fn patch_site(worker: &Worker, site: &TestSite, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

/// A page at a fresh origin embedding `site_key` with `attributes`.
fn page_with(worker: &Worker, site_key: &str, attributes: &str) -> HostPage {
    let page = HostPage::start();
    let tag = embed_tag_with(worker, site_key, attributes);
    page.set(
        format!("<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Cửa hàng</title></head><body><main><h1>Cửa hàng</h1><p>Trang thử.</p></main>{tag}</body></html>"),
        Vec::new(),
    );
    page
}

/// A shop site whose LLM is `upstream`, usable from `origins`.
fn shop_site(worker: &Worker, upstream: &ScriptedUpstream, origins: &[&str]) -> TestSite {
    worker.create_site(json!({
        "name": "An Phát PC (flow test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": origins,
    }))
}

#[test]
fn sending_while_scrolled_up_shows_the_new_message_and_a_pill_leads_to_new_text() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(slow_answer());
    let (_site, page) = demo_site(worker, &upstream);
    run("scroll", &page.url, &[]);
}

#[test]
fn a_message_over_the_limit_is_counted_and_refused_without_a_request() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, cấu hình này chạy tốt ạ."));
    let (_site, page) = demo_site(worker, &upstream);
    run("limit", &page.url, &[]);
    let requests = format!("{:?}", upstream.chat_requests());
    assert!(
        !requests.contains("Cấu hình PC gaming Cấu hình PC gaming"),
        "the message over the limit never reached the model"
    );
}

#[test]
fn a_panel_that_cannot_load_shows_a_card_and_warns_the_merchant_why() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // 1. A key nobody has (never issued, or rotated away).
    let allowed = HostPage::start();
    let site = shop_site(worker, &upstream, &[allowed.origin.as_str()]);
    let unknown = page_with(worker, "pk_unknown_or_rotated_key", "");
    let (status, body) = patch_site(
        worker,
        &site,
        json!({"allowed_origins": [allowed.origin, unknown.origin]}),
    );
    assert_eq!(status, 200, "{body}");
    // 2. A rotated key: the page still has the old one.
    let rotated = page_with(worker, &site.public_key, "");
    let (status, body) = patch_site(
        worker,
        &site,
        json!({"allowed_origins": [allowed.origin, unknown.origin, rotated.origin]}),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/rotate-keys"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "rotate: {body}");
    let new_public: Value = serde_json::from_str(&body).expect("JSON");
    let new_public = new_public["public_key"]
        .as_str()
        .expect("new key")
        .to_string();
    // 3. A page whose origin the site does not allow (no site allows it).
    let stranger = page_with(worker, &new_public, "");
    // 4. Offline: the allowed page with the current key, opened with the network off.
    allowed.set(
        format!(
            "<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Cửa hàng</title></head><body><main><h1>Cửa hàng</h1></main>{}</body></html>",
            embed_tag_with(worker, &new_public, "")
        ),
        Vec::new(),
    );
    let card = "Trợ lý tạm thời không khả dụng";
    let cases = json!([
        {"name": "unknown-key", "url": unknown.url, "card": card, "warning": "unknown or rotated site key"},
        {"name": "rotated-key", "url": rotated.url, "card": card, "warning": "unknown or rotated site key"},
        {"name": "origin", "url": stranger.url, "card": card,
         "warning": format!("origin {} is not among the site's allowed origins", stranger.origin)},
        {"name": "offline", "url": allowed.url, "card": card, "warning": "cannot reach", "offline": true},
    ]);
    run(
        "unavailable",
        &allowed.url,
        &[("CASES", &cases.to_string())],
    );
}

#[test]
fn the_check_script_names_only_a_cause_and_takes_no_secret() {
    // The loader's check (GET /widget/check): a script calling back with the cause, or
    // nothing; bad input is a clear JSON error.
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let page = HostPage::start();
    let site = shop_site(worker, &upstream, &[page.origin.as_str()]);
    let check = |query: &str| {
        let response = agent()
            .get(&worker.url(&format!("/widget/check?{query}")))
            .call();
        let (status, body) = into_parts(response);
        (status, body)
    };
    let enc = |s: &str| s.replace(':', "%3A").replace('/', "%2F");
    let (status, body) = check(&format!(
        "site_key={}&origin={}",
        site.public_key,
        enc(&page.origin)
    ));
    assert_eq!(
        (status, body.trim()),
        (200, ""),
        "all is well: nothing to run"
    );
    let (status, body) = check(&format!("site_key=pk_nope&origin={}", enc(&page.origin)));
    assert_eq!(status, 200);
    assert!(body.contains("unknown or rotated site key"), "{body}");
    assert!(body.contains("__conciergeFailed()"), "{body}");
    let (status, body) = check(&format!(
        "site_key={}&origin={}",
        site.public_key,
        enc("https://evil.example")
    ));
    assert_eq!(status, 200);
    assert!(
        body.contains("origin https://evil.example is not among"),
        "{body}"
    );
    assert!(body.contains("__conciergeFailed()"), "{body}");
    // A secret key is never looked up here (it would not belong in a page).
    let (status, body) = check(&format!(
        "site_key={}&origin={}",
        site.secret_key,
        enc(&page.origin)
    ));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("\"error\""), "{body}");
    let (status, body) = check("origin=https%3A%2F%2Fa.example");
    assert_eq!(status, 400, "{body}");
}

/// A site of `template` whose model fails (500 to every call), on its own page.
fn failing_site(worker: &Worker, upstream: &ScriptedUpstream, template: &str) -> HostPage {
    let page = HostPage::start();
    let mut body = json!({
        "name": format!("{template} (failure test)"),
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url),
                "model": "scripted", "embed_model": "scripted-embed"},
        "allowed_origins": [page.origin],
    });
    if template == "guarded" {
        body["template"] = json!("guarded");
        body["guarded"] = json!({"assistant_id": "dental-duckduckgo",
            "allowed_models": ["qwen2.5:3b-instruct"], "search": {"provider": "local"}});
    }
    let site = worker.create_site(body);
    if template != "shop" && template != "guarded" {
        let (status, body) = patch_site(worker, &site, json!({"template": template}));
        assert_eq!(status, 200, "{template}: {body}");
    }
    page.show_demo(worker, &site.public_key);
    page
}

fn a_model_failure_is_a_failure_with_retry(template: &str, question: &str) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Status(500));
    a_model_failure_on(worker, &upstream, template, question);
}

fn a_model_failure_on(
    worker: &Worker,
    upstream: &ScriptedUpstream,
    template: &str,
    question: &str,
) {
    let page = failing_site(worker, upstream, template);
    // `guarded` screens a message with its guardrail before storing it (an off-domain
    // question is never stored): a guardrail that cannot answer fails the turn before
    // anything is stored, so only the panel keeps the question (and its Retry).
    let stored = if template == "guarded" { "0" } else { "1" };
    run(
        "failure",
        &page.url,
        &[("QUESTION", question), ("STORED", stored)],
    );
}

#[test]
fn a_rental_model_failure_is_a_failure_with_retry() {
    a_model_failure_is_a_failure_with_retry("rental", "Tìm phòng giá rẻ ở quận 1");
}

#[test]
fn a_shop_model_failure_is_a_failure_with_retry() {
    a_model_failure_is_a_failure_with_retry(
        "shop",
        "Tôi muốn mua Galaxy S23 Ultra, giá bao nhiêu?",
    );
}

#[test]
fn an_analyst_model_failure_is_a_failure_with_retry() {
    // The seed answers an unreachable *classifier* with the clarify sentence (its
    // "Intent classification failed → unclear" rule), so the model fails where a failure
    // is a failure: the classifier says `chat` and the chat node's model call fails.
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::Status(500));
    const CLASSIFIER: &str = "Bạn là một classifier phân loại ý định người dùng.";
    for _viewport in ["desktop", "phone"] {
        upstream.push_for(CLASSIFIER, Reply::text("chat"));
    }
    a_model_failure_on(worker, &upstream, "analyst", "Chào bạn, bạn giúp được gì?");
    let chat_calls = upstream
        .chat_requests()
        .iter()
        .filter(|r| {
            r.body
                .to_string()
                .contains("thân thiện, hỗ trợ phân tích dữ liệu")
        })
        .count();
    assert!(
        chat_calls >= 2,
        "the chat node was asked (and failed) in both viewports"
    );
}

#[test]
fn a_knowledge_model_failure_is_a_failure_with_retry() {
    a_model_failure_is_a_failure_with_retry("knowledge", "Quy định nghỉ phép năm là gì?");
}

#[test]
fn a_guarded_model_failure_is_a_failure_with_retry() {
    a_model_failure_is_a_failure_with_retry("guarded", "Niềng răng mất bao lâu?");
}

#[test]
fn the_last_answer_regenerates_in_place_and_a_reload_shows_one_question_and_the_new_answer() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let (first, second) = ("Dạ, bản đầu tiên", "Dạ, bản tạo lại");
    // Per viewport: the answer, then the regenerated one (slow enough to see it stream).
    for _viewport in ["desktop", "phone"] {
        upstream.push(Reply::text(&format!("{first}: i5 và RTX 3060 ạ.")));
        upstream.push(Reply::Tokens {
            tokens: concierge_e2e::upstream::split_tokens(&format!(
                "{second}: Ryzen 5 7600 và RTX 4060 ạ."
            )),
            first_token_after: std::time::Duration::from_millis(1_200),
            between: std::time::Duration::from_millis(40),
        });
    }
    let (site, page) = demo_site(worker, &upstream);
    let question = "Giá RTX 4060 bao nhiêu ạ?";
    run(
        "regenerate",
        &page.url,
        &[("QUESTION", question), ("FIRST", first), ("SECOND", second)],
    );
    // Stored: one question per conversation, and only the new answers.
    let rows = worker.site_rows(
        &site,
        &format!(
            "SELECT role, content FROM messages WHERE site_id = '{}' AND role <> 'system' \
         AND kind <> 'greeting' ORDER BY conversation_id, seq",
            site.id
        ),
    );
    let texts: Vec<String> = rows.iter().map(|r| r["content"].to_string()).collect();
    assert_eq!(
        texts.iter().filter(|t| t.contains(question)).count(),
        2,
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains(first)), "{texts:?}");
    assert_eq!(
        texts.iter().filter(|t| t.contains(second)).count(),
        2,
        "{texts:?}"
    );
}

#[test]
fn dark_mode_follows_the_visitor_and_the_tag() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(
        "Dạ, **Galaxy S23 Ultra** giá *22.490.000 VND* ạ. [Xem](https://example.com/s23)",
    ));
    let (auto, dark, light) = (HostPage::start(), HostPage::start(), HostPage::start());
    let site = shop_site(
        worker,
        &upstream,
        &[&auto.origin, &dark.origin, &light.origin],
    );
    for (page, attributes) in [
        (&auto, ""),
        (&dark, r##"data-theme="dark" data-color="#ffd400""##),
        (&light, r#"data-theme="light""#),
    ] {
        page.set(
            format!("<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Cửa hàng</title></head><body><main><h1>Cửa hàng</h1></main>{}</body></html>",
                embed_tag_with(worker, &site.public_key, attributes)),
            Vec::new(),
        );
    }
    let cases = json!([
        {"name": "auto-dark", "url": auto.url, "scheme": "dark", "theme": "dark"},
        {"name": "auto-light", "url": auto.url, "scheme": "light", "theme": "light"},
        {"name": "tag-dark", "url": dark.url, "scheme": "light", "theme": "dark"},
        {"name": "tag-light", "url": light.url, "scheme": "dark", "theme": "light"},
    ]);
    run("dark", &auto.url, &[("CASES", &cases.to_string())]);
}

#[test]
fn an_earlier_conversation_can_be_reopened_after_a_new_one() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, em xin trả lời ạ."));
    let (_site, page) = demo_site(worker, &upstream);
    run("history", &page.url, &[]);
}

#[test]
fn talk_to_a_person_shows_only_when_the_site_turns_handoff_on() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, em đã ghi nhận yêu cầu gặp nhân viên ạ."));
    let (site, page) = demo_site(worker, &upstream);
    run("handoff", &page.url, &[("HANDOFF", "0")]);
    // Bad input: a clear error, and the stored settings stay as they were.
    for bad in [
        json!({"handoff": {"enabled": "yes"}}),
        json!({"handoff": {"enabled": true, "whatever": 1}}),
        json!({"handoff": true}),
    ] {
        let (status, body) = patch_site(worker, &site, bad.clone());
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains("\"error\""), "{body}");
    }
    let (status, body) = patch_site(worker, &site, json!({"handoff": {"enabled": true}}));
    assert_eq!(status, 200, "{body}");
    let (_, config) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert!(
        config.contains("\"handoff\":{\"enabled\":true,"),
        "{config}"
    );
    run("handoff", &page.url, &[("HANDOFF", "1")]);
}

#[test]
fn a_proactive_greeting_bubble_opens_the_panel_or_is_dismissed() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let page = HostPage::start();
    let site = shop_site(worker, &upstream, &[page.origin.as_str()]);
    let greeting = "Chào bạn! Cần tư vấn cấu hình PC không?";
    page.set(
        format!("<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Cửa hàng</title></head><body><main><h1>Cửa hàng</h1></main>{}</body></html>",
            embed_tag_with(worker, &site.public_key, &format!("data-greeting=\"{greeting}\""))),
        Vec::new(),
    );
    run("greeting", &page.url, &[("GREETING", greeting)]);
}
