//! The same attacks against a Worker with production vars: no development flags, no
//! sealing secret. One Worker for all of them (it costs a start-up).

use std::sync::OnceLock;

use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{OPERATOR_LLM_KEY, OPERATOR_TOKEN, Worker, WorkerOptions, agent, into_parts};
use serde_json::json;

use concierge_e2e::api::error_code;

use super::{completed_turn, create_site_raw, get_site, parse, patch_site};

/// A second Worker with production vars: no development flags, no sealing secret, an
/// operator endpoint (loopback here, which the operator may configure) with its key.
fn production() -> &'static (Worker, ScriptedUpstream) {
    static PRODUCTION: OnceLock<(Worker, ScriptedUpstream)> = OnceLock::new();
    PRODUCTION.get_or_init(|| {
        let operator = ScriptedUpstream::start();
        let vars = [
            ("OPERATOR_TOKEN", OPERATOR_TOKEN.to_string()),
            ("RETRIEVAL_BACKEND", "local".to_string()),
            ("LLM_PROVIDER", "openai".to_string()),
            ("LLM_BASE_URL", format!("{}/v1", operator.base_url)),
            ("LLM_MODEL", "scripted".to_string()),
            ("EMBED_MODEL", "scripted-embed".to_string()),
            ("LLM_API_KEY", OPERATOR_LLM_KEY.to_string()),
            ("LLM_FIRST_TOKEN_TIMEOUT_MS", "3000".to_string()),
        ];
        let worker = Worker::start(&WorkerOptions {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            ..WorkerOptions::default()
        });
        (worker, operator)
    })
}

#[test]
fn production_has_no_debug_stream_no_loopback_endpoints_and_no_unsealed_keys() {
    let (worker, operator) = production();

    let (status, body) = into_parts(agent().get(&worker.url("/debug/stream")).call());
    assert_eq!((status, error_code(&body).as_str()), (404, "not_found"));
    // Nor scripted turns (checked before any key).
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/debug/conversations/c1/script"))
            .send_json(json!({"steps": [{"type": "chunk", "text": "x"}]})),
    );
    assert_eq!((status, error_code(&body).as_str()), (404, "not_found"));

    for llm in [
        json!({"base_url": format!("{}/v1", operator.base_url)}),
        json!({"embed_base_url": "http://127.0.0.1:11434"}),
        json!({"base_url": "http://localhost:8080/v1"}),
    ] {
        let (status, body) = create_site_raw(worker, json!({"name": "Loopback", "llm": llm}));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{llm}: {body}"
        );
    }
    let site = worker.create_site(json!({
        "name": "Https shop", "llm": {"base_url": "https://llm.merchant.example/v1"}
    }));
    let (_, before) = get_site(worker, &site.secret_key);
    // No sealing secret configured: a site key is refused, not stored in the clear.
    let (status, body) = patch_site(
        worker,
        &site.secret_key,
        json!({"llm": {"base_url": "https://llm.merchant.example/v1", "api_key": "sk-merchant-9"}}),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (403, "forbidden"),
        "{body}"
    );
    let (_, after) = get_site(worker, &site.secret_key);
    assert_eq!(parse(&after), parse(&before));
    assert_eq!(parse(&after)["site"]["llm_api_key_set"], false);
    let (status, body) = create_site_raw(
        worker,
        json!({"name": "Key shop", "llm": {"base_url": "https://llm.merchant.example/v1", "api_key": "sk-merchant-9"}}),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (403, "forbidden"),
        "{body}"
    );
    let rows = worker.d1_rows("SELECT config FROM sites WHERE config LIKE '%sk-merchant-9%'");
    assert!(rows.is_empty(), "{rows:?}");
}

#[test]
fn production_sends_the_operator_key_to_the_operator_endpoint_only() {
    let (worker, operator) = production();
    let site = worker.create_site(json!({"name": "Operator shop"}));
    completed_turn(worker, &site);
    let chats = operator.chat_requests();
    assert!(!chats.is_empty());
    let expected = format!("Bearer {OPERATOR_LLM_KEY}");
    for chat in chats {
        assert_eq!(chat.authorization.as_deref(), Some(expected.as_str()));
    }
}
