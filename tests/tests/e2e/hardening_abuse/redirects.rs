//! The site's LLM endpoint (like its embedding endpoint and SearXNG) is reached only at
//! the URL that passed the outbound rule: a redirect is the endpoint's answer (an error),
//! never followed, and the key goes nowhere else.

use std::time::Duration;

use concierge_e2e::Worker;
use concierge_e2e::api::{create_conversation, eventually, send, site_with_upstream, terminal};
use concierge_e2e::upstream::{Page, ScriptedWeb};
use serde_json::json;

#[test]
fn a_redirect_from_the_llm_endpoint_is_not_followed() {
    let worker = Worker::shared();
    let web = ScriptedWeb::start();
    // The LLM endpoint answers every call with a redirect elsewhere.
    let elsewhere = format!("{}/elsewhere", web.base_url);
    for path in ["/v1/chat/completions", "/v1/embeddings"] {
        web.page(path, Page::Redirect(elsewhere.clone()));
    }
    web.page("/elsewhere", Page::Body("{}".into()));
    let site = site_with_upstream(worker, "Redirecting llm", &web.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Tư vấn cấu hình PC chơi game 20 triệu, card đồ họa nào hợp lý?",
    );
    assert_eq!(status, 200);
    // The turn ends (the flow's own fallback, or `failed`); the redirect's target is never
    // asked.
    let (end, _) = terminal(&events);
    assert!(
        ["completed", "failed"].contains(&end.as_str()),
        "{events:?}"
    );
    // The model (or the embedding of the stored messages, a queued job) asks the endpoint;
    // a client that follows redirects then asks the redirect's target at once.
    eventually(
        Duration::from_secs(20),
        "a request to the LLM endpoint",
        || (web.hits("/v1/chat/completions") + web.hits("/v1/embeddings") >= 1).then_some(()),
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        web.hits("/elsewhere"),
        0,
        "a redirect was followed: {:?}",
        web.requests()
    );
    for request in web.requests() {
        assert!(
            request.path != "/elsewhere"
                || !request
                    .headers
                    .iter()
                    .any(|(name, _)| name == "authorization"),
            "the key went to the redirect's target"
        );
    }
}
