//! The `shop` assistant through the real Worker under `wrangler dev`, against scripted
//! upstreams (OpenAI-compatible and Ollama protocol) on loopback: deterministic
//! conversations, what is stored, retrieval reaching the prompt, 202 mode, the queue.

use std::time::Duration;

use concierge_e2e::api::{
    TURNS_UNTIL_EMBEDDED, create_conversation, eventually, fixed_sentence, history, more_turns,
    search, send, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

fn greeting_vi() -> String {
    let persona =
        std::fs::read_to_string(concierge_e2e::repo_root().join("prompts/system_persona_vi.md"))
            .expect("persona");
    persona
        .lines()
        .find_map(|l| l.strip_prefix("Greeting: "))
        .expect("Greeting line")
        .trim()
        .to_string()
}

#[test]
fn greeting_is_stored_when_a_conversation_is_created() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Greeting shop", &upstream.base_url, false);
    let (conversation, greeting) = create_conversation(worker, &site, json!({}));
    assert_eq!(greeting["role"], "assistant");
    assert_eq!(greeting["kind"], "greeting");
    assert_eq!(greeting["content"], greeting_vi().as_str());
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["id"], greeting["id"]);
    assert!(
        upstream.chat_requests().is_empty(),
        "no LLM call for the greeting"
    );
}

#[test]
fn unknown_intent_gets_a_clarifying_question_then_resolves() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Clarify shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    let (status, events) = send(worker, &site.secret_key, &conversation, "xin chào");
    assert_eq!(status, 200);
    assert_eq!(events[0].event, "started");
    let (name, data) = terminal(&events);
    assert_eq!(name, "completed");
    assert_eq!(data["kind"], "clarify");
    assert_eq!(data["intent"], "unknown");
    let question = streamed_text(&events);
    assert_eq!(
        question,
        fixed_sentence("shop_fixed_vi.md", "clarify.general.1")
    );
    assert!(
        upstream.chat_requests().is_empty(),
        "clarify does not call the LLM"
    );

    upstream.push(Reply::text(
        "Dạ, với 20 triệu em đề xuất cấu hình i5 và RTX 4060 ạ.",
    ));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "tư vấn cấu hình pc chơi game",
    );
    let (name, data) = terminal(&events);
    assert_eq!(
        (name.as_str(), data["kind"].as_str()),
        ("completed", Some("answer"))
    );
    assert_eq!(data["intent"], "assemble_pc");
    assert_eq!(
        streamed_text(&events),
        "Dạ, với 20 triệu em đề xuất cấu hình i5 và RTX 4060 ạ."
    );

    let stored = history(worker, &site.secret_key, &conversation);
    let kinds: Vec<(&str, &str)> = stored
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or(""),
                m["kind"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("assistant", "greeting"),
            ("user", "text"),
            ("assistant", "clarify"),
            ("user", "text"),
            ("assistant", "answer")
        ]
    );
    assert_eq!(stored[2]["content"], question.as_str());
    assert_eq!(stored[4]["id"], data["message_id"]);
    assert_eq!(stored[4]["metadata"]["intent"], "assemble_pc");
}

#[test]
fn warranty_branch_asks_for_the_serial_and_answers_from_records() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Warranty shop", &upstream.base_url, false);
    let (status, body) = into_parts(agent().post(&worker.url("/admin/warranty")).set("x-api-key", &site.secret_key).send_json(
        json!({"records": [{"serial": "0979825281", "product": "S23 Ultra", "warranty_until": "2026-08-12"}]}),
    ));
    assert_eq!(status, 200, "{body}");
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Tôi muốn kiểm tra bảo hành",
    );
    assert_eq!(terminal(&events).1["kind"], "warranty");
    assert_eq!(
        streamed_text(&events),
        fixed_sentence("shop_fixed_vi.md", "warranty.ask_serial")
    );

    let (_, events) = send(worker, &site.secret_key, &conversation, "abc");
    assert_eq!(
        streamed_text(&events),
        fixed_sentence("shop_fixed_vi.md", "warranty.remind_rule")
    );

    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "serial là 0979825281.",
    );
    let found = fixed_sentence("shop_fixed_vi.md", "warranty.found")
        .replace("{product}", "S23 Ultra")
        .replace("{serial}", "0979825281")
        .replace("{date}", "12/8/2026");
    assert_eq!(streamed_text(&events), found);

    let (_, events) = send(worker, &site.secret_key, &conversation, "SN: ZZZ-404-NOPE");
    assert_eq!(
        streamed_text(&events),
        fixed_sentence("shop_fixed_vi.md", "warranty.not_found")
    );
    assert!(
        upstream.chat_requests().is_empty(),
        "the warranty branch never calls the LLM"
    );
}

