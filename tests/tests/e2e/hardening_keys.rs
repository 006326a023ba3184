//! Issue 10, keys and abuse, tried as an attacker would (key leaks here; [`rotation`],
//! [`abuse`], and [`production`] for a Worker with production vars):
//! - a merchant pointing `llm.base_url` / `llm.embed_base_url` at its own server never
//!   receives the operator's `LLM_API_KEY` (neither from the turn nor from the queue
//!   consumer); a site's own key is sealed at rest and sent only to its own endpoint;
//!   endpoints are https, loopback http only in development;
//! - `PATCH /admin/site` and key rotation running together never revive a retired key nor
//!   lose an accepted change;
//! - anonymous (public-key) conversation creation is limited per client; the debug stream
//!   does not exist in production.

use std::time::Duration;

use concierge_e2e::api::{
    TURNS_UNTIL_EMBEDDED, create_conversation, error_code, eventually, more_turns, send, terminal,
};
use concierge_e2e::upstream::{Recorded, ScriptedUpstream};
use concierge_e2e::{OPERATOR_TOKEN, TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

mod abuse;
mod production;
mod rotation;

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON body: {body}"))
}

fn get_site(worker: &Worker, secret: &str) -> (u16, String) {
    into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", secret)
            .call(),
    )
}

fn patch_site(worker: &Worker, secret: &str, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", secret)
            .send_json(body),
    )
}

fn create_site_raw(worker: &Worker, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url("/admin/sites"))
            .set("authorization", &format!("Bearer {OPERATOR_TOKEN}"))
            .send_json(body),
    )
}

/// A question the shop flow answers with the model (a greeting would not reach it).
const QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 20 triệu";

/// Run one model turn with the secret key and check it completed.
fn completed_turn(worker: &Worker, site: &TestSite) {
    let (conversation, _) = create_conversation(worker, site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, QUESTION);
    assert_eq!(status, 200);
    let (name, data) = terminal(&events);
    assert_eq!(name, "completed", "{data}");
}

/// A conversation grown until its first exchange is embedded (it leaves the history window).
fn remembered_turns(worker: &Worker, site: &TestSite) {
    let (conversation, _) = create_conversation(worker, site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, QUESTION);
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed");
    more_turns(
        worker,
        &site.secret_key,
        &conversation,
        TURNS_UNTIL_EMBEDDED,
    );
}

fn authorizations(recorded: &[Recorded]) -> Vec<(String, Option<String>)> {
    recorded
        .iter()
        .map(|r| (r.path.clone(), r.authorization.clone()))
        .collect()
}

#[test]
fn a_merchant_endpoint_never_receives_the_operator_key() {
    let worker = Worker::shared();
    // The attacker's "LLM": it answers properly and records every request.
    let attacker = ScriptedUpstream::start();
    let site = worker.create_site(json!({
        "name": "Thief shop",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", attacker.base_url),
                "model": "scripted", "embed_model": "scripted-embed"}
    }));
    remembered_turns(worker, &site);
    // The queue consumer embeds the exchange through the same endpoint.
    let recorded = eventually(
        Duration::from_secs(30),
        "the exchange embedded at the merchant's endpoint",
        || {
            let recorded = attacker.recorded();
            recorded
                .iter()
                .any(|r| r.path.ends_with("/embeddings"))
                .then_some(recorded)
        },
    );
    assert!(
        recorded
            .iter()
            .any(|r| r.path.ends_with("/chat/completions"))
    );
    for (path, authorization) in authorizations(&recorded) {
        assert_eq!(
            authorization, None,
            "the merchant's endpoint received an Authorization header on {path}"
        );
    }
}

#[test]
fn an_embeddings_endpoint_alone_never_receives_the_operator_key() {
    let worker = Worker::shared();
    let attacker = ScriptedUpstream::start();
    // Only the embeddings endpoint is the merchant's; chat stays the operator's.
    let site = worker.create_site(json!({
        "name": "Embed thief",
        "llm": {"embed_base_url": format!("{}/v1", attacker.base_url), "embed_model": "scripted-embed"}
    }));
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/knowledge/faq"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"title": "FAQ", "content": "Giao hàng toàn quốc trong 3 ngày."})),
    );
    assert!(status == 200 || status == 201, "{status} {body}");
    let recorded = eventually(
        Duration::from_secs(30),
        "the document embedded at the merchant's endpoint",
        || {
            let recorded = attacker.recorded();
            (!recorded.is_empty()).then_some(recorded)
        },
    );
    for (path, authorization) in authorizations(&recorded) {
        assert_eq!(
            authorization, None,
            "the merchant's embeddings endpoint received an Authorization header on {path}"
        );
    }
}

