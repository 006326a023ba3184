//! The `analyst` template on the in-memory platform with a scripted model: routing by
//! intent, the data agent's tool calls (sum, top-N, period comparison), a failing tool
//! then a corrected call, retries exhausted, no connections, the formatter and its
//! fallback, isolation between users and sites, and a cut stream.
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::{ConversationStore, DataConnection};
use concierge_core::conversation::{MessageKind, Scope};
use concierge_core::engine::{self, NewConversation, TurnOutcome};
use concierge_core::error::{ChatModelError, ChatModelErrorKind, Error};
use concierge_core::flows::analyst::data::prepare_json;
use concierge_core::flows::analyst::{
    AnalystConfig, CHAT_NODE_PROMPT, DATA_AGENT_SYSTEM_PROMPT, INTENT_CLASSIFIER_PROMPT,
    RESPONSE_FORMATTER_PROMPT, tool_records,
};
use concierge_core::graph::block_on;
use concierge_core::identity::UserIdentity;
use concierge_core::memory::{MemoryBackend, Script};
use concierge_core::turn::{TurnEvent, TurnInput};
use serde_json::{Value, json};

const SITE: &str = "site-a";

fn orders() -> Vec<Value> {
    vec![
        json!({"ngay": "2024-01-05", "nen_tang": "Shopee", "san_pham": "Áo thun", "so_luong": 300, "doanh_thu": "60.000.000"}),
        json!({"ngay": "15/1/2024", "nen_tang": "Lazada", "san_pham": "Quần jean", "so_luong": 350, "doanh_thu": "50.000.000"}),
        json!({"ngay": "2024-01-31", "nen_tang": "Tiki", "san_pham": "Áo thun", "so_luong": 200, "doanh_thu": "40.000.000"}),
        json!({"ngay": "2024-02-02", "nen_tang": "Shopee", "san_pham": "Giày sneaker", "so_luong": 200, "doanh_thu": "57.750.000"}),
    ]
}

fn connection(id: &str, user: &str, name: &str, rows: &[Value]) -> (DataConnection, Vec<Value>) {
    let prepared = prepare_json(rows).unwrap();
    (
        DataConnection {
            id: id.into(),
            user_id: user.into(),
            name: name.into(),
            description: String::new(),
            row_count: 0,
            fields: prepared.fields,
        },
        prepared.rows,
    )
}

fn backend() -> MemoryBackend {
    let backend = MemoryBackend::default();
    let (c, rows) = connection("c1", "alice", "don_hang", &orders());
    backend.data.put(SITE, c, rows);
    let salaries = [json!({"ten": "Bình", "luong": 987654321})];
    let (c, rows) = connection("c2", "bob", "luong_nhan_vien", &salaries);
    backend.data.put(SITE, c, rows);
    // Same user id on another site: never visible from SITE.
    let (c, rows) = connection("c3", "alice", "other_site", &salaries);
    backend.data.put("site-b", c, rows);
    backend
}

fn open(backend: &MemoryBackend, user: Option<&str>) -> String {
    let new = NewConversation {
        site_id: SITE.into(),
        identity: user.map(|u| UserIdentity {
            sub: u.into(),
            role: None,
            permissions: vec![],
            department: None,
        }),
        user_id: user.map(Into::into),
        ..NewConversation::default()
    };
    let config = AnalystConfig::default();
    block_on(engine::create_conversation(
        backend,
        &analyst(backend, &config),
        new,
    ))
    .unwrap()
    .conversation
    .id
}

