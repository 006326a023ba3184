//! User tokens live at most 24 hours: a token whose `exp` is further than that from now
//! (5 minutes are allowed for clock skew), or that has no `exp`, is refused with 401
//! `invalid_user_token` saying why, on every route that reads one.

use concierge_e2e::api::{error_code, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::json;

use super::message;
use crate::identity::tokens::{mint, new_token_secret, now_secs};

const ORIGIN: &str = "https://shop.example";
const DAY: u64 = 24 * 60 * 60;

fn create(worker: &Worker, site: &TestSite, token: &str) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.public_key)
            .set("origin", ORIGIN)
            .set("x-user-token", token)
            .send_json(json!({})),
    )
}

#[test]
fn user_tokens_living_longer_than_24_hours_or_forever_are_refused() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Token lifetime", &upstream.base_url, false);
    let secret = new_token_secret(worker, &site);
    let now = now_secs();

    for exp in [now + 600, now + DAY - 60, now + DAY + 60] {
        let token = mint(&secret, &json!({"sub": "alice", "exp": exp}));
        let (status, body) = create(worker, &site, &token);
        assert_eq!(status, 201, "exp in {} s: {body}", exp - now);
    }
    let count = || {
        worker.site_rows(
            &site,
            &format!(
                "SELECT COUNT(*) AS n FROM conversations WHERE site_id = '{}'",
                site.id
            ),
        )[0]["n"]
            .as_u64()
            .expect("count")
    };
    let before = count();
    for exp in [
        now + DAY + 3600,
        now + 8 * DAY,
        now + 100 * 365 * DAY,
        u64::MAX,
    ] {
        let token = mint(&secret, &json!({"sub": "alice", "exp": exp}));
        let (status, body) = create(worker, &site, &token);
        assert_eq!(
            (status, error_code(&body).as_str()),
            (401, "invalid_user_token"),
            "exp in {} s: {body}",
            exp.saturating_sub(now)
        );
        assert!(message(&body).contains("24 hours"), "{body}");
    }
    // No `exp` at all: refused too.
    let forever = mint(&secret, &json!({"sub": "alice"}));
    let (status, body) = create(worker, &site, &forever);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (401, "invalid_user_token"),
        "{body}"
    );
    assert!(message(&body).contains("exp"), "{body}");
    assert_eq!(count(), before, "a refused token stored a conversation");
}
