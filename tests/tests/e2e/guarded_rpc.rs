//! `guarded`'s machine surfaces end to end: the seed's JSON-RPC 2.0 methods and errors
//! (`POST /jsonrpc`), the same tools on the MCP server, and the SearXNG search provider
//! against a stub instance speaking its JSON API.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

use super::guarded::{guarded_site, put_pages, rpc};

#[test]
fn json_rpc_serves_the_seed_methods_with_its_errors() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let key = &site.secret_key;
    let created = rpc(
        worker,
        key,
        "memory-server/memory/get_or_create",
        json!({"conversation_id": "mine"}),
    );
    let id = created["result"]["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_ne!(id, "mine");
    let again = rpc(
        worker,
        key,
        "memory-server/memory/get_or_create",
        json!({"conversation_id": id}),
    );
    assert_eq!(again["result"]["conversation_id"], id.as_str());
    for n in 0..8 {
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        let added = rpc(
            worker,
            key,
            "memory-server/memory/add_message",
            json!({"conversation_id": id, "role": role, "content": format!("m{n}")}),
        );
        assert!(added["result"]["message_id"].is_string(), "{added}");
    }
    let context = rpc(
        worker,
        key,
        "memory-server/memory/get_context",
        json!({"conversation_id": id, "max_messages": 20}),
    );
    let contents: Vec<&str> = context["result"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(contents, ["m2", "m3", "m4", "m5", "m6", "m7"]);
    let old = rpc(
        worker,
        key,
        "memory-server/memory/get_old_messages",
        json!({"conversation_id": id}),
    );
    assert_eq!(
        old["result"]["old_messages"],
        json!([{"role": "user", "content": "m0"}, {"role": "assistant", "content": "m1"}])
    );
    assert_eq!(old["result"]["total_count"], 8);
    let summary = rpc(
        worker,
        key,
        "memory-server/memory/get_summary",
        json!({"conversation_id": id}),
    );
    assert_eq!(summary["result"], json!({"summary": ""}));
    rpc(
        worker,
        key,
        "memory-server/memory/set_summary",
        json!({"conversation_id": id, "summary": "S", "compress": false}),
    );
    let summary = rpc(
        worker,
        key,
        "memory-server/memory/get_summary",
        json!({"conversation_id": id}),
    );
    assert_eq!(summary["result"], json!({"summary": "S"}));
    let all = rpc(
        worker,
        key,
        "memory-server/memory/get_all_messages",
        json!({"conversation_id": id}),
    );
    assert_eq!(all["result"]["messages"].as_array().map(Vec::len), Some(8));
    let tool = rpc(
        worker,
        key,
        "tool-server/tools/call",
        json!({"name": "duckduckgo_search", "arguments": {"query": "sâu răng"}}),
    );
    let content = tool["result"]["content"].as_str().expect("content");
    assert!(
        content.starts_with("Title: Sâu răng: nguyên nhân và cách phòng ngừa\nContent: "),
        "{content}"
    );
    assert!(
        content.contains("\nLink: https://nhakhoa.example/sau-rang\n\nTitle: \n"),
        "{content}"
    );

    let error = rpc(
        worker,
        key,
        "memory-server/memory/add_message",
        json!({"conversation_id": id, "role": "system", "content": "x"}),
    );
    assert_eq!(error["error"]["code"], -32602);
    assert_eq!(error["error"]["message"], "Invalid params");
    let error = rpc(worker, key, "memory-server/memory/get_context", json!({}));
    assert_eq!(error["error"]["code"], -32602);
    let error = rpc(worker, key, "memory-server/memory/forget", json!({}));
    assert_eq!(error["error"]["code"], -32601);
    // Another site's conversation id: an error, and nothing of it.
    let other_upstream = ScriptedUpstream::start();
    let other = guarded_site(worker, &other_upstream, json!({"provider": "local"}));
    for method in [
        "get_context",
        "get_all_messages",
        "get_summary",
        "get_old_messages",
    ] {
        let error = rpc(
            worker,
            &other.secret_key,
            &format!("memory-server/memory/{method}"),
            json!({"conversation_id": id, "max_messages": 6}),
        );
        assert_eq!(error["error"]["code"], -32602, "{error}");
        assert_eq!(error["error"]["data"]["reason"], "unknown conversation_id");
        assert!(error.get("result").is_none());
        assert!(!error.to_string().contains("m7"));
    }
    // The public key is refused.
    let (status, _) = into_parts(
        agent()
            .post(&worker.url("/jsonrpc"))
            .set("x-api-key", &site.public_key)
            .send_json(json!({"jsonrpc": "2.0", "method": "memory-server/memory/get_summary", "params": {"conversation_id": id}, "id": 1})),
    );
    assert!(status == 401 || status == 403, "{status}");
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/jsonrpc"))
            .set("x-api-key", key)
            .set("content-type", "application/json")
            .send_string("{not json"),
    );
    assert_eq!(status, 200);
    assert!(body.contains("-32700"), "{body}");
}