fn say(
    backend: &MemoryBackend,
    config: &AnalystConfig,
    id: &str,
    text: &str,
) -> (String, Vec<TurnEvent>, Result<TurnOutcome, Error>) {
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.into(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = block_on(engine::run_turn(
        backend,
        &analyst(backend, config),
        &input,
        &mut events,
    ));
    let shown = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (shown, events, outcome)
}

fn tool_ends(events: &[TurnEvent]) -> Vec<(String, bool, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolEnd {
                name, ok, output, ..
            } => Some((name.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect()
}

fn terminals(events: &[TurnEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, TurnEvent::Completed { .. } | TurnEvent::Failed { .. }))
        .count()
}

#[test]
fn prompts_are_the_seed_prompts_with_distinct_first_lines() {
    let firsts: Vec<&str> = [
        INTENT_CLASSIFIER_PROMPT,
        DATA_AGENT_SYSTEM_PROMPT,
        CHAT_NODE_PROMPT,
        RESPONSE_FORMATTER_PROMPT,
    ]
    .iter()
    .map(|p| p.lines().next().unwrap())
    .collect();
    assert_eq!(
        firsts,
        [
            "Bạn là một classifier phân loại ý định người dùng.",
            "Bạn là trợ lý phân tích dữ liệu kinh doanh.",
            "Bạn là trợ lý AI thân thiện, hỗ trợ phân tích dữ liệu kinh doanh.",
            "Format kết quả phân tích dữ liệu cho người dùng."
        ]
    );
    assert!(DATA_AGENT_SYSTEM_PROMPT.contains("6. Format số tiền: 1.000.000 VND"));
    assert!(RESPONSE_FORMATTER_PROMPT.contains(
        "Doanh thu tuần này tăng 15,5% so với tuần trước (từ 50.000.000 lên 57.750.000 VND)"
    ));
    for key in concierge_core::flows::analyst::SENTENCE_KEYS {
        let config = AnalystConfig::default();
        assert!(!config.vi.get(key).is_empty(), "vi {key}");
        assert!(!config.en.get(key).is_empty(), "en {key}");
    }
}

#[test]
fn a_monthly_sum_runs_the_tool_and_the_formatter_streams_vietnamese_numbers() {
    let backend = backend();
    let config = AnalystConfig::default();
    let id = open(&backend, Some("alice"));
    backend.model.reply(&["data_query"]);
    backend.model.tool_calls(
        "",
        &[(
            "call_1",
            "aggregate_data",
            r#"{"connection_name":"don_hang","operation":"sum","field":"doanh_thu","date_field":"ngay","date_from":"2024-01-01","date_to":"2024-01-31"}"#,
        )],
    );
    backend
        .model
        .reply(&["Tổng doanh thu tháng 1/2024 là 150000000 VND"]);
    backend
        .model
        .reply(&["Tổng doanh thu tháng 1/2024: 1500", "00000 VND"]);
    let (shown, events, outcome) = say(&backend, &config, &id, "Tổng doanh thu tháng 1/2024?");
    assert_eq!(shown, "Tổng doanh thu tháng 1/2024: 150.000.000 VND");
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1);
    assert!(ends[0].1);
    assert_eq!(ends[0].2["value"], json!(150_000_000));
    assert_eq!(ends[0].2["row_count"], json!(3));
    let outcome = outcome.unwrap();
    assert_eq!(outcome.intent, Some("data_query"));
    assert_eq!(
        outcome.route,
        ["intent_classifier", "data_agent_node", "response_formatter"]
    );
    assert_eq!(outcome.reply.content, shown);
    let records = tool_records(&outcome.reply);
    assert_eq!(records[0]["tool_name"], "aggregate_data");
    assert_eq!(records[0]["tool_call_id"], "call_1");
    assert!(records[0]["error"].is_null());
    // The agent never streamed; the formatter saw the agent's answer; the last event is
    // the one terminal event.
    let requests = backend.model.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[1].messages[0]
            .content
            .contains("- don_hang (4 rows)")
    );
    assert_eq!(requests[1].tools.len(), 5);
    assert!(
        requests[3]
            .messages
            .last()
            .unwrap()
            .content
            .contains("150000000 VND")
    );
    assert_eq!(terminals(&events), 1);
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
}

