//! Visitor identity: signed user tokens, secret-key body identities, and conversations
//! bound to the identity that created them.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use concierge_e2e::api::{error_code, history, send, site_with_upstream, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use super::{admin_site, message};

const ORIGIN: &str = "https://shop.example";

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A user token as the merchant's backend mints it:
/// `b64url(claims) "." b64url(HMAC-SHA256(secret, first part))`.
pub(crate) fn mint(secret: &str, claims: &Value) -> String {
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC key");
    mac.update(payload.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{payload}.{signature}")
}

pub(crate) fn token_for(secret: &str, sub: &str) -> String {
    mint(secret, &json!({"sub": sub, "exp": now_secs() + 600}))
}

/// `POST /admin/site/user-token-secret`: the new secret.
pub(crate) fn new_token_secret(worker: &Worker, site: &TestSite) -> String {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/user-token-secret"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 201, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    let secret = json["user_token_secret"].as_str().expect("secret");
    assert!(secret.len() >= 32, "{secret}");
    secret.to_string()
}

/// A request with the site's public key from its allowed origin, and `token` if any.
fn public(request: ureq::Request, site: &TestSite, token: Option<&str>) -> ureq::Request {
    let request = request
        .set("x-api-key", &site.public_key)
        .set("origin", ORIGIN);
    match token {
        Some(token) => request.set("x-user-token", token),
        None => request,
    }
}

fn create(worker: &Worker, site: &TestSite, token: Option<&str>, body: Value) -> (u16, String) {
    into_parts(public(agent().post(&worker.url("/conversations")), site, token).send_json(body))
}

fn conversation_id(body: &str) -> String {
    let json: Value = serde_json::from_str(body).expect("JSON");
    json["conversation_id"].as_str().expect("id").to_string()
}

fn get_history(worker: &Worker, site: &TestSite, token: Option<&str>, id: &str) -> (u16, String) {
    let url = worker.url(&format!("/conversations/{id}/history"));
    into_parts(public(agent().get(&url), site, token).call())
}

fn post(worker: &Worker, site: &TestSite, token: Option<&str>, id: &str) -> (u16, String) {
    let url = worker.url(&format!("/conversations/{id}/messages"));
    into_parts(public(agent().post(&url), site, token).send_json(json!({"content": "xin chào"})))
}

fn delete(worker: &Worker, site: &TestSite, token: Option<&str>, id: &str) -> (u16, String) {
    let url = worker.url(&format!("/conversations/{id}"));
    let mut request = agent().delete(&url).set("x-api-key", &site.secret_key);
    if let Some(token) = token {
        request = request.set("x-user-token", token);
    }
    into_parts(request.call())
}

fn conversation_count(worker: &Worker, site: &TestSite) -> u64 {
    let rows = worker.site_rows(
        site,
        &format!(
            "SELECT COUNT(*) AS n FROM conversations WHERE site_id = '{}'",
            site.id
        ),
    );
    rows[0]["n"].as_u64().expect("count")
}

#[test]
fn a_token_identified_conversation_is_404_to_other_identities_and_to_anonymous_callers() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Identity shop", &upstream.base_url, false);
    assert_eq!(admin_site(worker, &site)["user_token_secret_set"], false);
    let secret = new_token_secret(worker, &site);
    let shown = admin_site(worker, &site);
    assert_eq!(shown["user_token_secret_set"], true);
    assert!(!shown.to_string().contains(&secret), "{shown}");
    // The public key cannot make or see one.
    let (status, _) = into_parts(
        public(
            agent().post(&worker.url("/admin/site/user-token-secret")),
            &site,
            None,
        )
        .call(),
    );
    assert_eq!(status, 403);

    let alice = token_for(&secret, "alice");
    let bob = token_for(&secret, "bob");
    let (status, body) = create(worker, &site, Some(&alice), json!({"user_id": "mallory"}));
    assert_eq!(status, 201, "{body}");
    let id = conversation_id(&body);
    assert_eq!(get_history(worker, &site, Some(&alice), &id).0, 200);

    for (who, token) in [("bob", Some(bob.as_str())), ("anonymous", None)] {
        let (status, body) = get_history(worker, &site, token, &id);
        assert_eq!(
            (status, error_code(&body).as_str()),
            (404, "not_found"),
            "{who}: {body}"
        );
        let (status, body) = post(worker, &site, token, &id);
        assert_eq!(
            (status, error_code(&body).as_str()),
            (404, "not_found"),
            "{who}: {body}"
        );
    }
    let (status, body) = delete(worker, &site, Some(&bob), &id);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (404, "not_found"),
        "{body}"
    );
    // Nothing the refused calls did is stored: the greeting only.
    let stored = history(worker, &site.secret_key, &id);
    assert_eq!(stored.len(), 1, "{stored:?}");

    // Alice's turn works; so does her role changing (the subject is the identity).
    upstream.push(Reply::text("Dạ, em chào chị ạ."));
    let url = worker.url(&format!("/conversations/{id}/messages"));
    let response = public(agent().post(&url), &site, Some(&alice))
        .send_json(json!({"content": "xin chào"}))
        .expect("turn");
    let events = concierge_e2e::read_events(response.into_reader());
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let landlord = mint(
        &secret,
        &json!({"sub": "alice", "role": "LANDLORD", "exp": now_secs() + 60}),
    );
    assert_eq!(get_history(worker, &site, Some(&landlord), &id).0, 200);

    // An anonymous conversation is not reached with a token either.
    let (status, body) = create(worker, &site, None, json!({}));
    assert_eq!(status, 201, "{body}");
    let anonymous = conversation_id(&body);
    assert_eq!(get_history(worker, &site, None, &anonymous).0, 200);
    assert_eq!(get_history(worker, &site, Some(&alice), &anonymous).0, 404);
}

