//! Issue 24, defects 5, 7 and 8 (`/jsonrpc`'s body cap), through the real Worker with a
//! scripted upstream:
//! - `/ai/chat` sessions belong to what the caller proves (a session id the server minted
//!   for that same site and caller, or a signed user token), never to its address: every
//!   test client is 127.0.0.1, like visitors behind one NAT or a merchant's server calling
//!   for many people;
//! - an MCP batch has a cap, and every message in it counts against the rate limits;
//! - `/jsonrpc` stops reading a body at its cap (413), whether the body declares its length
//!   or streams it chunked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use concierge_e2e::api::{error_code, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

use super::identity::tokens::{new_token_secret, token_for};
use super::rental::{Rental, rental_site};

const ORIGIN: &str = "https://shop.example";

/// Who calls `/ai/chat`.
#[derive(Clone, Copy)]
enum Caller<'a> {
    /// The merchant's server: the secret key, no user token.
    Server,
    /// An anonymous visitor: the public key from the site's page.
    Anonymous,
    /// A visitor with a signed user token (and the public key).
    User(&'a str),
}

/// One `/ai/chat` call: the answer and every model request it made, as text.
fn chat(r: &Rental, caller: Caller<'_>, query: &str, session: Option<&str>) -> (Value, String) {
    r.orchestrate("GREETING", false, "LIST", "Chào bạn");
    let before = r.upstream.chat_requests().len();
    let mut request = agent().post(&r.worker.url("/ai/chat"));
    request = match caller {
        Caller::Server => request.set("x-api-key", &r.site.secret_key),
        Caller::Anonymous => request
            .set("x-api-key", &r.site.public_key)
            .set("origin", ORIGIN),
        Caller::User(token) => request
            .set("x-api-key", &r.site.public_key)
            .set("origin", ORIGIN)
            .set("x-user-token", token),
    };
    let mut body = json!({"query": query});
    if let Some(session) = session {
        body["sessionId"] = json!(session);
    }
    let (status, text) = into_parts(request.send_json(body));
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).expect("JSON");
    let seen: String = r.upstream.chat_requests()[before..]
        .iter()
        .map(|recorded| recorded.body.to_string())
        .collect();
    assert!(!seen.is_empty(), "the call reached the model");
    (answer, seen)
}

fn session_of(answer: &Value) -> String {
    let id = answer["sessionId"].as_str().expect("sessionId");
    assert!(!id.is_empty(), "{answer}");
    id.to_string()
}