#[test]
fn top_n_and_period_comparison_give_the_seed_figures() {
    let backend = backend();
    let config = AnalystConfig {
        formatter_llm: false,
        ..AnalystConfig::default()
    };
    let id = open(&backend, Some("alice"));
    backend.model.reply(&["data_query"]);
    backend.model.tool_calls(
        "",
        &[
            (
                "t1",
                "get_top_items",
                r#"{"connection_name":"don_hang","sort_field":"so_luong","group_by":"san_pham","aggregate_field":"so_luong","limit":3}"#,
            ),
            (
                "t2",
                "compare_periods",
                r#"{"connection_name":"don_hang","operation":"sum","field":"doanh_thu","date_field":"ngay","period1_from":"2024-01-15","period1_to":"2024-01-15","period2_from":"2024-02-01","period2_to":"2024-02-07"}"#,
            ),
        ],
    );
    backend
        .model
        .reply(&["Doanh thu tăng 15.5% (từ 50000000 lên 57750000 VND)"]);
    let (shown, events, outcome) = say(&backend, &config, &id, "Top 3 sản phẩm bán chạy?");
    let ends = tool_ends(&events);
    assert_eq!(
        ends[0].2["items"],
        json!([{"group": "Áo thun", "value": 500}, {"group": "Quần jean", "value": 350},
               {"group": "Giày sneaker", "value": 200}])
    );
    assert_eq!(ends[1].2["period1_value"], json!(50_000_000));
    assert_eq!(ends[1].2["period2_value"], json!(57_750_000));
    assert_eq!(ends[1].2["difference"], json!(7_750_000));
    assert_eq!(ends[1].2["percentage_change"], json!(15.5));
    assert_eq!(
        shown,
        "Doanh thu tăng 15,5% (từ 50000000 lên 57.750.000 VND)"
    );
    assert!(outcome.is_ok());
}

#[test]
fn a_failing_tool_is_retried_and_the_fourth_failure_gives_up() {
    let backend = backend();
    let config = AnalystConfig::default();
    let id = open(&backend, Some("alice"));
    backend.model.reply(&["data_query"]);
    backend.model.tool_calls(
        "",
        &[(
            "a",
            "aggregate_data",
            r#"{"connection_name":"orders","operation":"sum","field":"doanh_thu"}"#,
        )],
    );
    backend.model.tool_calls(
        "",
        &[(
            "b",
            "aggregate_data",
            r#"{"connection_name":"don_hang","operation":"sum","field":"doanh_thu"}"#,
        )],
    );
    backend.model.reply(&["Tổng: 207750000 VND"]);
    backend.model.reply(&["Tổng doanh thu: 207750000 VND"]);
    let (shown, events, _) = say(&backend, &config, &id, "Tổng doanh thu?");
    let ends = tool_ends(&events);
    assert_eq!(
        ends[0].2,
        json!("Connection 'orders' not found. Available: don_hang")
    );
    assert!(!ends[0].1 && ends[1].1);
    assert_eq!(shown, "Tổng doanh thu: 207.750.000 VND");

    backend.model.reply(&["data_query"]);
    for n in 0..4 {
        let id = format!("x{n}");
        backend.model.tool_calls(
            "",
            &[(
                &id,
                "aggregate_data",
                r#"{"connection_name":"don_hang","operation":"median","field":"doanh_thu"}"#,
            )],
        );
    }
    let before = backend.model.requests().len();
    let (shown, events, outcome) = say(&backend, &config, &id, "Trung vị doanh thu?");
    assert_eq!(shown, config.vi.get("max_retries"));
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 4);
    assert_eq!(
        ends[3].2,
        json!("operation 'median' is not supported; use one of: sum, count, avg, min, max")
    );
    // Classifier + 4 agent calls; no fifth call, no formatter.
    assert_eq!(backend.model.requests().len() - before, 5);
    let reply = outcome.unwrap().reply;
    assert_eq!(reply.metadata["error"], "data_agent_max_retries");
    assert_eq!(tool_records(&reply).len(), 4);
}

