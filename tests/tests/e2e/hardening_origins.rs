//! Issue 10, defect 2: a site's public key works only for the site's own pages.
//!
//! Public keys are public (they sit in every merchant page's HTML); what stops another
//! website from chatting on a merchant's bill is the browser's `Origin` and the panel's
//! framing policy. Each test plays the attacker against a victim site that allows
//! `https://shop.example` and `https://www.shop.example`, and checks what both observe:
//! the attacker's status and JSON error, the victim's requests still working, and nothing
//! stored or sent to the model by a refused request. The browser side (an attacker page
//! embedding `embed.js` with the victim's key) is in `browser.rs`.

use concierge_e2e::api::{create_conversation, error_code as code, history};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::json;

/// The victim's allowed origins, in the order the site lists them.
const ALLOWED: [&str; 2] = ["https://shop.example", "https://www.shop.example"];
/// The header the panel names its embedder in.
const EMBEDDER: &str = "x-embedder-origin";

/// The victim: a site whose model is `upstream`, usable from [`ALLOWED`].
fn victim(worker: &Worker, upstream: &ScriptedUpstream) -> TestSite {
    upstream.set_default(Reply::text("Dạ, em chào anh chị."));
    worker.create_site(json!({
        "name": "Victim shop",
        "allowed_origins": ALLOWED,
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
    }))
}

/// `POST /conversations` with the public key and `headers`: status and body.
fn create_with(worker: &Worker, site: &TestSite, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = agent()
        .post(&worker.url("/conversations"))
        .set("x-api-key", &site.public_key);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    into_parts(request.send_json(json!({})))
}

/// A client that reports redirects instead of following them.
fn no_redirects() -> ureq::Agent {
    ureq::AgentBuilder::new().redirects(0).build()
}

/// `GET /chat?<query>`: status, the `frame-ancestors` sources of its CSP header (`None`
/// without one), and the body.
fn panel_page(worker: &Worker, query: &str) -> (u16, Option<Vec<String>>, String) {
    let result = no_redirects()
        .get(&worker.url(&format!("/chat?{query}")))
        .call();
    let response = match result {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(err) => panic!("GET /chat: {err}"),
    };
    let status = response.status();
    let ancestors = response
        .header("content-security-policy")
        .and_then(frame_ancestors);
    (
        status,
        ancestors,
        response.into_string().unwrap_or_default(),
    )
}

/// The sources of the `frame-ancestors` directive of a CSP header value.
fn frame_ancestors(policy: &str) -> Option<Vec<String>> {
    policy.split(';').find_map(|directive| {
        let mut words = directive.split_whitespace();
        (words.next() == Some("frame-ancestors")).then(|| words.map(str::to_string).collect())
    })
}

#[test]
fn the_panel_page_is_frameable_only_by_the_sites_own_origins() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = victim(worker, &upstream);

    // The victim's key: the panel, framable by exactly the allowed origins.
    let (status, ancestors, body) = panel_page(worker, &format!("site_key={}", site.public_key));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("concierge-root"), "the panel page: {body}");
    assert_eq!(
        ancestors,
        Some(ALLOWED.map(String::from).to_vec()),
        "frame-ancestors lists the site's origins and nothing else"
    );

    // No key, an unknown key, or the secret key: no panel, framable by nobody.
    let unknown = format!("pk_{}", "0".repeat(48));
    for query in [
        String::new(),
        format!("site_key={unknown}"),
        format!("site_key={}", site.secret_key),
    ] {
        let (status, ancestors, body) = panel_page(worker, &query);
        assert_eq!(
            (status, code(&body).as_str()),
            (401, "unauthorized"),
            "/chat?{query}"
        );
        assert_eq!(ancestors, Some(vec!["'none'".to_string()]), "/chat?{query}");
    }

    // The static file behind the panel is not reachable without the policy either.
    let response = no_redirects()
        .get(&worker.url(&format!("/chat.html?site_key={}", site.public_key)))
        .call();
    let response = match response {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(err) => panic!("GET /chat.html: {err}"),
    };
    let policy = response
        .header("content-security-policy")
        .map(str::to_string);
    let served = response.status() == 200;
    assert!(
        !served || policy.as_deref().and_then(frame_ancestors).is_some(),
        "/chat.html served without frame-ancestors ({policy:?})"
    );

    // The merchant changes its origins: the framing policy follows at once.
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"allowed_origins": ["https://new.shop.example"]})),
    );
    assert_eq!(status, 200, "{body}");
    let (_, ancestors, _) = panel_page(worker, &format!("site_key={}", site.public_key));
    assert_eq!(
        ancestors,
        Some(vec!["https://new.shop.example".to_string()])
    );

    // A site that allows no origin at all cannot be framed anywhere.
    let closed = worker.create_site(json!({"name": "No origins"}));
    let (status, ancestors, _) = panel_page(worker, &format!("site_key={}", closed.public_key));
    assert_eq!(status, 200);
    assert_eq!(ancestors, Some(vec!["'none'".to_string()]));
}