#[test]
fn tampered_expired_and_wrongly_signed_tokens_are_401_and_store_nothing() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Token shop", &upstream.base_url, false);
    let secret = new_token_secret(worker, &site);
    let alice = token_for(&secret, "alice");
    let (status, body) = create(worker, &site, Some(&alice), json!({}));
    assert_eq!(status, 201, "{body}");
    let id = conversation_id(&body);

    let (_, signature) = alice.split_once('.').expect("two parts");
    let forged_claims = URL_SAFE_NO_PAD
        .encode(json!({"sub": "alice", "role": "LANDLORD", "exp": now_secs() + 600}).to_string());
    let tampered = format!("{forged_claims}.{signature}");
    let expired = mint(&secret, &json!({"sub": "alice", "exp": now_secs() - 5}));
    let other_secret = token_for("uts_not_this_sites_secret_0123456789abcdef", "alice");
    let cases = [
        ("tampered", tampered.as_str(), "signature"),
        ("expired", expired.as_str(), "expired"),
        ("wrongly signed", other_secret.as_str(), "signature"),
        ("malformed", "not-a-token", "malformed"),
    ];
    let before = conversation_count(worker, &site);
    for (what, token, says) in cases {
        for (route, (status, body)) in [
            ("create", create(worker, &site, Some(token), json!({}))),
            ("history", get_history(worker, &site, Some(token), &id)),
            ("message", post(worker, &site, Some(token), &id)),
            ("delete", delete(worker, &site, Some(token), &id)),
        ] {
            assert_eq!(
                (status, error_code(&body).as_str()),
                (401, "invalid_user_token"),
                "{what} on {route}: {body}"
            );
            assert!(message(&body).contains(says), "{what} on {route}: {body}");
            assert!(!body.contains(token), "the token is not echoed: {body}");
        }
    }
    assert_eq!(
        conversation_count(worker, &site),
        before,
        "no conversation created"
    );
    assert_eq!(
        history(worker, &site.secret_key, &id).len(),
        1,
        "no message stored"
    );

    // Rotation: tokens signed with the old secret stop verifying.
    let rotated = new_token_secret(worker, &site);
    assert_ne!(rotated, secret);
    let (status, body) = get_history(worker, &site, Some(&alice), &id);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (401, "invalid_user_token"),
        "{body}"
    );
    assert_eq!(
        get_history(worker, &site, Some(&token_for(&rotated, "alice")), &id).0,
        200
    );

    // A site without a secret accepts no tokens (rather than ignoring them).
    let plain = site_with_upstream(worker, "No secret", &upstream.base_url, false);
    let (status, body) = create(worker, &plain, Some(&alice), json!({}));
    assert_eq!(
        (status, error_code(&body).as_str()),
        (401, "invalid_user_token"),
        "{body}"
    );
}

#[test]
fn a_secret_key_body_identity_binds_the_conversation_and_a_public_body_user_id_does_not() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Body identity shop", &upstream.base_url, false);
    let secret = new_token_secret(worker, &site);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"user_id": "carol", "role": "TENANT",
                "permissions": ["public", "billing"], "department": "ops"})),
    );
    assert_eq!(status, 201, "{body}");
    let id = conversation_id(&body);
    let carol = token_for(&secret, "carol");
    let dave = token_for(&secret, "dave");
    assert_eq!(get_history(worker, &site, Some(&carol), &id).0, 200);
    assert_eq!(get_history(worker, &site, Some(&dave), &id).0, 404);
    assert_eq!(get_history(worker, &site, None, &id).0, 404);
    // The site's own server (secret key, no token) reaches it.
    assert_eq!(history(worker, &site.secret_key, &id).len(), 1);
    let rows = worker.site_rows(
        &site,
        &format!("SELECT user_id, identity FROM conversations WHERE id = '{id}'"),
    );
    let identity: Value =
        serde_json::from_str(rows[0]["identity"].as_str().expect("identity")).expect("JSON");
    assert_eq!(
        identity,
        json!({"sub": "carol", "role": "TENANT", "permissions": ["public", "billing"], "department": "ops"})
    );
    assert_eq!(rows[0]["user_id"], "carol");

    // A public key's body `user_id` is a label, not an identity.
    let (status, body) = create(worker, &site, None, json!({"user_id": "carol"}));
    assert_eq!(status, 201, "{body}");
    let labelled = conversation_id(&body);
    assert_eq!(get_history(worker, &site, Some(&carol), &labelled).0, 404);
    assert_eq!(get_history(worker, &site, None, &labelled).0, 200);
    // …and the claims need the secret key or a token.
    let (status, body) = create(
        worker,
        &site,
        None,
        json!({"user_id": "carol", "role": "LANDLORD"}),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"user_id": "", "role": "TENANT"})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );

    // A secret-key turn on the identified conversation works.
    upstream.push(Reply::text("Dạ vâng ạ."));
    let (status, events) = send(worker, &site.secret_key, &id, "xin chào");
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
}