#[test]
fn unclear_chat_and_no_connections_paths() {
    let backend = backend();
    let config = AnalystConfig::default();
    let id = open(&backend, Some("alice"));
    backend.model.reply(&["Intent: something else"]);
    let (shown, _, outcome) = say(&backend, &config, &id, "Cái đó");
    assert_eq!(shown, config.vi.get("clarify"));
    let outcome = outcome.unwrap();
    assert_eq!(outcome.reply.kind, MessageKind::Clarify);
    assert_eq!(outcome.route[1], "clarify_node");
    // Classifier transport failure → unclear.
    backend.model.push(Script::BreakAfter(
        vec![],
        ChatModelError::new(ChatModelErrorKind::Unreachable, "down"),
    ));
    let (shown, _, _) = say(&backend, &config, &id, "Hơn");
    assert_eq!(shown, config.vi.get("clarify"));
    backend.model.reply(&["\"chat\""]);
    backend
        .model
        .reply(&["Xin chào! Tôi có thể giúp bạn phân tích doanh thu."]);
    let (shown, _, outcome) = say(&backend, &config, &id, "Xin chào");
    assert_eq!(shown, "Xin chào! Tôi có thể giúp bạn phân tích doanh thu.");
    assert_eq!(outcome.unwrap().route[1], "chat_node");

    // Anonymous: no connections, no tool call, no agent model call.
    let anon = open(&backend, None);
    backend.model.reply(&["data_query"]);
    let before = backend.model.requests().len();
    let (shown, events, outcome) = say(&backend, &config, &anon, "Tổng doanh thu?");
    assert_eq!(shown, config.vi.get("no_connections"));
    assert!(tool_ends(&events).is_empty());
    assert_eq!(backend.model.requests().len() - before, 1);
    assert_eq!(outcome.unwrap().route[2], "response_formatter");
    // A user with no data sets on this site.
    let carol = open(&backend, Some("carol"));
    backend.model.reply(&["data_query"]);
    let (shown, _, _) = say(&backend, &config, &carol, "Tổng doanh thu?");
    assert_eq!(shown, config.vi.get("no_connections"));
}

