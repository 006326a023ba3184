//! The widget passes the visitor's user token on: `data-user-token` on the tag, then
//! `Concierge.identify(token)`, in real headless Chromium.

use concierge_e2e::Worker;
use concierge_e2e::host_page::{HostPage, embed_tag_with};
use concierge_e2e::upstream::ScriptedUpstream;
use serde_json::json;

use super::tokens::{new_token_secret, token_for};

#[test]
fn the_widget_sends_the_tag_token_then_the_identified_one_in_a_new_conversation() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let page = HostPage::start();
    let site = worker.create_site(json!({
        "name": "Identity widget shop",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": [page.origin.as_str()],
    }));
    let secret = new_token_secret(worker, &site);
    let (alice, bob) = (token_for(&secret, "alice"), token_for(&secret, "bob"));
    let tag = embed_tag_with(
        worker,
        &site.public_key,
        &format!(r#"data-user-token="{alice}""#),
    );
    page.set(
        format!("<!doctype html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Identity</title></head><body><h1>Identity</h1>{tag}</body></html>"),
        Vec::new(),
    );
    crate::browser::run(
        "identity",
        &page.url,
        &[("TOKEN_A", &alice), ("TOKEN_B", &bob)],
    );
}