#[test]
fn ai_chat_sessions_belong_to_what_the_caller_proves_never_to_its_address() {
    let r = rental_site("Sessions by proof");
    // Two calls of the merchant's server, meant for two people, from one address.
    let (alice, _) = chat(&r, Caller::Server, "Tôi là Alice, số 0901-ALICE", None);
    let alice = session_of(&alice);
    let (bob, seen) = chat(&r, Caller::Server, "Tôi là Bob", None);
    let bob = session_of(&bob);
    assert_ne!(bob, alice, "a second caller got the first caller's session");
    assert!(
        !seen.contains("0901-ALICE"),
        "the second caller's model request held the first caller's data: {seen}"
    );

    // Two anonymous visitors behind one NAT.
    let (first, _) = chat(&r, Caller::Anonymous, "Mã phòng của tôi là 7788-NAT", None);
    let first = session_of(&first);
    let (second, seen) = chat(&r, Caller::Anonymous, "Xin chào", None);
    assert_ne!(session_of(&second), first);
    assert!(!seen.contains("7788-NAT"), "{seen}");
    // The session id the server returned continues that conversation.
    let (again, seen) = chat(&r, Caller::Anonymous, "Còn phòng nào?", Some(&first));
    assert_eq!(session_of(&again), first);
    assert!(seen.contains("7788-NAT"), "the session went on: {seen}");
    let (again, seen) = chat(&r, Caller::Server, "Tiếp tục", Some(&alice));
    assert_eq!(session_of(&again), alice);
    assert!(seen.contains("0901-ALICE"), "{seen}");

    // Signed users: a session is theirs alone.
    let secret = new_token_secret(r.worker, &r.site);
    let u1 = token_for(&secret, "tenant-1");
    let u2 = token_for(&secret, "tenant-2");
    let (mine, _) = chat(&r, Caller::User(&u1), "Hợp đồng của tôi số HD-5521", None);
    let mine = session_of(&mine);
    let (again, seen) = chat(&r, Caller::User(&u1), "Còn hạn không?", Some(&mine));
    assert_eq!(session_of(&again), mine);
    assert!(seen.contains("HD-5521"), "{seen}");

    // A session id presented by anyone it was not minted for starts a fresh session that
    // holds nothing of the owner's: another user, an anonymous visitor, the server's key
    // (and the other way round), another site, and ids the server never minted (the
    // address- and user-derived ids of the seed included).
    let other_site = rental_site("Sessions by proof, another site");
    let foreign: [(&Rental, Caller<'_>, &str, &str); 6] = [
        (&r, Caller::User(&u2), mine.as_str(), "HD-5521"),
        (&r, Caller::Anonymous, mine.as_str(), "HD-5521"),
        (&r, Caller::Server, mine.as_str(), "HD-5521"),
        (&r, Caller::Anonymous, alice.as_str(), "0901-ALICE"),
        (&r, Caller::Server, first.as_str(), "7788-NAT"),
        (&other_site, Caller::Server, alice.as_str(), "0901-ALICE"),
    ];
    for (site, caller, id, private) in foreign {
        let (answer, seen) = chat(site, caller, "Cho tôi xem lại", Some(id));
        let fresh = session_of(&answer);
        assert_ne!(
            fresh, id,
            "a session was continued by a caller it is not for"
        );
        assert!(!seen.contains(private), "{seen}");
    }
    for forged in ["user_tenant-1", "ip_0123456789abcdef", "", "s_", "../x"] {
        let (answer, _) = chat(&r, Caller::User(&u1), "Chào", Some(forged));
        assert_ne!(session_of(&answer), forged);
        assert_ne!(session_of(&answer), mine);
    }
    // The owner's session is untouched by all of it.
    let (again, seen) = chat(&r, Caller::User(&u1), "Vẫn là tôi", Some(&mine));
    assert_eq!(session_of(&again), mine);
    assert!(seen.contains("HD-5521"), "{seen}");

    // A session id that is not a string is a client error.
    let (status, body) = into_parts(
        agent()
            .post(&r.worker.url("/ai/chat"))
            .set("x-api-key", &r.site.secret_key)
            .send_json(json!({"query": "Chào", "sessionId": 7})),
    );
    assert_eq!((status, error_code(&body).as_str()), (400, "bad_request"));
}

// ---------------------------------------------------------------------------------------
// MCP batches.

/// One POST to `/mcp` with the secret key: status and body.
fn mcp_post(worker: &Worker, key: &str, session: Option<&str>, body: &str) -> (u16, String) {
    let mut request = agent()
        .post(&worker.url("/mcp"))
        .set("content-type", "application/json")
        .set("accept", "application/json, text/event-stream")
        .set("authorization", &format!("Bearer {key}"));
    if let Some(session) = session {
        request = request.set("mcp-session-id", session);
    }
    into_parts(request.send_string(body))
}

/// A session at 2025-03-26, the version with batches.
fn batch_session(worker: &Worker, key: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "1"}}});
    let response = agent()
        .post(&worker.url("/mcp"))
        .set("content-type", "application/json")
        .set("accept", "application/json, text/event-stream")
        .set("authorization", &format!("Bearer {key}"))
        .send_string(&body.to_string())
        .expect("initialize");
    response
        .header("mcp-session-id")
        .expect("Mcp-Session-Id")
        .to_string()
}

fn send_message_calls(n: usize) -> String {
    let calls: Vec<Value> = (0..n)
        .map(|i| {
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                "params": {"name": "send_message", "arguments": {"message": format!("tư vấn cấu hình pc chơi game {i}")}}})
        })
        .collect();
    Value::Array(calls).to_string()
}

fn pings(n: usize) -> String {
    let calls: Vec<Value> = (0..n)
        .map(|i| json!({"jsonrpc": "2.0", "id": i + 1, "method": "ping"}))
        .collect();
    Value::Array(calls).to_string()
}

fn mcp_site(name: &str) -> (&'static Worker, ScriptedUpstream, TestSite) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ vâng."));
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    (worker, upstream, site)
}