#[test]
fn another_users_and_another_sites_data_never_reach_alice() {
    let backend = backend();
    let config = AnalystConfig::default();
    let id = open(&backend, Some("alice"));
    backend.model.reply(&["data_query"]);
    backend.model.tool_calls(
        "",
        &[
            ("1", "get_data_schema", "{}"),
            ("2", "aggregate_data", r#"{"connection_name":"luong_nhan_vien","operation":"sum","field":"luong"}"#),
            ("3", "execute_aggregation", r#"{"connection_name":"don_hang","pipeline":[{"$lookup":{"from":"c2","localField":"x","foreignField":"x","as":"j"}}]}"#),
            ("4", "execute_aggregation", r#"{"connection_name":"don_hang","pipeline":[{"$lookup":{"from":"other_site","localField":"x","foreignField":"x","as":"j"}}]}"#),
        ],
    );
    backend.model.reply(&["Không có."]);
    backend.model.reply(&["Không có."]);
    let (_, events, outcome) = say(&backend, &config, &id, "Lương nhân viên?");
    let ends = tool_ends(&events);
    assert_eq!(ends[0].2["connections"].as_array().unwrap().len(), 1);
    assert_eq!(
        ends[1].2,
        json!("Connection 'luong_nhan_vien' not found. Available: don_hang")
    );
    assert_eq!(ends[2].2, json!("Connection 'c2' not found"));
    assert_eq!(ends[3].2, json!("Connection 'other_site' not found"));
    let all = format!(
        "{events:?}{:?}{:?}",
        outcome.unwrap(),
        backend.model.requests()
    );
    assert!(!all.contains("987654321") && !all.contains("Bình"), "leak");
}

#[test]
fn the_formatter_falls_back_and_a_cut_stream_fails_once_keeping_the_message() {
    let backend = backend();
    let config = AnalystConfig::default();
    let id = open(&backend, Some("alice"));
    backend.model.reply(&["data_query"]);
    backend.model.reply(&["Có 4 đơn hàng."]);
    backend.model.reply(&["   "]);
    let (shown, _, outcome) = say(&backend, &config, &id, "Bao nhiêu đơn?");
    assert_eq!(shown, "Có 4 đơn hàng.");
    assert_eq!(outcome.unwrap().reply.metadata["formatter"], "fallback");

    backend.model.reply(&["data_query"]);
    backend.model.reply(&["Có 4 đơn hàng."]);
    backend.model.push(Script::BreakAfter(
        vec!["Có 4 ".into()],
        ChatModelError::new(ChatModelErrorKind::Unreachable, "cut"),
    ));
    let (shown, events, outcome) = say(&backend, &config, &id, "Bao nhiêu đơn hàng?");
    assert_eq!(shown, "Có 4 ");
    assert!(outcome.is_err());
    assert_eq!(terminals(&events), 1);
    assert!(matches!(events.last(), Some(TurnEvent::Failed { .. })));
    let stored = block_on(
        backend
            .store
            .load_recent_messages(Scope::new(SITE, &id), 100),
    )
    .unwrap();
    assert!(stored.iter().any(|m| m.content == "Bao nhiêu đơn hàng?"));
    assert!(
        stored
            .iter()
            .any(|m| m.is_incomplete() && m.content == "Có 4 ")
    );
}

/// What a node's scripted reply does in the property tests.
#[derive(Debug, Clone)]
enum Fault {
    Text(String),
    Empty,
    Whitespace,
    Fail,
    CutAfter(String),
}

fn fault() -> impl proptest::strategy::Strategy<Value = Fault> {
    use proptest::prelude::*;
    prop_oneof![
        "[a-zA-Z ]{1,12}".prop_map(Fault::Text),
        Just(Fault::Empty),
        Just(Fault::Whitespace),
        Just(Fault::Fail),
        "[a-z]{1,6}".prop_map(Fault::CutAfter),
    ]
}

fn push(backend: &MemoryBackend, fault: &Fault) {
    match fault {
        Fault::Text(t) => backend.model.reply(&[t]),
        Fault::Empty => backend.model.reply(&[]),
        Fault::Whitespace => backend.model.reply(&["  ", "\n"]),
        Fault::Fail => backend.model.push(Script::BreakAfter(
            vec![],
            ChatModelError::new(ChatModelErrorKind::Unreachable, "down"),
        )),
        Fault::CutAfter(t) => backend.model.push(Script::BreakAfter(
            vec![t.clone()],
            ChatModelError::new(ChatModelErrorKind::Unreachable, "cut"),
        )),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(100))]

    // Feature: ai-chat-agent, Property 2: For any classified intent, the Chat_Workflow SHALL route to the correct node (data_agent_node for "data_query", chat_node for "chat", clarify_node for "unclear").
    #[test]
    fn property_2_routing(label in proptest::sample::select(vec!["data_query", "chat", "unclear", "CHAT", "garbage"])) {
        let backend = backend();
        let config = AnalystConfig::default();
        let id = open(&backend, Some("alice"));
        backend.model.reply(&[label]);
        backend.model.reply(&["Có 4 đơn hàng."]);
        backend.model.reply(&["Có 4 đơn hàng."]);
        let (_, _, outcome) = say(&backend, &config, &id, "Câu hỏi");
        let outcome = outcome.unwrap();
        let node = match label.to_lowercase().as_str() {
            "data_query" => "data_agent_node",
            "chat" => "chat_node",
            _ => "clarify_node",
        };
        proptest::prop_assert_eq!(outcome.route, vec!["intent_classifier", node, "response_formatter"]);
    }

    // Feature: ai-chat-agent, Property 8: For any workflow execution that completes without error, the final_response field SHALL be non-empty.
    // Feature: ai-chat-agent, Property 10: For any workflow execution, exactly one terminal event SHALL be emitted: either "chat:message:completed" or "chat:message:failed".
    #[test]
    fn properties_8_and_10_final_response_and_one_terminal(
        intent in proptest::sample::select(vec!["data_query", "chat", "unclear"]),
        classifier in fault(), agent in fault(), formatter in fault(),
        tool_first in proptest::bool::ANY, store_fails in proptest::bool::ANY,
    ) {
        let backend = backend();
        let config = AnalystConfig::default();
        let id = open(&backend, Some(if store_fails { "nobody" } else { "alice" }));
        match classifier {
            Fault::Fail => push(&backend, &classifier),
            _ => backend.model.reply(&[intent]),
        }
        if tool_first {
            backend.model.tool_calls("", &[("t", "aggregate_data", r#"{"connection_name":"don_hang","operation":"count"}"#)]);
        }
        push(&backend, &agent);
        push(&backend, &formatter);
        backend.data.fail.set(store_fails && intent == "data_query");
        let (shown, events, outcome) = say(&backend, &config, &id, "Bao nhiêu đơn?");
        proptest::prop_assert_eq!(terminals(&events), 1);
        let last_is_terminal = matches!(events.last(), Some(TurnEvent::Completed { .. } | TurnEvent::Failed { .. }));
        proptest::prop_assert!(last_is_terminal);
        if let Ok(outcome) = outcome {
            let completed = matches!(events.last(), Some(TurnEvent::Completed { .. }));
            proptest::prop_assert!(completed);
            proptest::prop_assert!(!outcome.reply.content.trim().is_empty());
            proptest::prop_assert_eq!(outcome.reply.content, shown);
        }
    }

    // Feature: ai-chat-agent, Property 9: For any workflow execution, the messages passed to nodes SHALL include the full conversation history from conversation_repo.
    #[test]
    fn property_9_full_history(turns in proptest::collection::vec(("[a-z]{3,8}", "[a-z]{3,8}", proptest::bool::ANY), 0..6)) {
        let backend = backend();
        let config = AnalystConfig::default();
        let id = open(&backend, Some("alice"));
        for (question, answer, cut) in &turns {
            backend.model.reply(&["chat"]);
            if *cut {
                push(&backend, &Fault::CutAfter(answer.clone()));
            } else {
                backend.model.reply(&[answer]);
            }
            let _ = say(&backend, &config, &id, question);
        }
        let stored: Vec<String> = block_on(backend.store.load_recent_messages(Scope::new(SITE, &id), 1000))
            .unwrap()
            .into_iter()
            .filter(|m| !m.is_incomplete())
            .map(|m| m.content)
            .collect();
        let before = backend.model.requests().len();
        backend.model.reply(&["data_query"]);
        backend.model.reply(&["Có 4 đơn hàng."]);
        backend.model.reply(&["Có 4 đơn hàng."]);
        let _ = say(&backend, &config, &id, "câu cuối");
        let requests = backend.model.requests();
        proptest::prop_assert_eq!(requests.len() - before, 3);
        for request in &requests[before..] {
            let contents: Vec<&str> = request.messages[1..].iter().map(|m| m.content.as_str()).collect();
            let mut want: Vec<&str> = stored.iter().map(String::as_str).collect();
            want.push("câu cuối");
            proptest::prop_assert_eq!(&contents[..want.len()], &want[..]);
        }
    }
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn analyst<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::analyst::AnalystConfig,
) -> concierge_core::flows::analyst::AnalystAssistant<&'b concierge_core::memory::MemoryDataSets> {
    concierge_core::flows::analyst::AnalystAssistant::new(config.clone(), &backend.data)
}
