//! The real path end to end: the Worker under `wrangler dev` streams an answer from a real
//! llama.cpp `llama-server` running SmolLM2-135M (installed by `make test`'s install step)
//! and stores it. The model's words are not asserted — a 135M model's answers are weak —
//! only that a real stream went through the whole path and was stored as streamed, and
//! (for `analyst`) that the model's real tool calls went through the data tools.

use concierge_e2e::api::{
    create_conversation, fixed_sentence, history, send, streamed_text, terminal,
};
use concierge_e2e::{LlmServer, ReceivedEvent, Worker, agent, into_parts};
use serde_json::{Value, json};

/// The two tests here each start a llama-server: run at once on a 2-core machine beside
/// the rest of the suite, each slows the other past its deadlines. One at a time.
static ONE_MODEL_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_model_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_MODEL_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn the_worker_streams_and_stores_a_real_model_answer() {
    let _one = one_model_at_a_time();
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

/// The five data tools of the `analyst` template (seed 001).
const DATA_TOOLS: [&str; 5] = [
    "get_data_schema",
    "aggregate_data",
    "get_top_items",
    "compare_periods",
    "execute_aggregation",
];

fn events_named(events: &[ReceivedEvent], name: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.event == name)
        .map(|e| serde_json::from_str(&e.data).expect("JSON event"))
        .collect()
}

/// The real model on the `analyst` data path: the classifier (constrained to the three
/// labels), the data agent's tool calls against the user's uploaded data set, the
/// formatter. A 135M model's numbers are not asserted — only the protocol: paired tool
/// events for the seed's tools, exactly one terminal event, and the answer stored with
/// the tool records matching the events (or, when the model never makes a valid call, the
/// product's "retries exhausted" sentence, stored the same way). Another user's data set
/// never shows.
#[test]
fn the_real_model_answers_a_data_question_through_the_tools() {
    let _one = one_model_at_a_time();
    let llm = LlmServer::start();
    let worker = Worker::shared();
    let site = worker.create_site(json!({
        "name": "Real model analyst",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", llm.base_url), "model": "smollm2-135m-instruct",
                // CPU-only prompt processing of the agent's tool prompt is slow on a busy machine;
                // a tool call fits in 256 tokens.
                "first_token_timeout_ms": 120000, "max_tokens": 256}
    }));
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            // The 135M model answers in prose even with `tool_choice: "required"` (llama.cpp
            // cannot enforce it with this chat template): the site asks for the first
            // call as JSON then.
            .send_json(json!({"template": "analyst", "analyst": {"json_tool_calls": true}})),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/data/sales?user_id=alice"))
            .set("x-api-key", &site.secret_key)
            .set("content-type", "text/csv")
            .send_string(
                "order_date,platform,product,revenue\n\
                 2024-01-05,Shopee,Áo thun,60000000\n\
                 2024-01-15,Lazada,Quần jean,50000000\n\
                 2024-01-31,Tiki,Áo thun,40000000\n",
            ),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/data/salaries"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"user_id": "bob", "rows": [{"name": "Bình", "salary": 987654321}]})),
    );
    assert_eq!(status, 200, "{body}");
    // A 135M model on a loaded CPU sometimes fails a turn outright (its formatter writes
    // nothing, or a deadline passes). Such a turn must still end as the product promises —
    // one `failed` event, the visitor's message kept — and the question is asked again in
    // a new conversation, at most three times in all.
    let question = "Tổng doanh thu (revenue) của sales là bao nhiêu?";
    let mut attempt = 0;
    let (conversation, events, name, data) = loop {
        attempt += 1;
        let (conversation, _) = create_conversation(worker, &site, json!({"user_id": "alice"}));
        let (status, events) = send(worker, &site.secret_key, &conversation, question);
        assert_eq!(status, 200);
        let (name, data) = terminal(&events);
        if name == "completed" || attempt == 3 {
            break (conversation, events, name, data);
        }
        assert!(
            matches!(
                data["error"]["code"].as_str(),
                Some("model_failed" | "empty_answer")
            ),
            "{events:?}"
        );
        let stored = history(worker, &site.secret_key, &conversation);
        let asked = stored.last().expect("the visitor's message is kept");
        assert_eq!(asked["role"], "user", "{stored:?}");
        assert_eq!(asked["content"], question);
        eprintln!("attempt {attempt}: the small model's turn failed ({data}); asking again");
    };
    assert_eq!(
        name,
        "completed",
        "{events:?}\nworker log:\n{}",
        worker.log()
    );
    assert_eq!(data["intent"], "data_query", "{events:?}");

    let starts = events_named(&events, "tool_start");
    let ends = events_named(&events, "tool_end");
    assert!(!starts.is_empty(), "the model called a tool: {events:?}");
    assert_eq!(starts.len(), ends.len(), "{events:?}");
    for (start, end) in starts.iter().zip(&ends) {
        assert_eq!(start["call_id"], end["call_id"], "{events:?}");
        assert_eq!(start["name"], end["name"]);
        let tool = start["name"].as_str().expect("tool name");
        assert!(DATA_TOOLS.contains(&tool), "{tool}");
    }

    let text = streamed_text(&events);
    assert!(!text.trim().is_empty(), "{events:?}");
    let stored = history(worker, &site.secret_key, &conversation);
    let answer = stored.last().expect("the answer is stored");
    assert_eq!(answer["id"], data["message_id"]);
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["kind"], "answer");
    assert_eq!(answer["content"].as_str().map(str::trim), Some(text.trim()));
    assert_eq!(answer["metadata"]["intent"], "data_query");
    let records = answer["metadata"]["tool_calls"]
        .as_array()
        .expect("tool records");
    let recorded: Vec<(&Value, &Value)> = records
        .iter()
        .map(|r| (&r["tool_call_id"], &r["tool_name"]))
        .collect();
    let shown: Vec<(&Value, &Value)> = starts.iter().map(|s| (&s["call_id"], &s["name"])).collect();
    assert_eq!(recorded, shown, "every tool call is stored with the answer");
    for (record, end) in records.iter().zip(&ends) {
        // A record holds the result or the error the model was given, like the event.
        assert_eq!(
            record["error"].is_null(),
            end["ok"] == true,
            "{record} {end}"
        );
    }
    match answer["metadata"]["error"].as_str() {
        None => {}
        // The model never produced a call that worked: the product says so, honestly.
        Some("data_agent_max_retries" | "data_agent_step_limit") => {
            assert_eq!(
                answer["content"],
                fixed_sentence("analyst_fixed_vi.md", "max_retries")
            );
        }
        Some(other) => panic!("unexpected error {other}: {answer}"),
    }
    let seen = format!("{events:?}{stored:?}");
    assert!(!seen.contains("987654321") && !seen.contains("987.654.321"));
}
