//! Issue 10, keys and abuse, tried as an attacker would:
//! - a merchant pointing `llm.base_url` / `llm.embed_base_url` at its own server never
//!   receives the operator's `LLM_API_KEY` (neither from the turn nor from the queue
//!   consumer); a site's own key is sealed at rest and sent only to its own endpoint;
//!   endpoints are https, loopback http only in development;
//! - `PATCH /admin/site` and key rotation running together never revive a retired key nor
//!   lose an accepted change;
//! - anonymous (public-key) conversation creation is limited per client; the debug stream
//!   does not exist in production.

use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use concierge_e2e::api::{create_conversation, eventually, send, terminal};
use concierge_e2e::upstream::{Recorded, ScriptedUpstream};
use concierge_e2e::{
    OPERATOR_LLM_KEY, OPERATOR_TOKEN, TestSite, Worker, WorkerOptions, agent, into_parts,
};
use serde_json::{Value, json};

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON body: {body}"))
}

fn error_code(body: &str) -> String {
    parse(body)["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("error.code in {body}"))
        .to_string()
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
    completed_turn(worker, &site);
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

/// Keys of a site as the race test tracks them.
#[derive(Debug, Clone)]
struct Keys {
    public: String,
    secret: String,
}

#[test]
fn patch_and_rotation_run_together_and_keep_every_accepted_change() {
    const ROUNDS: usize = 25;
    let worker = Worker::shared();
    let origin = "https://race.example";
    let site = worker.create_site(json!({"name": "Race shop", "allowed_origins": [origin]}));
    let current = Arc::new(Mutex::new(Keys {
        public: site.public_key.clone(),
        secret: site.secret_key.clone(),
    }));
    let retired = Arc::new(Mutex::new(Vec::<Keys>::new()));
    let now = |keys: &Arc<Mutex<Keys>>| keys.lock().expect("keys").clone();

    let rotator = {
        let (current, retired) = (Arc::clone(&current), Arc::clone(&retired));
        thread::spawn(move || {
            let worker = Worker::shared();
            for round in 0..ROUNDS {
                let keys = now(&current);
                let (status, body) = into_parts(
                    agent()
                        .post(&worker.url("/admin/site/rotate-keys"))
                        .set("x-api-key", &keys.secret)
                        .call(),
                );
                assert_eq!(
                    status, 200,
                    "round {round}: rotating with the current secret key: {body}"
                );
                let json = parse(&body);
                *current.lock().expect("keys") = Keys {
                    public: json["public_key"].as_str().expect("public").to_string(),
                    secret: json["secret_key"].as_str().expect("secret").to_string(),
                };
                retired.lock().expect("retired").push(keys);
                thread::sleep(Duration::from_millis(15));
            }
        })
    };
    // Two writers of different fields: each accepted PATCH must survive the other's.
    let patcher = |field: &'static str| {
        let current = Arc::clone(&current);
        thread::spawn(move || {
            let worker = Worker::shared();
            let (mut last_accepted, mut accepted, mut refused) = (None, 0, 0);
            for round in 0..ROUNDS {
                let value = format!("{field} {round}");
                let body = match field {
                    "title" => json!({"title": value}),
                    _ => json!({"starter_prompts": [value]}),
                };
                // A PATCH that meets a rotated key is retried with the newest key.
                for _ in 0..4 {
                    let (status, text) = patch_site(worker, &now(&current).secret, body.clone());
                    match status {
                        200 => {
                            last_accepted = Some(value.clone());
                            accepted += 1;
                            break;
                        }
                        // The key was rotated under this request: nothing was written.
                        401 => refused += 1,
                        _ => panic!("{field} round {round}: {status} {text}"),
                    }
                }
            }
            eprintln!("{field}: {accepted} PATCHes accepted, {refused} met a rotated key");
            last_accepted
        })
    };
    let titles = patcher("title");
    let prompts = patcher("prompt");
    rotator.join().expect("rotator");
    let title = titles.join().expect("title writer");
    let prompt = prompts.join().expect("prompt writer");

    let keys = now(&current);
    let (status, body) = get_site(worker, &keys.secret);
    assert_eq!(status, 200, "the newest secret key works: {body}");
    let config = &parse(&body)["site"]["config"];
    let title = title.expect("some title PATCH was accepted");
    let prompt = prompt.expect("some starter_prompts PATCH was accepted");
    assert_eq!(config["title"], title.as_str(), "{config}");
    assert_eq!(config["starter_prompts"], json!([prompt]), "{config}");

    let widget = |public: &str| {
        into_parts(
            agent()
                .get(&worker.url("/widget/config"))
                .set("x-api-key", public)
                .set("origin", origin)
                .set("cf-connecting-ip", "198.51.100.40")
                .call(),
        )
        .0
    };
    assert_eq!(widget(&keys.public), 200, "the newest public key works");
    let retired = retired.lock().expect("retired").clone();
    assert_eq!(retired.len(), ROUNDS);
    for (i, old) in retired.iter().enumerate() {
        assert_eq!(
            get_site(worker, &old.secret).0,
            401,
            "retired secret key {i} still works"
        );
        assert_eq!(
            widget(&old.public),
            401,
            "retired public key {i} still works"
        );
    }
}

#[test]
fn a_rotated_key_stops_working_at_once_here() {
    let worker = Worker::shared();
    let origin = "https://rotate.example";
    let site = worker.create_site(json!({"name": "Rotate shop", "allowed_origins": [origin]}));
    let widget = |public: &str| {
        into_parts(
            agent()
                .get(&worker.url("/widget/config"))
                .set("x-api-key", public)
                .set("origin", origin)
                .call(),
        )
    };
    // Both keys cached (KV and this isolate) before the rotation.
    assert_eq!(widget(&site.public_key).0, 200);
    assert_eq!(get_site(worker, &site.secret_key).0, 200);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/rotate-keys"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let keys = parse(&body);
    let (status, body) = widget(&site.public_key);
    assert_eq!((status, error_code(&body).as_str()), (401, "unauthorized"));
    let (status, body) = get_site(worker, &site.secret_key);
    assert_eq!((status, error_code(&body).as_str()), (401, "unauthorized"));
    // A second rotation with the retired key is refused and changes nothing.
    let (status, _) = into_parts(
        agent()
            .post(&worker.url("/admin/site/rotate-keys"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 401);
    assert_eq!(widget(keys["public_key"].as_str().expect("public")).0, 200);
    assert_eq!(
        get_site(worker, keys["secret_key"].as_str().expect("secret")).0,
        200
    );
}

#[test]
fn anonymous_conversation_creation_is_limited_per_client() {
    let worker = Worker::shared();
    let origin = "https://busy.example";
    let site = worker.create_site(json!({"name": "Busy shop", "allowed_origins": [origin]}));
    let create = |client: &str| {
        let result = agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.public_key)
            .set("origin", origin)
            .set("cf-connecting-ip", client)
            .send_json(json!({}));
        match result {
            Ok(r) | Err(ureq::Error::Status(_, r)) => {
                let retry_after = r.header("retry-after").map(str::to_string);
                (r.status(), retry_after, r.into_string().unwrap_or_default())
            }
            Err(err) => panic!("create: {err}"),
        }
    };
    let mut statuses = Vec::new();
    let mut refused = None;
    // The limit is 20 a minute per site and client; windows align to the wall clock, so
    // allow for one rollover during the loop.
    for _ in 0..60 {
        let (status, retry_after, body) = create("198.51.100.20");
        statuses.push(status);
        if status == 429 {
            refused = Some((retry_after, body));
            break;
        }
        assert_eq!(status, 201, "{body}");
    }
    let (retry_after, body) = refused.unwrap_or_else(|| {
        panic!(
            "{} conversations created by one client, none refused",
            statuses.len()
        )
    });
    assert!(
        statuses.len() <= 41,
        "refused only after {}",
        statuses.len()
    );
    assert_eq!(error_code(&body), "rate_limited");
    assert!(!body.contains("conversation_id"), "{body}");
    assert!(
        retry_after.is_some_and(|s| s.parse::<u32>().is_ok_and(|n| n > 0)),
        "a retry-after header"
    );
    // Another visitor of the same site is not affected.
    let (status, _, body) = create("198.51.100.21");
    assert_eq!(status, 201, "{body}");
}

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
