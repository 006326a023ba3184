//! Issue 27, `guarded` (seed 004) through the real Worker, with a stub SearXNG instance
//! as the web search: a result whose URL is a markdown link (`[C](https://c.example/x)`)
//! or an angle-bracketed one is cleaned to its URL (the seed's "Clean markdown link
//! formats"), so the sources list keeps every result; the cleaned URL is validated like
//! any other, so a link wrapping a `javascript:` URL is still dropped.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use concierge_e2e::api::{create_conversation, send, streamed_text, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use serde_json::{Value, json};

use super::guarded::{guarded_site, rpc};

/// A stub SearXNG instance answering every request with `body`.
fn searxng(body: Value) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
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
    url
}

fn results() -> Value {
    json!({"query": "sâu răng", "results": [
        {"title": "A", "url": "https://a.example/sau-rang", "content": "Sâu răng do vi khuẩn."},
        {"title": "C", "url": "[C](https://c.example/x)", "content": "Chải răng với fluor."},
        {"title": "J", "url": "[J](javascript:alert(1))", "content": "x"},
        {"title": "D", "url": "<https://d.example/y>", "content": "Khám răng định kỳ."},
        {"title": "Răng", "url": "[Tooth](https://en.wikipedia.org/wiki/Tooth_(anatomy))", "content": "Cấu tạo răng."},
        {"title": "E", "url": "[E](https://e.example/z \"tiêu đề\")", "content": "Chỉ nha khoa."}
    ]})
}

#[test]
fn markdown_link_results_are_cleaned_to_their_url_and_every_result_is_a_source() {
    let worker = concierge_e2e::Worker::shared();
    let upstream = ScriptedUpstream::start();
    let url = searxng(results());
    let site = guarded_site(
        worker,
        &upstream,
        json!({"provider": "searxng", "url": url}),
    );
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text("Chải răng hai lần mỗi ngày."));
    upstream.push(Reply::text("Hỏi về sâu răng."));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Làm sao để ngừa sâu răng?",
    );
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    // The sources list the visitor reads: every result with a safe URL, cleaned, in order
    // (at most five).
    assert_eq!(
        streamed_text(&events),
        "Chải răng hai lần mỗi ngày.\n\nNguồn tham khảo:\n\n\
         1. A - https://a.example/sau-rang\n\
         2. C - https://c.example/x\n\
         3. D - https://d.example/y\n\
         4. Răng - https://en.wikipedia.org/wiki/Tooth_(anatomy)\n\
         5. E - https://e.example/z"
    );
    // The search step's tool_end carries the same cleaned links.
    let end: Value = events
        .iter()
        .find(|e| e.event == "tool_end")
        .map(|e| serde_json::from_str(&e.data).expect("JSON"))
        .expect("tool_end");
    let urls: Vec<&str> = end["output"]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["url"].as_str().expect("url"))
        .collect();
    assert_eq!(
        urls,
        [
            "https://a.example/sau-rang",
            "https://c.example/x",
            "https://d.example/y",
            "https://en.wikipedia.org/wiki/Tooth_(anatomy)",
            "https://e.example/z"
        ]
    );
    // The model's prompt and the JSON-RPC tool read clean `Link:` lines, never the script.
    let tool = rpc(
        worker,
        &site.secret_key,
        "tool-server/tools/call",
        json!({"name": "duckduckgo_search", "arguments": {"query": "sâu răng"}}),
    );
    let content = tool["result"]["content"].as_str().expect("content");
    assert!(
        content.contains("Title: C\nContent: Chải răng với fluor.\nLink: https://c.example/x"),
        "{content}"
    );
    assert!(!content.contains("javascript:"), "{content}");
    assert!(!content.contains("]("), "{content}");
    let prompt = upstream
        .chat_requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .find(|c| c.contains("Link: https://c.example/x"));
    assert!(prompt.is_some(), "the answer prompt cites the cleaned link");
}
