//! The MCP server's Streamable HTTP transport at its edges, over raw HTTP: the key before
//! anything, version negotiation, session ids (required, verified, bound to the site,
//! ended by `DELETE`), notifications, JSON-RPC errors, batches only where the negotiated
//! version has them, and SSE for clients that accept nothing else.

use std::time::{Duration, Instant};

use concierge_e2e::api::{error_code, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent};
use serde_json::{Value, json};

const ACCEPT: &str = "application/json, text/event-stream";

/// One POST to `/mcp`: status, `Mcp-Session-Id`, content type and body.
struct Answer {
    status: u16,
    session: Option<String>,
    content_type: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("JSON: {}", self.body))
    }
}

fn post(worker: &Worker, key: Option<&str>, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut request = agent()
        .post(&worker.url("/mcp"))
        .set("content-type", "application/json");
    if let Some(key) = key {
        request = request.set("authorization", &format!("Bearer {key}"));
    }
    if !headers.iter().any(|(name, _)| *name == "accept") {
        request = request.set("accept", ACCEPT);
    }
    for (name, value) in headers {
        request = request.set(name, value);
    }
    match request.send_string(body) {
        Ok(r) | Err(ureq::Error::Status(_, r)) => Answer {
            status: r.status(),
            session: r.header("mcp-session-id").map(str::to_string),
            content_type: r.content_type().to_string(),
            body: r.into_string().unwrap_or_default(),
        },
        Err(err) => panic!("POST /mcp: {err}"),
    }
}

fn initialize(worker: &Worker, key: &str, version: &str) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "1"}}});
    post(worker, Some(key), &[], &body.to_string())
}

/// A new session at `version`.
fn open(worker: &Worker, key: &str, version: &str) -> String {
    let answer = initialize(worker, key, version);
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer
        .session
        .expect("Mcp-Session-Id on the initialize response")
}

fn request(id: u32, method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}).to_string()
}

fn site(worker: &Worker, name: &str) -> TestSite {
    // The transport never reaches the model; the upstream is only the site's config.
    let upstream = ScriptedUpstream::start();
    site_with_upstream(worker, name, &upstream.base_url, false)
}

#[test]
fn the_key_is_checked_before_any_json_rpc_and_get_is_not_offered() {
    let worker = Worker::shared();
    let site = site(worker, "MCP keys");
    for key in [None, Some("sk_not_a_key")] {
        let answer = post(worker, key, &[], "not even JSON");
        assert_eq!(answer.status, 401, "{}", answer.body);
        assert_eq!(error_code(&answer.body), "unauthorized");
    }
    let answer = post(worker, Some(&site.public_key), &[], &request(1, "ping"));
    assert_eq!(
        answer.status, 403,
        "a public key is refused: {}",
        answer.body
    );

    let get = agent()
        .get(&worker.url("/mcp"))
        .set("authorization", &format!("Bearer {}", site.secret_key))
        .set("accept", "text/event-stream")
        .call();
    let status = match get {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r.status(),
        Err(err) => panic!("GET /mcp: {err}"),
    };
    assert_eq!(status, 405, "no server-initiated stream");
}

#[test]
fn initialize_negotiates_the_version_and_opens_a_session() {
    let worker = Worker::shared();
    let site = site(worker, "MCP versions");
    for (requested, answered) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let answer = initialize(worker, &site.secret_key, requested);
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(answer.content_type.starts_with("application/json"));
        let json = answer.json();
        assert_eq!(json["id"], 0);
        assert_eq!(json["result"]["protocolVersion"], answered, "{requested}");
        assert!(json["result"]["capabilities"]["tools"].is_object());
        let session = answer.session.expect("a session id");
        assert!(session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    }
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {}});
    let answer = post(worker, Some(&site.secret_key), &[], &body.to_string());
    assert_eq!(answer.json()["error"]["code"], -32602, "{}", answer.body);
}

