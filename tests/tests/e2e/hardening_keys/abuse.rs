//! Abuse limits observable locally: anonymous conversation creation per client.

use concierge_e2e::{Worker, agent};
use serde_json::json;

use concierge_e2e::api::error_code;

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

#[test]
fn health_shows_the_rate_limiters_that_requests_need() {
    // A missing limiter refuses the requests it limits (503): health makes it visible.
    let worker = Worker::shared();
    let (status, body) = concierge_e2e::get(&worker.url("/health"));
    assert_eq!(status, 200);
    let health: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    for binding in [
        "PUBLIC_RATE_LIMIT",
        "SITE_RATE_LIMIT",
        "SECRET_RATE_LIMIT",
        "CONVERSATION_RATE_LIMIT",
    ] {
        assert_eq!(health["bindings"][binding], true, "{binding} in {health}");
    }
}