#[test]
fn knowledge_is_retrieved_into_the_prompt_the_upstream_receives() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Knowledge shop", &upstream.base_url, false);
    let doc =
        "Chính sách đổi trả: sản phẩm lỗi được đổi mới trong 30 ngày, mã chính sách ZEPHYR-30.";
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/knowledge/doi-tra"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"title": "Đổi trả", "content": doc})),
    );
    assert_eq!(status, 201, "{body}");
    eventually(
        Duration::from_secs(30),
        "the document to be indexed",
        || {
            let (_, text) = into_parts(
                agent()
                    .get(&worker.url("/admin/knowledge"))
                    .set("x-api-key", &site.secret_key)
                    .call(),
            );
            text.contains("\"index_status\":\"done\"").then_some(())
        },
    );

    upstream.push(Reply::text(
        "Dạ, sản phẩm lỗi được đổi mới trong 30 ngày ạ.",
    ));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Giá đổi trả sản phẩm lỗi thế nào, mua rồi có được đổi không?",
    );
    assert_eq!(terminal(&events).0, "completed");
    let requests = upstream.chat_requests();
    assert_eq!(requests.len(), 1);
    let prompt = requests[0].body["messages"].to_string();
    assert!(
        prompt.contains("ZEPHYR-30"),
        "the retrieved passage is in the prompt: {prompt}"
    );
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(requests[0].body["model"], "scripted");
}

#[test]
fn ollama_protocol_upstream_streams_an_answer() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Ollama shop", &upstream.base_url, true);
    upstream.push(Reply::text("Dạ, RTX 4060 giá 8.490.000 VND ạ."));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "card RTX 4060 giá bao nhiêu?",
    );
    assert_eq!(terminal(&events).0, "completed");
    assert_eq!(streamed_text(&events), "Dạ, RTX 4060 giá 8.490.000 VND ạ.");
    let requests = upstream.chat_requests();
    assert_eq!(requests[0].path, "/api/chat");
    let stored = history(worker, &site.secret_key, &conversation);
    assert_eq!(
        stored.last().expect("answer")["content"],
        "Dạ, RTX 4060 giá 8.490.000 VND ạ."
    );
}

#[test]
fn respond_async_returns_202_and_the_answer_lands_in_history() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Async shop", &upstream.base_url, false);
    upstream.push(Reply::text("Dạ, bên em giao hàng toàn quốc ạ."));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/messages")))
            .set("x-api-key", &site.secret_key)
            .set("prefer", "respond-async")
            .send_json(
                json!({"content": "Shop có giao hàng tận nơi không, mua online được không?"}),
            ),
    );
    assert_eq!(status, 202, "{body}");
    let accepted: Value = serde_json::from_str(&body).expect("JSON");
    let message_id = accepted["message_id"]
        .as_str()
        .expect("message_id")
        .to_string();
    let answer = eventually(Duration::from_secs(10), "the answer in history", || {
        history(worker, &site.secret_key, &conversation)
            .into_iter()
            .find(|m| m["id"] == message_id.as_str())
    });
    assert_eq!(answer["content"], "Dạ, bên em giao hàng toàn quốc ạ.");
    assert_eq!(answer["kind"], "answer");
}

#[test]
fn a_message_leaving_the_window_is_embedded_through_the_queue_and_retrievable() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Queue shop", &upstream.base_url, false);
    upstream.set_default(Reply::text("Dạ vâng ạ."));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    send(
        worker,
        &site.secret_key,
        &conversation,
        "Tôi muốn mua laptop màu periwinkle, giá bao nhiêu?",
    );
    more_turns(
        worker,
        &site.secret_key,
        &conversation,
        TURNS_UNTIL_EMBEDDED,
    );
    let found = eventually(
        Duration::from_secs(30),
        "the message to be retrievable",
        || {
            let results = search(worker, &site, "laptop periwinkle", Some(&conversation));
            results.into_iter().find(|t| t.contains("periwinkle"))
        },
    );
    assert!(found.contains("màu periwinkle"));
}