#[test]
fn unknown_methods_notifications_and_malformed_bodies_are_answered_at_once() {
    let worker = Worker::shared();
    let site = site(worker, "MCP errors");
    let key = Some(site.secret_key.as_str());
    // The Python client's first probe: no session yet, a newer protocol header.
    let started = Instant::now();
    let answer = post(
        worker,
        key,
        &[("mcp-protocol-version", "2026-07-28")],
        &request(1, "server/discover"),
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["id"], 1);
    assert_eq!(answer.json()["error"]["code"], -32601);

    let answer = post(worker, key, &[], &request(2, "ping"));
    assert_eq!(answer.json()["result"], json!({}), "{}", answer.body);

    let session = open(worker, &site.secret_key, "2025-11-25");
    let with_session = [("mcp-session-id", session.as_str())];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let answer = post(worker, key, &with_session, &note);
    assert_eq!((answer.status, answer.body.as_str()), (202, ""));

    let answer = post(worker, key, &with_session, "{\"jsonrpc\": \"2.0\", ");
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["error"]["code"], -32700, "{}", answer.body);
    assert_eq!(answer.json()["id"], Value::Null);
    let answer = post(worker, key, &with_session, r#"{"jsonrpc":"2.0","id":5}"#);
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["error"]["code"], -32600, "{}", answer.body);
    assert_eq!(answer.json()["id"], 5);

    let answer = post(worker, key, &with_session, &request(6, "resources/list"));
    assert_eq!(answer.json()["error"]["code"], -32601, "{}", answer.body);
    let answer = post(
        worker,
        key,
        &[("accept", "text/plain")],
        &request(7, "ping"),
    );
    assert_eq!(answer.status, 406, "{}", answer.body);
}

#[test]
fn tools_need_a_live_session_of_the_same_site_and_version() {
    let worker = Worker::shared();
    let a = site(worker, "MCP sessions A");
    let b = site(worker, "MCP sessions B");
    let key = Some(a.secret_key.as_str());
    let answer = post(worker, key, &[], &request(1, "tools/list"));
    assert_eq!(answer.status, 400, "no session: {}", answer.body);
    assert_eq!(answer.json()["error"]["code"], -32600);

    let session = open(worker, &a.secret_key, "2025-06-18");
    let listed = post(
        worker,
        key,
        &[("mcp-session-id", &session)],
        &request(2, "tools/list"),
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(
        listed.json()["result"]["tools"].as_array().map(Vec::len),
        Some(4)
    );

    let mismatch = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let answer = post(worker, key, &mismatch, &request(3, "tools/list"));
    assert_eq!(answer.status, 400, "{}", answer.body);

    let tampered = format!("{}x", session);
    let answer = post(
        worker,
        key,
        &[("mcp-session-id", &tampered)],
        &request(4, "tools/list"),
    );
    assert_eq!(answer.status, 404, "{}", answer.body);
    let answer = post(
        worker,
        Some(&b.secret_key),
        &[("mcp-session-id", &session)],
        &request(5, "tools/list"),
    );
    assert_eq!(
        answer.status, 404,
        "another site's session: {}",
        answer.body
    );

    let delete_named = |key: &str, session: Option<&str>| {
        let mut request = agent()
            .delete(&worker.url("/mcp"))
            .set("authorization", &format!("Bearer {key}"));
        if let Some(session) = session {
            request = request.set("mcp-session-id", session);
        }
        match request.call() {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r.status(),
            Err(err) => panic!("DELETE /mcp: {err}"),
        }
    };
    let delete = |key: &str| delete_named(key, Some(&session));
    assert_eq!(delete_named(&a.secret_key, None), 400, "no session named");
    assert_eq!(delete(&b.secret_key), 404, "another site cannot end it");
    assert_eq!(delete(&a.secret_key), 204);
    let answer = post(
        worker,
        key,
        &[("mcp-session-id", &session)],
        &request(6, "tools/list"),
    );
    assert_eq!(answer.status, 404, "an ended session: {}", answer.body);
    assert_eq!(delete(&a.secret_key), 404);
}

#[test]
fn batches_only_at_2025_03_26_and_sse_for_clients_that_accept_only_sse() {
    let worker = Worker::shared();
    let site = site(worker, "MCP batches");
    let key = Some(site.secret_key.as_str());
    let batch = format!(
        "[{},{},{}]",
        request(1, "ping"),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request(2, "no/such")
    );
    let old = open(worker, &site.secret_key, "2025-03-26");
    let answer = post(worker, key, &[("mcp-session-id", &old)], &batch);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answers = answer.json();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["result"], json!({}));
    assert_eq!(answers[1]["error"]["code"], -32601);

    let new = open(worker, &site.secret_key, "2025-11-25");
    let answer = post(worker, key, &[("mcp-session-id", &new)], &batch);
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.json()["error"]["code"], -32600);

    let sse = [
        ("mcp-session-id", new.as_str()),
        ("accept", "text/event-stream"),
    ];
    let answer = post(worker, key, &sse, &request(3, "tools/list"));
    assert_eq!(answer.status, 200);
    assert!(
        answer.content_type.starts_with("text/event-stream"),
        "{}",
        answer.content_type
    );
    let data = answer
        .body
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("one data line");
    assert!(
        answer.body.starts_with("event: message\n"),
        "{}",
        answer.body
    );
    let message: Value = serde_json::from_str(data).expect("a JSON-RPC message");
    assert_eq!(message["id"], 3);
    assert!(message["result"]["tools"].is_array());
}