#[test]
fn the_workers_own_origin_needs_an_embedder_the_site_allows() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = victim(worker, &upstream);
    let own = worker.base_url.as_str();

    // The attacker's page frames nothing of ours, so it tries the Worker's own origin.
    for headers in [
        vec![("origin", own)],
        vec![("origin", own), (EMBEDDER, "https://evil.example")],
        vec![("origin", own), (EMBEDDER, "http://shop.example")],
        vec![("origin", own), (EMBEDDER, "https://shop.example:8443")],
        vec![("origin", own), (EMBEDDER, "null")],
    ] {
        let (status, body) = create_with(worker, &site, &headers);
        assert_eq!(
            (status, code(&body).as_str()),
            (403, "forbidden"),
            "{headers:?}: {body}"
        );
    }
    // The panel framed by an allowed page names it: accepted.
    let (status, body) = create_with(
        worker,
        &site,
        &[("origin", own), (EMBEDDER, "https://www.shop.example")],
    );
    assert_eq!(status, 201, "{body}");
    // The panel's same-origin reads carry no `Origin` (browsers omit it on GET).
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/widget/config"))
            .set("x-api-key", &site.public_key)
            .set("sec-fetch-site", "same-origin")
            .set(EMBEDDER, "https://shop.example")
            .call(),
    );
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_missing_origin_with_a_forged_sec_fetch_site_is_refused() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = victim(worker, &upstream);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    let (status, body) = create_with(worker, &site, &[("sec-fetch-site", "same-origin")]);
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"), "{body}");
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/widget/config"))
            .set("x-api-key", &site.public_key)
            .set("sec-fetch-site", "same-origin")
            .call(),
    );
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"), "{body}");
    // A write never comes from a browser without `Origin`: naming an allowed embedder
    // does not help a turn that has none.
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/messages")))
            .set("x-api-key", &site.public_key)
            .set("sec-fetch-site", "same-origin")
            .set(EMBEDDER, "https://shop.example")
            .send_json(json!({"content": "Xin chào"})),
    );
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"), "{body}");

    // The victim: nothing stored, nothing sent to its model; its own page still works.
    assert_eq!(history(worker, &site.secret_key, &conversation).len(), 1);
    assert!(upstream.chat_requests().is_empty(), "no model call");
    let (status, body) = create_with(worker, &site, &[("origin", "https://shop.example")]);
    assert_eq!(status, 201, "{body}");
}

#[test]
fn a_forged_host_does_not_make_an_origin_the_workers_own() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = victim(worker, &upstream);
    let port = worker.base_url.rsplit(':').next().expect("port");

    // Host and Origin agree, as for a same-origin request, but the host is not ours: the
    // allowed origin with another scheme, and a stranger naming an allowed embedder.
    for (host, origin) in [
        (
            "shop.example".to_string(),
            "http://shop.example".to_string(),
        ),
        (
            format!("evil.example:{port}"),
            format!("http://evil.example:{port}"),
        ),
    ] {
        let (status, body) = create_with(
            worker,
            &site,
            &[
                ("host", &host),
                ("origin", &origin),
                (EMBEDDER, "https://shop.example"),
            ],
        );
        assert_eq!(
            (status, code(&body).as_str()),
            (403, "forbidden"),
            "Host {host}, Origin {origin}: {body}"
        );
    }
    assert!(upstream.chat_requests().is_empty(), "no model call");
}

#[test]
fn origins_compare_exactly() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = victim(worker, &upstream);
    for origin in [
        "http://shop.example",
        "https://shop.example:8443",
        "https://shop.example.evil.example",
        "https://evilshop.example",
        "https://shop.example/",
        "https://SHOP.example",
        "null",
    ] {
        let (status, body) = create_with(worker, &site, &[("origin", origin)]);
        assert_eq!(
            (status, code(&body).as_str()),
            (403, "forbidden"),
            "{origin}: {body}"
        );
    }
    for origin in ALLOWED {
        let (status, body) = create_with(worker, &site, &[("origin", origin)]);
        assert_eq!(status, 201, "{origin}: {body}");
    }
}

/// A merchant's Unicode domain (`https://Cửa-Hàng.vn`) is kept in the ASCII form browsers
/// send in `Origin` (lowercase, Punycode labels), so its visitors are let in; the same for
/// a model endpoint on a Unicode host. The expected names are Python's `punycode` codec's.
#[test]
fn a_unicode_domain_is_kept_as_browsers_send_it() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, em chào anh chị."));
    let site = worker.create_site(json!({
        "name": "Cửa hàng",
        "allowed_origins": ["https://Cửa-Hàng.vn", "https://bánhmì.vn:8443", "https://shop.example"],
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
    }));
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let config: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        config["site"]["config"]["allowed_origins"],
        json!([
            "https://xn--ca-hng-lta4562d.vn",
            "https://xn--bnhm-5na3e.vn:8443",
            "https://shop.example"
        ]),
        "{body}"
    );
    for origin in [
        "https://xn--ca-hng-lta4562d.vn",
        "https://xn--bnhm-5na3e.vn:8443",
    ] {
        let (status, body) = create_with(worker, &site, &[("origin", origin)]);
        assert_eq!(status, 201, "{origin}: {body}");
    }
    let (status, body) = create_with(worker, &site, &[("origin", "https://xn--bnhm-5na3e.vn")]);
    assert_eq!((status, code(&body).as_str()), (403, "forbidden"), "{body}");
    // A model endpoint on a Unicode host is judged and kept by its ASCII name.
    let (status, body) = into_parts(
        agent()
            .patch(&worker.url("/admin/site"))
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .send_json(json!({"llm": {"provider": "openai", "base_url": "https://Việt.example/v1", "model": "m"}})),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("https://xn--vit-5kz.example/v1"),
        "the endpoint in its ASCII form: {body}"
    );
}
