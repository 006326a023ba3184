//! `guarded` on the wire: the SearXNG search provider against a stub instance speaking its
//! JSON API, and a streamed `/v1/chat/completions` (chat id minted for an unknown
//! `X-Chat-Id`, the sources as the last content delta).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

use super::guarded::{guarded_site, put_pages, rpc};

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
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let (status, models) = into_parts(
        agent()
            .get(&worker.url("/v1/models"))
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .call(),
    );
    assert_eq!(status, 200, "{models}");
    let models: Value = serde_json::from_str(&models).expect("JSON");
    assert_eq!(models["data"][0]["id"], "dental-duckduckgo");
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text("Dùng kem có fluor mỗi ngày."));
    upstream.push(Reply::text("Hỏi về fluor."));
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