/// One MCP request (a session is opened first); the JSON-RPC answer.
fn mcp(worker: &Worker, key: &str, session: Option<&str>, body: Value) -> (Option<String>, Value) {
    let mut request = agent()
        .post(&worker.url("/mcp"))
        .set("content-type", "application/json")
        .set("accept", "application/json, text/event-stream")
        .set("authorization", &format!("Bearer {key}"));
    if let Some(session) = session {
        request = request.set("mcp-session-id", session);
    }
    match request.send_string(&body.to_string()) {
        Ok(r) | Err(ureq::Error::Status(_, r)) => {
            let session = r.header("mcp-session-id").map(str::to_string);
            let text = r.into_string().unwrap_or_default();
            (
                session,
                serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}")),
            )
        }
        Err(err) => panic!("POST /mcp: {err}"),
    }
}

#[test]
fn the_mcp_server_offers_the_seed_tools_on_a_guarded_site() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let key = &site.secret_key;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (session, _) = mcp(worker, key, None, init);
    let session = session.expect("a session");
    let (_, listed) = mcp(
        worker,
        key,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in [
        "duckduckgo_search",
        "memory_get_context",
        "memory_get_summary",
        "memory_add_message",
        "memory_get_all_messages",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"lookup_warranty"));
    let call = |id: u32, name: &str, arguments: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}});
        mcp(worker, key, Some(&session), body).1["result"].clone()
    };
    let found = call(2, "duckduckgo_search", json!({"query": "sâu răng"}));
    assert_eq!(found["isError"], false, "{found}");
    let text = found["structuredContent"]["content"]
        .as_str()
        .expect("results text");
    assert!(
        text.contains("Link: https://nhakhoa.example/sau-rang"),
        "{text}"
    );
    let created = rpc(worker, key, "memory-server/memory/get_or_create", json!({}));
    let id = created["result"]["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    let added = call(
        3,
        "memory_add_message",
        json!({"conversation_id": id, "role": "user", "content": "Răng tôi ê buốt"}),
    );
    assert_eq!(added["isError"], false, "{added}");
    let context = call(4, "memory_get_context", json!({"conversation_id": id}));
    assert_eq!(
        context["structuredContent"]["messages"],
        json!([{"role": "user", "content": "Răng tôi ê buốt"}])
    );
    let summary = call(5, "memory_get_summary", json!({"conversation_id": id}));
    assert_eq!(summary["structuredContent"], json!({"summary": ""}));
    let all = call(6, "memory_get_all_messages", json!({"conversation_id": id}));
    assert_eq!(
        all["structuredContent"]["messages"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let unknown = call(7, "memory_get_summary", json!({"conversation_id": "nope"}));
    assert_eq!(unknown["isError"], true);
    assert!(
        unknown["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown conversation_id")
    );
    let bad = call(
        8,
        "memory_add_message",
        json!({"conversation_id": id, "role": "system", "content": "x"}),
    );
    assert_eq!(bad["isError"], true, "{bad}");
}

/// A stub SearXNG instance: answers every request with `body`, recording request lines.
fn searxng_stub(body: Value) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            recorded.lock().expect("lock").push(line.trim().to_string());
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let text = body.to_string();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = stream.flush();
            let _ = stream.shutdown(std::net::Shutdown::Write);
        }
    });
    (url, seen)
}