#[test]
fn an_mcp_batch_has_a_cap_and_an_over_cap_batch_calls_no_model() {
    let (worker, upstream, site) = mcp_site("MCP batch cap");
    let session = batch_session(worker, &site.secret_key);
    // The issue's attack: 40 send_message calls in one small body.
    let body = send_message_calls(40);
    assert!(body.len() < 8 * 1024, "{}", body.len());
    let (status, answer) = mcp_post(worker, &site.secret_key, Some(&session), &body);
    let calls = upstream.chat_requests().len();
    assert_eq!(status, 400, "{calls} model calls; {:.300}", answer);
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("at most 20"), "{message}");
    assert!(
        upstream.chat_requests().is_empty(),
        "an over-cap batch reached the model {} times",
        upstream.chat_requests().len()
    );
    // At the cap a batch is answered whole.
    let (status, answer) = mcp_post(worker, &site.secret_key, Some(&session), &pings(20));
    assert_eq!(status, 200, "{answer}");
    let answers: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(answers.as_array().map(Vec::len), Some(20), "{answers}");
    let (status, answer) = mcp_post(
        worker,
        &site.secret_key,
        Some(&session),
        &send_message_calls(3),
    );
    assert_eq!(status, 200, "{answer}");
    let calls = upstream.chat_requests().len();
    assert!(
        calls >= 3,
        "an admitted batch reaches the model ({calls} calls)"
    );
}

#[test]
fn every_message_of_an_mcp_batch_counts_against_the_rate_limits() {
    let (worker, _upstream, site) = mcp_site("MCP batch counting");
    let session = batch_session(worker, &site.secret_key);
    // The site's ceiling is 1,200 requests a minute. Batches of 20 reach it within 60
    // batches when each message counts; windows align to the wall clock, so allow for one
    // rollover (120 batches). Counted as one request each, 130 batches never reach it.
    let body = pings(20);
    let mut statuses = Vec::new();
    let mut refusal = String::new();
    for _ in 0..130 {
        let (status, answer) = mcp_post(worker, &site.secret_key, Some(&session), &body);
        statuses.push(status);
        if status != 200 {
            refusal = answer;
            break;
        }
    }
    assert_eq!(
        statuses.last(),
        Some(&429),
        "after {} batches of 20: {refusal}",
        statuses.len()
    );
    assert!(statuses[..statuses.len() - 1].iter().all(|s| *s == 200));
    assert_eq!(error_code(&refusal), "rate_limited", "{refusal}");
    // The ceiling is the site's: a single request is refused too.
    let (status, _) = mcp_post(
        worker,
        &site.secret_key,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string(),
    );
    assert_eq!(status, 429);
}

// ---------------------------------------------------------------------------------------
// `/jsonrpc`'s body cap, over raw HTTP (to control the framing).

/// `host:port` of the Worker.
fn address(worker: &Worker) -> String {
    let base = worker.url("");
    base.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// The status line and body of the response on `stream` (read until the connection closes
/// or the body's length is read).
fn read_response(stream: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("status line: {line:?}"));
    let mut length = None;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).expect("header");
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse::<usize>().ok();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if let Some(length) = length {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    } else if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// What the client sees of a refused over-cap request: the Worker's 413, unless
/// `wrangler dev`'s proxy dropped the request first — it closes a request whose body the
/// Worker stopped reading (a reset, an end of stream, or its own "Network connection
/// lost" error page may overtake the answer). The Worker's own verdict is asserted from
/// its log; here any answer of the Worker other than the 413 fails.
fn assert_refused_on_the_wire(stream: &mut TcpStream, what: &str) {
    match read_response(stream) {
        Ok((_, body)) if body.contains("Network connection lost") => {}
        Ok((status, body)) => assert_eq!(
            (status, error_code(&body).as_str()),
            (413, "payload_too_large"),
            "{what}: {body}"
        ),
        Err(err) => assert!(
            matches!(
                err.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::UnexpectedEof
            ),
            "{what}: {err}"
        ),
    }
}

