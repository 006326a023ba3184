//! Auth and isolation through the real Worker: keys, origins, rate limits, and no site
//! ever reaching another site's conversations.

use concierge_e2e::api::{create_conversation, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

fn code(body: &str) -> String {
    let value: Value =
        serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON error body: {body}"));
    value["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn two_sites() -> (&'static Worker, TestSite, TestSite) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let a = site_with_upstream(worker, "Site A", &upstream.base_url, false);
    let b = site_with_upstream(worker, "Site B", &upstream.base_url, false);
    (worker, a, b)
}

#[test]
fn site_a_keys_never_reach_site_b_conversations() {
    let (worker, a, b) = two_sites();
    let (conversation_b, _) = create_conversation(worker, &b, json!({}));
    {
        let key = &a.secret_key;
        let (status, body) = into_parts(
            agent()
                .get(&worker.url(&format!("/conversations/{conversation_b}/history")))
                .set("x-api-key", key)
                .call(),
        );
        assert_eq!((status, code(&body).as_str()), (404, "not_found"));
        let (status, body) = into_parts(
            agent()
                .post(&worker.url(&format!("/conversations/{conversation_b}/messages")))
                .set("x-api-key", key)
                .send_json(json!({"content": "kiểm tra bảo hành"})),
        );
        assert_eq!((status, code(&body).as_str()), (404, "not_found"));
        let (status, _) = into_parts(
            agent()
                .delete(&worker.url(&format!("/conversations/{conversation_b}")))
                .set("x-api-key", key)
                .call(),
        );
        assert_eq!(status, 404);
    }
    // Site A's public key from its own allowed origin: still not B's conversation.
    let (status, _) = into_parts(
        agent()
            .get(&worker.url(&format!("/conversations/{conversation_b}/history")))
            .set("x-api-key", &a.public_key)
            .set("origin", "https://shop.example")
            .call(),
    );
    assert_eq!(status, 404);
    // B's own key still sees it, untouched.
    let (status, body) = into_parts(
        agent()
            .get(&worker.url(&format!("/conversations/{conversation_b}/history")))
            .set("x-api-key", &b.secret_key)
            .call(),
    );
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON")["messages"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn missing_or_wrong_keys_are_401() {
    let (worker, a, _) = two_sites();
    let url = worker.url("/conversations");
    let (status, body) = into_parts(agent().post(&url).send_json(json!({})));
    assert_eq!((status, code(&body).as_str()), (401, "unauthorized"));
    let (status, _) = into_parts(
        agent()
            .post(&url)
            .set("x-api-key", "sk_0000")
            .send_json(json!({})),
    );
    assert_eq!(status, 401);
    let wrong = format!("{}x", a.secret_key);
    let (status, _) = into_parts(
        agent()
            .post(&url)
            .set("x-api-key", &wrong)
            .send_json(json!({})),
    );
    assert_eq!(status, 401);
    let (status, _) = into_parts(
        agent()
            .post(&url)
            .set("x-api-key", "not-a-key")
            .send_json(json!({})),
    );
    assert_eq!(status, 401);
}

#[test]
fn public_keys_only_from_allowed_origins() {
    let (worker, a, _) = two_sites();
    let url = worker.url("/conversations");
    let post = |origin: Option<&str>| {
        let mut request = agent().post(&url).set("x-api-key", &a.public_key);
        if let Some(origin) = origin {
            request = request.set("origin", origin);
        }
        into_parts(request.send_json(json!({})))
    };
    let (status, body) = post(Some("https://evil.example"));
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"));
    let (status, body) = post(None);
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"));
    let (status, body) = post(Some("https://shop.example"));
    assert_eq!(status, 201, "{body}");
    // The Worker's own origin (the widget's iframe) alone is not: the panel must name
    // the page framing it, and the site must allow that page (see hardening_origins).
    let (status, body) = post(Some(&worker.base_url));
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"));
}

#[test]
fn bad_message_bodies_get_400_and_413() {
    let (worker, a, _) = two_sites();
    let (conversation, _) = create_conversation(worker, &a, json!({}));
    let url = worker.url(&format!("/conversations/{conversation}/messages"));
    let post = |body: &str| {
        into_parts(
            agent()
                .post(&url)
                .set("x-api-key", &a.secret_key)
                .set("content-type", "application/json")
                .send_string(body),
        )
    };
    assert_eq!(post("{").0, 400);
    assert_eq!(post("{}").0, 400, "content is required");
    assert_eq!(post(r#"{"content": "   "}"#).0, 400);
    assert_eq!(post(r#"{"content": 5}"#).0, 400);
    let big = format!(r#"{{"content": "{}"}}"#, "a".repeat(33 * 1024));
    let (status, body) = post(&big);
    assert_eq!((status, code(&body).as_str()), (413, "payload_too_large"));
    // Nothing was stored by any of them.
    let (_, body) = into_parts(
        agent()
            .get(&worker.url(&format!("/conversations/{conversation}/history")))
            .set("x-api-key", &a.secret_key)
            .call(),
    );
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON")["messages"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn public_key_requests_are_rate_limited() {
    let (worker, a, _) = two_sites();
    let mut statuses = Vec::new();
    // The limit is 120 a minute per site and client; windows align to the wall clock, so
    // allow for one rollover during the loop.
    for _ in 0..260 {
        let (status, _) = into_parts(
            agent()
                .get(&worker.url("/widget/config"))
                .set("x-api-key", &a.public_key)
                .set("origin", "https://shop.example")
                .call(),
        );
        statuses.push(status);
        if status == 429 {
            break;
        }
    }
    assert_eq!(statuses.first(), Some(&200));
    assert_eq!(
        statuses.last(),
        Some(&429),
        "limited after {} requests",
        statuses.len()
    );
}
