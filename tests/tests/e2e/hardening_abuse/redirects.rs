//! The site's LLM endpoint (like its embedding endpoint and SearXNG) is reached only at
//! the URL that passed the outbound rule: a redirect is the endpoint's answer (an error),
//! never followed, and the key goes nowhere else.

use concierge_e2e::Worker;
use concierge_e2e::api::{create_conversation, send, site_with_upstream, terminal};
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
        "áo thun này còn size M không?",
    );
    assert_eq!(status, 200);
    let (end, _) = terminal(&events);
    assert_ne!(end, "completed", "{events:?}");
    assert!(
        web.hits("/v1/chat/completions") + web.hits("/v1/embeddings") >= 1,
        "{:?}",
        web.requests()
    );
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