fn connect(worker: &Worker) -> TcpStream {
    let stream = TcpStream::connect(address(worker)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream
}

fn head(worker: &Worker, key: &str, framing: &str) -> String {
    format!(
        "POST /jsonrpc HTTP/1.1\r\nHost: {}\r\nX-API-Key: {key}\r\nContent-Type: application/json\r\n{framing}Connection: close\r\n\r\n",
        address(worker)
    )
}

/// A body that starts as valid JSON-RPC and goes on (a string of `a`s) for as long as the
/// writer writes.
const JSON_START: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_or_create","params":{"pad":""#;

/// How many `/jsonrpc` requests the Worker has logged as answered 413. (`wrangler dev`'s
/// proxy holds a response back until the client has sent the whole request, so whether
/// the Worker answered before reading the body shows in its request log, not on the wire.)
fn refused_json_rpc(worker: &Worker) -> usize {
    worker
        .log()
        .lines()
        .filter(|line| line.contains(r#""path":"/jsonrpc""#) && line.contains(r#""status":413"#))
        .count()
}

/// Waits up to 10 s for the Worker to log one more refused `/jsonrpc` request than `before`.
fn refusal_logged(worker: &Worker, before: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if refused_json_rpc(worker) > before {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Writes `head`, then an endless chunked body (a valid JSON-RPC start, then `a`s) on a
/// thread, up to 64 MB; returns the flag set once all of it was written.
fn stream_endless(stream: &TcpStream, head: String) -> Arc<AtomicBool> {
    let mut writer = stream.try_clone().expect("clone");
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        let chunk = "a".repeat(16 * 1024);
        let first = format!("{head}{:x}\r\n{JSON_START}\r\n", JSON_START.len());
        if writer.write_all(first.as_bytes()).is_err() {
            return;
        }
        for _ in 0..(64 * 1024 / 16) {
            let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
            if writer.write_all(framed.as_bytes()).is_err() {
                return;
            }
        }
        let _ = writer.write_all(b"0\r\n\r\n");
        flag.store(true, Ordering::Relaxed);
    });
    done
}

#[test]
fn json_rpc_stops_reading_a_body_at_its_cap() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "JSON-RPC body cap", &upstream.base_url, false);
    let key = site.secret_key.clone();

    // A declared length over the cap is refused before any of the body is read: the
    // Worker answers while the client has sent only the headers.
    let before = refused_json_rpc(worker);
    let mut stream = connect(worker);
    let started = Instant::now();
    stream
        .write_all(head(worker, &key, "Content-Length: 300000\r\n").as_bytes())
        .expect("write");
    assert!(
        refusal_logged(worker, before),
        "the Worker waited for a body it refuses by its declared length"
    );
    eprintln!("declared length refused within {:?}", started.elapsed());
    drop(stream);
    // Sent whole, the same request is refused alike.
    let before = refused_json_rpc(worker);
    let mut stream = connect(worker);
    let mut request = head(worker, &key, "Content-Length: 300000\r\n").into_bytes();
    request.extend_from_slice(&[b'a'; 300_000]);
    stream.write_all(&request).expect("write");
    assert_refused_on_the_wire(&mut stream, "a declared length, sent whole");
    assert!(refusal_logged(worker, before));

    // A chunked body (no length) is refused once it passes the cap, while the client is
    // still sending: of the 64 MB offered, the Worker reads no more than it must. The
    // same with a Content-Length that lies (small, on a chunked body): the Worker counts
    // what it reads.
    for (what, framing) in [
        ("chunked", "Transfer-Encoding: chunked\r\n"),
        (
            "a lying length",
            "Content-Length: 20\r\nTransfer-Encoding: chunked\r\n",
        ),
    ] {
        let before = refused_json_rpc(worker);
        let mut stream = connect(worker);
        let started = Instant::now();
        let done = stream_endless(&stream, head(worker, &key, framing));
        assert!(refusal_logged(worker, before), "{what}: no 413");
        let elapsed = started.elapsed();
        assert!(
            !done.load(Ordering::Relaxed),
            "{what}: the whole 64 MB body was read before the answer ({elapsed:?})"
        );
        eprintln!("{what}: refused within {elapsed:?}");
        assert_refused_on_the_wire(&mut stream, what);
    }

    // Under the cap, the same route answers.
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/jsonrpc"))
            .set("x-api-key", &key)
            .send_json(
                json!({"jsonrpc": "2.0", "id": 1, "method": "memory-server/memory/get_or_create",
                "params": {"pad": "a".repeat(200 * 1024)}}),
            ),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("conversation_id"), "{body}");
}