#[test]
fn an_always_failing_embedder_marks_the_message_embed_failed() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.fail_embeddings(true);
    let site = site_with_upstream(worker, "Failing embed shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(worker, &site.secret_key, &conversation, "xin chào");
    assert_eq!(terminal(&events).0, "completed");
    more_turns(
        worker,
        &site.secret_key,
        &conversation,
        TURNS_UNTIL_EMBEDDED,
    );
    let user = eventually(
        Duration::from_secs(30),
        "embed_failed on the user message",
        || {
            history(worker, &site.secret_key, &conversation)
                .into_iter()
                .find(|m| m["role"] == "user" && m["metadata"]["embed_failed"] == true)
        },
    );
    assert_eq!(user["content"], "xin chào");
    let embed_calls = upstream
        .recorded()
        .iter()
        .filter(|r| r.path.ends_with("/embeddings"))
        .count();
    assert!(
        embed_calls >= 3,
        "retried before giving up ({embed_calls} calls)"
    );
}

#[test]
fn memory_older_than_the_history_window_is_retrieved_and_only_what_leaves_the_window_is_embedded() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ vâng ạ."));
    let site = site_with_upstream(worker, "Memory shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let first = "Tôi muốn mua laptop màu periwinkle, giá bao nhiêu?";
    let (_, events) = send(worker, &site.secret_key, &conversation, first);
    assert_eq!(terminal(&events).0, "completed");
    // No knowledge and no earlier memory: the turn embeds nothing before calling the model,
    // nor afterwards: the message is inside the history window, where memory never looks.
    let recorded = upstream.recorded();
    let chat = recorded
        .iter()
        .position(|r| r.path.ends_with("/chat/completions"))
        .expect("the model was called");
    assert!(
        recorded[..chat]
            .iter()
            .all(|r| !r.path.ends_with("/embeddings")),
        "no retrieval embedding for a new conversation on a site without knowledge"
    );
    // Six more turns. A message is embedded one turn before it leaves the 12-message
    // window (the greeting and 6 turns fill it): until then nothing is embedded.
    for i in 1..=6 {
        let (_, events) = send(
            worker,
            &site.secret_key,
            &conversation,
            &format!("Cho em hỏi giá bàn phím cơ mẫu số {i} bao nhiêu ạ?"),
        );
        assert_eq!(terminal(&events).0, "completed");
        if i == 4 {
            // Five turns in, the first message is not due yet: it was never embedded.
            let embedded: Vec<String> = upstream
                .recorded()
                .iter()
                .filter(|r| r.path.ends_with("/embeddings"))
                .map(|r| r.body.to_string())
                .filter(|body| body.contains("periwinkle"))
                .collect();
            assert!(
                embedded.is_empty(),
                "a message of the window was embedded: {embedded:?}"
            );
        }
    }
    // The sixth turn queued the first question and its answer, which left the window with
    // the seventh.
    eventually(Duration::from_secs(30), "the first message indexed", || {
        search(worker, &site, "laptop periwinkle", Some(&conversation))
            .into_iter()
            .find(|t| t.contains("periwinkle"))
    });
    // One more turn, then the question about the first message.
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Cho em hỏi giá bàn phím cơ mẫu số 7 bao nhiêu ạ?",
    );
    assert_eq!(terminal(&events).0, "completed");
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Nhắc lại giá laptop màu periwinkle giúp em",
    );
    assert_eq!(terminal(&events).0, "completed");
    let requests = upstream.chat_requests();
    let last = &requests.last().expect("a chat request").body["messages"];
    let history: Vec<&str> = last
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        !history.contains(&first),
        "the first message is outside the history window: {history:?}"
    );
    let system = last[0]["content"].as_str().expect("system prompt");
    assert!(
        system.contains("màu periwinkle"),
        "the first message comes back from memory into the prompt:\n{system}"
    );
}
