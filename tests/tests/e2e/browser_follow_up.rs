//! Issue 45 (items 3 and 5) in real headless Chromium (`tests/browser/follow_up.mjs`,
//! playwright-core) against the real Worker under `wrangler dev`: outside office hours the
//! visitor leaves a phone number or e-mail under the notice (Vietnamese, then English in an
//! English conversation; a wrong contact refused beside its field), the console's
//! "Follow-ups" list shows it with the question and the page, "Contacted" marks it done
//! (desktop light, phone dark); and the waiting list names the page a visitor asked from,
//! as text. axe-core finds nothing critical or serious in any of these states.
//! Screenshots: `target/test-artifacts/follow-up-*.png`.

use concierge_e2e::host_page::HostPage;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker};
use serde_json::json;

/// A shop site whose LLM is `upstream`, embedded by `page`.
fn shop(worker: &Worker, upstream: &ScriptedUpstream, page: &HostPage) -> TestSite {
    let site = worker.create_site(json!({
        "name": "An Phát PC (follow-up test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": [page.origin],
    }));
    page.show_demo(worker, &site.public_key);
    site
}

/// Run scenario `scenario` of `follow_up.mjs` on `page`'s site; panics with its output on
/// failure.
fn run(scenario: &str, worker: &Worker, site: &TestSite, page: &HostPage, env: &[(&str, &str)]) {
    let mut env = env.to_vec();
    env.extend([
        ("WORKER", worker.base_url.as_str()),
        ("SECRET_KEY", site.secret_key.as_str()),
    ]);
    crate::browser::run_script("follow_up.mjs", scenario, &page.url, &env);
}

#[test]
fn when_nobody_is_free_the_visitor_leaves_a_contact_and_the_console_calls_back() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ."));
    for (viewport, scheme) in [("desktop", "light"), ("phone", "dark")] {
        let page = HostPage::start();
        let site = shop(worker, &upstream, &page);
        run(
            "callback",
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
fn the_waiting_list_names_the_page_the_visitor_is_on() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ."));
    let page = HostPage::start();
    let site = shop(worker, &upstream, &page);
    run("page", worker, &site, &page, &[]);
}