#[test]
fn site_endpoints_are_https_or_development_loopback() {
    let worker = Worker::shared();
    let refused = [
        json!({"embed_base_url": "ftp://llm.attacker.example/v1"}),
        json!({"embed_base_url": "javascript:alert(1)"}),
        json!({"base_url": "http://llm.attacker.example/v1"}),
        json!({"embed_base_url": "http://10.0.0.8:11434"}),
        json!({"base_url": "https://user:hunter2@llm.example/v1"}),
        json!({"base_url": "https://llm.example/v1?key=abc"}),
    ];
    for llm in refused {
        let (status, body) = create_site_raw(worker, json!({"name": "Bad endpoint", "llm": llm}));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{llm} must be refused: {body}"
        );
    }
    // A site that exists keeps its settings when a PATCH is refused.
    let site = worker.create_site(json!({
        "name": "Good endpoint",
        "llm": {"base_url": "https://llm.example/v1", "embed_base_url": "http://127.0.0.1:11434"}
    }));
    let (status, before) = get_site(worker, &site.secret_key);
    assert_eq!(status, 200, "{before}");
    let (status, body) = patch_site(
        worker,
        &site.secret_key,
        json!({"llm": {"embed_base_url": "gopher://x.example"}}),
    );
    assert_eq!((status, error_code(&body).as_str()), (400, "bad_request"));
    let (_, after) = get_site(worker, &site.secret_key);
    assert_eq!(
        parse(&after),
        parse(&before),
        "a refused PATCH changes nothing"
    );
}

#[test]
fn a_site_key_is_sealed_at_rest_and_goes_only_to_its_own_endpoint() {
    let worker = Worker::shared();
    let own = ScriptedUpstream::start();
    let merchant_key = "sk-merchant-own-key-0c4b7f2e9a61";
    let site = worker.create_site(json!({
        "name": "Own key shop",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", own.base_url), "model": "scripted",
                "embed_model": "scripted-embed", "api_key": merchant_key}
    }));
    completed_turn(worker, &site);
    let expected = Some(format!("Bearer {merchant_key}"));
    let chats = own.chat_requests();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].authorization, expected);

    // Never shown, never stored in the clear.
    let (status, body) = get_site(worker, &site.secret_key);
    assert_eq!(status, 200);
    assert_eq!(parse(&body)["site"]["llm_api_key_set"], true);
    assert!(!body.contains(merchant_key), "{body}");
    let rows = worker.d1_rows(&format!(
        "SELECT config FROM sites WHERE id = '{}'",
        site.id
    ));
    assert_eq!(rows.len(), 1);
    let stored = rows[0]["config"].as_str().expect("config");
    assert!(
        !stored.contains(merchant_key) && !stored.contains("sk-merchant"),
        "the site's key is stored in the clear: {stored}"
    );

    // Refused changes leave the key and the endpoint as they were.
    let before = parse(&body);
    let (status, _) = patch_site(
        worker,
        &site.secret_key,
        json!({"llm": {"base_url": "http://evil.example/v1"}}),
    );
    assert_eq!(status, 400);
    let (status, body) = patch_site(
        worker,
        &site.secret_key,
        json!({"llm": {"api_key": "sk-for-the-operator-endpoint"}}),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "a key without the site's own endpoint would go nowhere: {body}"
    );
    let (_, after) = get_site(worker, &site.secret_key);
    assert_eq!(parse(&after), before, "refused PATCHes change nothing");
    completed_turn(worker, &site);
    let chats = own.chat_requests();
    assert_eq!(
        chats.last().map(|c| c.authorization.clone()),
        Some(expected)
    );

    // Moving the endpoint without a new key drops the key: it was given for the old one.
    let other = ScriptedUpstream::start();
    let (status, body) = patch_site(
        worker,
        &site.secret_key,
        json!({"llm": {"provider": "openai", "base_url": format!("{}/v1", other.base_url),
                       "model": "scripted", "embed_model": "scripted-embed"}}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(parse(&body)["site"]["llm_api_key_set"], false);
    completed_turn(worker, &site);
    let chats = other.chat_requests();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].authorization, None);
}

#[test]
fn a_key_stored_in_the_clear_before_still_works_and_is_sealed_on_the_next_update() {
    let worker = Worker::shared();
    let own = ScriptedUpstream::start();
    let legacy_key = "sk-legacy-plaintext-7e1d";
    let site = worker.create_site(json!({
        "name": "Legacy key shop",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", own.base_url), "model": "scripted",
                "embed_model": "scripted-embed"}
    }));
    // As an older version stored it (before any lookup has cached the site).
    worker.d1_rows(&format!(
        "UPDATE sites SET config = json_set(config, '$.llm.api_key', '{legacy_key}') WHERE id = '{}'",
        site.id
    ));
    let expected = Some(format!("Bearer {legacy_key}"));
    completed_turn(worker, &site);
    assert_eq!(own.chat_requests()[0].authorization, expected);
    let (_, body) = get_site(worker, &site.secret_key);
    assert_eq!(parse(&body)["site"]["llm_api_key_set"], true);
    assert!(!body.contains(legacy_key), "{body}");

    let (status, body) = patch_site(worker, &site.secret_key, json!({"title": "Legacy"}));
    assert_eq!(status, 200, "{body}");
    let stored = worker.d1_rows(&format!(
        "SELECT config FROM sites WHERE id = '{}'",
        site.id
    ));
    let stored = stored[0]["config"].as_str().expect("config");
    assert!(!stored.contains(legacy_key), "still in the clear: {stored}");
    completed_turn(worker, &site);
    assert_eq!(
        own.chat_requests().last().map(|c| c.authorization.clone()),
        Some(expected),
        "the sealed key still works"
    );
}
