//! The real path end to end: the Worker under `wrangler dev` streams an answer from a real
//! llama.cpp `llama-server` running SmolLM2-135M (installed by `make test`'s install step)
//! and stores it. The model's words are not asserted — a 135M model's answers are weak —
//! only that a real stream went through the whole path and was stored as streamed.

use concierge_e2e::api::{create_conversation, history, send, streamed_text, terminal};
use concierge_e2e::{LlmServer, Worker};
use serde_json::json;

#[test]
fn the_worker_streams_and_stores_a_real_model_answer() {
    let llm = LlmServer::start();
    let worker = Worker::shared();
    let site = worker.create_site(json!({
        "name": "Real model shop",
        // A short persona keeps the prompt small for a CPU-only 135M model.
        "persona": "Greeting: Xin chào quý khách!\nEm là trợ lý bán hàng của cửa hàng máy tính An Phát.",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", llm.base_url), "model": "smollm2-135m-instruct",
                // CPU-only prompt processing can be slow on a busy 2-core machine.
                "first_token_timeout_ms": 60000, "max_tokens": 48}
    }));
    let (conversation, greeting) = create_conversation(worker, &site, json!({}));
    assert_eq!(greeting["content"], "Xin chào quý khách!");

    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Shop có bán PC gaming không, giá bao nhiêu?",
    );
    assert_eq!(status, 200);
    let (name, data) = terminal(&events);
    assert_eq!(
        name,
        "completed",
        "{events:?}\nworker log:\n{}",
        worker.log()
    );
    assert_eq!(data["kind"], "answer");
    let chunks = events.iter().filter(|e| e.event.is_empty()).count();
    assert!(chunks >= 2, "the answer streamed in pieces ({chunks})");
    let text = streamed_text(&events);
    assert!(!text.trim().is_empty());

    let stored = history(worker, &site.secret_key, &conversation);
    let answer = stored.last().expect("the answer is stored");
    assert_eq!(answer["id"], data["message_id"]);
    assert_eq!(answer["kind"], "answer");
    assert_eq!(answer["content"].as_str().map(str::trim), Some(text.trim()));
    assert_ne!(answer["metadata"]["incomplete"], true);
}