#[test]
fn the_searxng_provider_reads_its_json_api_capped_at_five_safe_links() {
    let worker = Worker::shared();
    let mut results = vec![
        json!({"title": "<span class=\"highlight\">Implant</span> nha khoa", "url": "https://a.example/implant",
               "content": "Trụ titan thay chân răng.", "publishedDate": null}),
        json!({"title": "Bad", "url": "javascript:alert(1)", "content": "x"}),
        json!({"title": "Dup", "url": "https://a.example/implant", "content": "y"}),
    ];
    for n in 0..6 {
        results.push(json!({"title": format!("R{n}"), "url": format!("https://b.example/{n}"), "content": "z"}));
    }
    let (url, seen) = searxng_stub(json!({"query": "implant", "results": results}));
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(
        worker,
        &upstream,
        json!({"provider": "searxng", "url": url}),
    );
    let tool = rpc(
        worker,
        &site.secret_key,
        "tool-server/tools/call",
        json!({"name": "duckduckgo_search", "arguments": {"query": "trồng răng implant"}}),
    );
    let content = tool["result"]["content"].as_str().expect("content");
    assert!(content.starts_with("Title: Implant nha khoa\nContent: Trụ titan thay chân răng.\nLink: https://a.example/implant"), "{content}");
    assert_eq!(content.matches("Link: ").count(), 5, "{content}");
    assert!(!content.contains("javascript:"), "{content}");
    let line = seen
        .lock()
        .expect("lock")
        .first()
        .cloned()
        .unwrap_or_default();
    assert!(
        line.starts_with("GET /search?q=tr%E1%BB%93ng+r%C4%83ng+implant&format=json "),
        "{line}"
    );
}

#[test]
fn a_streamed_completion_names_its_new_chat_and_ends_with_the_sources() {
    use std::io::Read;
    let worker = Worker::shared();
    let upstream = concierge_e2e::upstream::ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    upstream.push(concierge_e2e::upstream::Reply::text("YES"));
    upstream.push(concierge_e2e::upstream::Reply::text(
        "Dùng kem có fluor mỗi ngày.",
    ));
    upstream.push(concierge_e2e::upstream::Reply::text("Hỏi về fluor."));
    let response = agent()
        .post(&worker.url("/v1/chat/completions"))
        .set("authorization", &format!("Bearer {}", site.secret_key))
        .set("x-chat-id", "not-a-known-chat")
        .send_json(json!({"model": "dental-duckduckgo", "stream": true,
            "messages": [{"role": "user", "content": "Fluor có giúp ngừa sâu răng không?"}]}))
        .expect("200");
    let header_chat = response.header("x-concierge-chat-id").map(str::to_string);
    let mut body = String::new();
    response
        .into_reader()
        .read_to_string(&mut body)
        .expect("body");
    let chunks: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("chunk JSON"))
        .collect();
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
    let chat_id = chunks[0]["chat_id"]
        .as_str()
        .expect("chat_id on the first chunk");
    assert_ne!(chat_id, "not-a-known-chat", "a server-minted id");
    assert_eq!(header_chat.as_deref(), Some(chat_id));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let deltas: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(
        deltas.concat(),
        "Dùng kem có fluor mỗi ngày.\n\nNguồn tham khảo:\n\n\
         1. Sâu răng: nguyên nhân và cách phòng ngừa - https://nhakhoa.example/sau-rang\n\
         2. https://nhakhoa.example/fluor"
    );
    assert!(
        deltas
            .last()
            .is_some_and(|d| d.starts_with("\n\nNguồn tham khảo:")),
        "{deltas:?}"
    );
    // The conversation exists under the minted id, with the summary.
    let (status, text) = into_parts(
        agent()
            .get(&worker.url(&format!("/v1/conversations/{chat_id}")))
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .call(),
    );
    assert_eq!(status, 200, "{text}");
    let conversation: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(conversation["summary"], "Hỏi về fluor.");
}
