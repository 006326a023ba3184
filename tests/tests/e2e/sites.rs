//! Sites and keys through the real Worker: creation by the operator, admin routes by
//! secret key, key rotation, bad input, CORS and origins.

use concierge_e2e::api::error_code;
use concierge_e2e::{OPERATOR_TOKEN, Worker, agent, into_parts};
use serde_json::{Value, json};

#[test]
fn creating_a_site_needs_the_operator_token() {
    let worker = Worker::shared();
    let url = worker.url("/admin/sites");
    let (status, body) = into_parts(agent().post(&url).send_json(json!({"name": "X"})));
    assert_eq!((status, error_code(&body).as_str()), (401, "unauthorized"));
    let (status, body) = into_parts(
        agent()
            .post(&url)
            .set("authorization", "Bearer wrong")
            .send_json(json!({"name": "X"})),
    );
    assert_eq!((status, error_code(&body).as_str()), (401, "unauthorized"));
    let bearer = format!("Bearer {OPERATOR_TOKEN}");
    let (status, body) = into_parts(
        agent()
            .post(&url)
            .set("authorization", &bearer)
            .send_json(json!({})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "name is required"
    );
    let (status, body) = into_parts(
        agent()
            .post(&url)
            .set("authorization", &bearer)
            .send_json(json!({"name": "X", "template": "nope"})),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("template"), "{body}");
}

#[test]
fn site_admin_with_secret_key_and_never_with_public_key() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({
        "name": "Shop A", "allowed_origins": ["https://shop-a.example"],
        "llm": {"base_url": "http://127.0.0.1:9", "api_key": "upstream-secret-123"}
    }));
    assert!(site.public_key.starts_with("pk_") && site.secret_key.starts_with("sk_"));

    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(json["site"]["id"], site.id.as_str());
    assert_eq!(
        json["site"]["config"]["allowed_origins"],
        json!(["https://shop-a.example"])
    );
    assert_eq!(json["site"]["llm_api_key_set"], true);
    assert!(
        !body.contains("upstream-secret-123"),
        "the upstream key is never returned: {body}"
    );
    assert!(
        !body.contains(&site.secret_key) && !body.contains("key_hash"),
        "{body}"
    );

    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.public_key)
            .set("origin", "https://shop-a.example")
            .call(),
    );
    assert_eq!((status, error_code(&body).as_str()), (403, "forbidden"));

    let (status, _) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", "sk_doesnotexist")
            .call(),
    );
    assert_eq!(status, 401);

    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"starter_prompts": ["Hi"], "title": "Shop A help"})),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Shop A help"));
}

#[test]
fn bad_bodies_are_rejected_and_change_nothing() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Shop B"}));
    let patch = |body: &str| {
        into_parts(
            agent()
                .request("PATCH", &worker.url("/admin/site"))
                .set("x-api-key", &site.secret_key)
                .set("content-type", "application/json")
                .send_string(body),
        )
    };
    let (status, body) = patch("{not json");
    assert_eq!((status, error_code(&body).as_str()), (400, "bad_request"));
    let (status, body) = patch(r#"{"allowed_origins": ["not an origin"]}"#);
    assert_eq!((status, error_code(&body).as_str()), (400, "bad_request"));
    let big = format!(r#"{{"persona": "{}"}}"#, "x".repeat(40 * 1024));
    let (status, body) = patch(&big);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (413, "payload_too_large")
    );
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200);
    assert!(
        body.contains("Shop B") && !body.contains("xxxx"),
        "nothing changed: {body}"
    );
}

#[test]
fn rotating_keys_retires_the_old_ones() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Shop C"}));
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/rotate-keys"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let keys: Value = serde_json::from_str(&body).expect("JSON");
    let new_secret = keys["secret_key"].as_str().expect("new secret");
    assert_ne!(new_secret, site.secret_key);
    let (status, _) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 401, "old secret key no longer works");
    let (status, _) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", new_secret)
            .call(),
    );
    assert_eq!(status, 200);
}

#[test]
fn warranty_upsert_validates_every_record() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Shop D"}));
    let post = |body: Value| {
        into_parts(
            agent()
                .post(&worker.url("/admin/warranty"))
                .set("x-api-key", &site.secret_key)
                .send_json(body),
        )
    };
    let (status, body) = post(
        json!({"records": [{"serial": "0979825281", "product": "S23 Ultra", "warranty_until": "2026-08-12"}]}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"upserted\":1"));
    let (status, body) = post(
        json!({"records": [{"serial": "ab", "product": "X", "warranty_until": "2026-08-12"}]}),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("serial"));
    let (status, _) = post(
        json!({"records": [{"serial": "ABC-123", "product": "X", "warranty_until": "12/8/2026"}]}),
    );
    assert_eq!(status, 400);
}

#[test]
fn cors_preflight_only_for_allowed_origins() {
    let worker = Worker::shared();
    worker.create_site(json!({"name": "Shop E", "allowed_origins": ["https://shop-e.example"]}));
    let preflight = |origin: &str| -> (u16, Option<String>) {
        let result = agent()
            .request("OPTIONS", &worker.url("/admin/site"))
            .set("origin", origin)
            .set("access-control-request-method", "POST")
            .call();
        match result {
            Ok(r) | Err(ureq::Error::Status(_, r)) => (
                r.status(),
                r.header("access-control-allow-origin").map(str::to_string),
            ),
            Err(err) => panic!("preflight: {err}"),
        }
    };
    assert_eq!(
        preflight("https://shop-e.example"),
        (204, Some("https://shop-e.example".to_string()))
    );
    assert_eq!(
        preflight("https://evil.example"),
        (403, None),
        "a disallowed origin gets no CORS headers"
    );
}
