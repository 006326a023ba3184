//! `guarded`'s machine surfaces end to end: the seed's JSON-RPC 2.0 methods and errors
//! (`POST /jsonrpc`), the same tools on the MCP server, and the chat flow's optional
//! compression as the memory methods see it.

use concierge_e2e::upstream::{Reply, ScriptedUpstream};
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

#[test]
fn auto_compression_starts_above_the_threshold_and_keeps_the_display_history() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = worker.create_site(json!({
        "name": "Nha khoa nén",
        "template": "guarded",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url),
                "model": "scripted", "embed_model": "scripted-embed"},
        "guarded": {"auto_compress": true, "search": {"provider": "local"}},
    }));
    put_pages(worker, &site);
    let key = &site.secret_key;
    let mut chat_id = String::from("new");
    let old_count = |chat_id: &str| {
        let old = rpc(
            worker,
            key,
            "memory-server/memory/get_old_messages",
            json!({"conversation_id": chat_id}),
        );
        old["result"]["old_messages"].as_array().map_or(0, Vec::len)
    };
    for n in 1..=6 {
        upstream.push(Reply::text("YES"));
        upstream.push(Reply::text(&format!("Trả lời {n}.")));
        upstream.push(Reply::text(&format!("Summary {n}")));
        let (status, body) = into_parts(
            agent()
                .post(&worker.url("/v1/chat/completions"))
                .set("authorization", &format!("Bearer {key}"))
                .send_json(
                    json!({"model": format!("concierge-{}", site.id), "chat_id": chat_id,
                    "messages": [{"role": "user", "content": format!("Câu {n} về sâu răng?")}]}),
                ),
        );
        assert_eq!(status, 200, "{body}");
        let json: Value = serde_json::from_str(&body).expect("JSON");
        chat_id = json["chat_id"].as_str().expect("chat_id").to_string();
        if n == 5 {
            // 10 messages: not above SUMMARIZE_THRESHOLD yet.
            assert_eq!(old_count(&chat_id), 4);
        }
    }
    // 12 messages: everything before the 6 recent is compressed.
    assert_eq!(old_count(&chat_id), 0);
    let context = rpc(
        worker,
        key,
        "memory-server/memory/get_context",
        json!({"conversation_id": chat_id, "max_messages": 20}),
    );
    assert_eq!(
        context["result"]["messages"][0]["content"],
        "Câu 4 về sâu răng?"
    );
    let all = rpc(
        worker,
        key,
        "memory-server/memory/get_all_messages",
        json!({"conversation_id": chat_id}),
    );
    let all = all["result"]["messages"].as_array().expect("messages");
    assert_eq!(
        all.len(),
        12,
        "all 12, compressed ones included (no greeting)"
    );
    assert_eq!(all.iter().filter(|m| m["compressed"] == true).count(), 6);
}
