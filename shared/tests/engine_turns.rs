//! The engine's generic turn with the in-memory platform: a tool-using template built on
//! it (ReAct through a whole turn: tool rounds stored and replayed into the next prompt;
//! the step cap and the error budget end the turn with the template's sentence), payloads
//! sent, stored and replayed, stateless turns, and the one embedding policy over every kind
//! of stored message.
#![allow(clippy::unwrap_used)]

use concierge_core::agent::{ReactConfig, ToolRegistry};
use concierge_core::boundary::ChatRequest;
use concierge_core::chat::{ChatMessage, Role};
use concierge_core::conversation::{
    EmbeddingStatus, Language, MessageKind, Metadata, Scope, chat_history, embedding_policy,
};
use concierge_core::engine::{
    self, Answer, Assistant, NewConversation, Platform, StatelessInput, Turn, TurnConfig,
};
use concierge_core::error::{ChatModelError, ChatModelErrorKind, Error};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryBackend, Script};
use concierge_core::payload::{ColumnKind, Payload, TableColumn, TablePayload};
use concierge_core::turn::{TurnEvent, TurnInput};
use serde_json::json;

mod tools;
use tools::{ListSheets, SumColumn};

const SITE: &str = "site-1";

/// A small tool-using template on the engine: a system prompt, the stored history (tool
/// rounds included) and the ReAct answer step.
struct Sheets {
    turn: TurnConfig,
    react: ReactConfig,
}

const GAVE_UP: &str = "Xin lỗi, em chưa tính được số liệu này.";

impl Sheets {
    fn new() -> Self {
        Self {
            turn: TurnConfig::default(),
            react: ReactConfig::default(),
        }
    }
}

impl Assistant for Sheets {
    fn config(&self) -> &TurnConfig {
        &self.turn
    }
    fn greeting(&self, _language: Language) -> &str {
        "Chào anh/chị, em xem số liệu giúp ạ."
    }
    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        let mut messages = vec![ChatMessage::system("Bạn là trợ lý phân tích dữ liệu.")];
        messages.extend(chat_history(&turn.history));
        let request = ChatRequest {
            messages,
            ..ChatRequest::default()
        };
        let (sum, list) = (SumColumn, ListSheets);
        let tools = ToolRegistry::new().with(&sum).with(&list);
        let metadata = Metadata::new();
        let answered = engine::react_answer(
            platform,
            turn,
            &tools,
            &self.react,
            request,
            GAVE_UP,
            metadata,
        )
        .await?;
        Ok(Answer {
            reply: answered.reply,
            intent: None,
            confidence: None,
            usage: answered.usage,
            route: vec!["agent"],
        })
    }
}

fn conversation<A: Assistant>(backend: &MemoryBackend, assistant: &A) -> String {
    let new = NewConversation {
        site_id: SITE.into(),
        ..NewConversation::default()
    };
    let created = block_on(engine::create_conversation(backend, assistant, new)).unwrap();
    created.conversation.id
}

fn say<A: Assistant>(
    backend: &MemoryBackend,
    assistant: &A,
    conversation_id: &str,
    text: &str,
) -> (Vec<TurnEvent>, Result<engine::TurnOutcome, Error>) {
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = backend
        .timer
        .run(engine::run_turn(backend, assistant, &input, &mut events));
    (events, outcome)
}

fn names(events: &[TurnEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| match e {
            TurnEvent::Started { .. } => "started",
            TurnEvent::Chunk { .. } => "chunk",
            TurnEvent::ToolStart { .. } => "tool_start",
            TurnEvent::ToolEnd { .. } => "tool_end",
            TurnEvent::Progress { .. } => "progress",
            TurnEvent::Payload { .. } => "payload",
            TurnEvent::Completed { .. } => "completed",
            TurnEvent::Failed { .. } => "failed",
        })
        .collect()
}

#[test]
fn a_tool_using_turn_stores_its_rounds_and_the_next_turn_replays_them() {
    let (backend, sheets) = (MemoryBackend::default(), Sheets::new());
    let id = conversation(&backend, &sheets);
    backend.model.tool_calls(
        "Để em xem. ",
        &[("call_1", "sum_column", r#"{"column":"revenu"}"#)],
    );
    backend.model.tool_calls(
        "",
        &[
            ("call_2", "sum_column", r#"{"column":"revenue"}"#),
            ("call_3", "list_sheets", "{}"),
        ],
    );
    backend.model.reply(&["Tổng doanh thu ", "là 1200."]);
    let (events, outcome) = say(&backend, &sheets, &id, "Tổng doanh thu?");
    let outcome = outcome.unwrap();

    assert_eq!(
        names(&events),
        [
            "started",
            "chunk",
            "tool_start",
            "tool_end",
            "tool_start",
            "tool_end",
            "tool_start",
            "tool_end",
            "chunk",
            "chunk",
            "completed"
        ]
    );
    let failed_call = events.iter().find_map(|e| match e {
        TurnEvent::ToolEnd {
            ok: false, output, ..
        } => Some(output.clone()),
        _ => None,
    });
    assert_eq!(
        failed_call,
        Some(json!("unknown column: revenu; columns: revenue"))
    );
    // The error went back to the model as the call's result.
    let second = &backend.model.requests()[1];
    let fed_back = second.messages.last().unwrap();
    assert_eq!(
        (fed_back.role, fed_back.content.as_str()),
        (Role::Tool, "unknown column: revenu; columns: revenue")
    );

    // Stored: the visitor's message, then the answer with both tool rounds.
    let scope = Scope::new(SITE, &id);
    let stored = backend.store.messages(scope);
    let reply = stored.last().unwrap();
    assert_eq!(reply.id, outcome.reply.id);
    assert_eq!(reply.content, "Tổng doanh thu là 1200.");
    assert_eq!(reply.tool_steps.len(), 2);
    assert_eq!(reply.tool_steps[1].calls.len(), 2);
    assert!(!reply.tool_steps[0].calls[0].ok);
    assert!(matches!(
        events.last(),
        Some(TurnEvent::Completed { message_id, kind: MessageKind::Answer, .. })
            if *message_id == reply.id
    ));

    // The next turn's prompt carries the calls and results, in order.
    backend.model.reply(&["Vẫn là 1200."]);
    let (_, next) = say(&backend, &sheets, &id, "Còn tháng trước?");
    next.unwrap();
    let prompt = backend.model.last_request().unwrap();
    let roles: Vec<Role> = prompt.messages.iter().map(|m| m.role).collect();
    use Role::{Assistant as A, System as S, Tool as T, User as U};
    assert_eq!(roles, [S, A, U, A, T, A, T, T, A, U]);
    assert_eq!(prompt.messages[3].tool_calls[0].id, "call_1");
    assert_eq!(prompt.messages[6].content, r#"{"sum":1200}"#);
    assert_eq!(prompt.messages[8].content, "Tổng doanh thu là 1200.");
}

#[test]
fn the_step_cap_and_the_error_budget_end_the_turn_with_the_templates_sentence() {
    for (case, max_model_calls, column) in [
        ("step_limit", 2, "revenue"),
        ("tool_error_budget", 8, "cost"),
    ] {
        let backend = MemoryBackend::default();
        let mut sheets = Sheets::new();
        sheets.react.max_model_calls = max_model_calls;
        let id = conversation(&backend, &sheets);
        let arguments = format!(r#"{{"column":"{column}"}}"#);
        for n in 0..8 {
            let call_id = format!("call_{n}");
            backend
                .model
                .tool_calls("", &[(&call_id, "sum_column", &arguments)]);
        }
        let (events, outcome) = say(&backend, &sheets, &id, "Tổng doanh thu?");
        let outcome = outcome.unwrap();
        assert_eq!(outcome.reply.content, GAVE_UP, "{case}");
        assert_eq!(outcome.reply.meta_str("react_end"), Some(case));
        let terminal = events.iter().filter(|e| e.is_terminal()).count();
        assert_eq!(terminal, 1, "{case}");
        assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
        assert!(events.contains(&TurnEvent::Chunk {
            text: GAVE_UP.into()
        }));
        let stored = backend.store.messages(Scope::new(SITE, &id));
        assert_eq!(stored.last().unwrap().content, GAVE_UP, "{case}");
        assert!(!stored.last().unwrap().tool_steps.is_empty(), "{case}");
    }
}

/// A stateless conversation keeps the language of the visitor's first message (as a stored
/// one does), switched by an explicit request in between.
#[test]
fn a_stateless_turn_keeps_the_language_of_the_callers_first_message() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let follow_up = "Thanks. How much is the RTX 4060 graphics card?";
    let cases = [
        (
            vec![
                "Good morning, is your store in Da Nang open today?",
                follow_up,
            ],
            Language::En,
        ),
        (vec!["Giá RTX 4060 bao nhiêu?", follow_up], Language::Vi),
        (
            vec![
                "Giá RTX 4060 bao nhiêu?",
                "please answer in English",
                follow_up,
            ],
            Language::En,
        ),
    ];
    for (visitor, language) in cases {
        backend.model.reply(&["OK."]);
        let mut messages = Vec::new();
        for text in &visitor {
            if !messages.is_empty() {
                messages.push((Role::Assistant, "OK.".to_string()));
            }
            messages.push((Role::User, text.to_string()));
        }
        let input = StatelessInput {
            site_id: SITE.into(),
            messages,
            identity: None,
        };
        let mut events = Vec::new();
        let outcome = block_on(engine::run_stateless(
            &backend,
            &shop(&backend, &config),
            input,
            &mut events,
        ));
        assert_eq!(outcome.unwrap().language, language, "{visitor:?}");
    }
}

#[test]
fn a_stateless_turn_answers_from_the_callers_history_and_stores_nothing() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    backend.model.reply(&["Dạ, RTX 4060 ", "giá 8 triệu ạ."]);
    let input = StatelessInput {
        site_id: SITE.into(),
        messages: vec![
            (Role::User, "Chào shop".into()),
            (Role::Assistant, "Dạ em chào anh ạ.".into()),
            (Role::User, "Giá RTX 4060 bao nhiêu?".into()),
        ],
        identity: None,
    };
    let mut events = Vec::new();
    let outcome = block_on(engine::run_stateless(
        &backend,
        &shop(&backend, &config),
        input,
        &mut events,
    ))
    .unwrap();
    assert_eq!(names(&events), ["started", "chunk", "chunk", "completed"]);
    assert_eq!(outcome.reply.content, "Dạ, RTX 4060 giá 8 triệu ạ.");
    let TurnEvent::Started {
        conversation_id, ..
    } = &events[0]
    else {
        panic!("started first")
    };
    // Nothing stored or queued under the minted ids.
    assert!(
        backend
            .store
            .conversation(Scope::new(SITE, conversation_id))
            .is_none()
    );
    assert!(backend.queue.jobs().is_empty());
    // The model saw the caller's history.
    let prompt = backend.model.last_request().unwrap();
    let contents: Vec<&str> = prompt.messages[1..]
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        contents,
        ["Chào shop", "Dạ em chào anh ạ.", "Giá RTX 4060 bao nhiêu?"]
    );

    // A history that does not end with the visitor's message is refused, alone.
    let input = StatelessInput {
        site_id: SITE.into(),
        messages: vec![(Role::Assistant, "Dạ?".into())],
        identity: None,
    };
    let mut events = Vec::new();
    let refused = block_on(engine::run_stateless(
        &backend,
        &shop(&backend, &config),
        input,
        &mut events,
    ));
    assert_eq!(refused.unwrap_err().code(), "invalid_history");
    assert_eq!(names(&events), ["failed"]);
}

#[test]
fn one_embedding_policy_decides_what_stores_record_and_memory_is_queued_before_it_leaves_the_window()
 {
    let backend = MemoryBackend::demo(SITE);
    // A window of 4 messages: the conversation below (9 messages) outgrows it.
    let mut settings = ShopConfig::default();
    settings.turn.history_window = 4;
    let config = shop(&backend, &settings);
    let id = conversation(&backend, &config);
    // A clarifying question, a warranty result, an answer, and a partial answer.
    say(&backend, &config, &id, "Xin chào").1.unwrap();
    say(
        &backend,
        &config,
        &id,
        "Kiểm tra bảo hành serial 0979825281",
    )
    .1
    .unwrap();
    backend.model.reply(&["Dạ, RTX 4070 giá 15 triệu ạ."]);
    say(&backend, &config, &id, "Giá RTX 4070 bao nhiêu?")
        .1
        .unwrap();
    let broken = ChatModelError::new(ChatModelErrorKind::Unreachable, "connection reset");
    backend
        .model
        .push(Script::BreakAfter(vec!["Dạ, RTX 4060 ".into()], broken));
    say(&backend, &config, &id, "Giá RTX 4060 bao nhiêu?")
        .1
        .unwrap_err();

    let scope = Scope::new(SITE, &id);
    let stored = backend.store.messages(scope);
    let kinds: Vec<(MessageKind, bool)> =
        stored.iter().map(|m| (m.kind, m.is_incomplete())).collect();
    use MessageKind::*;
    assert_eq!(
        kinds,
        [
            (Greeting, false),
            (Text, false),
            (Clarify, false),
            (Text, false),
            (Warranty, false),
            (Text, false),
            (Answer, false),
            (Text, false),
            (Answer, true)
        ]
    );
    let queued: Vec<String> = backend
        .queue
        .jobs()
        .into_iter()
        .map(|j| j.message_id)
        .collect();
    // Memory retrieval returns only messages older than the window, so a message is
    // embedded one turn before it leaves it, and never before: turn 2 queues the first
    // turn's pair, turn 3 the second's, turn 4 (its partial answer stored) the third's —
    // each message once, in order. The greeting is skipped by the policy, and the last
    // turn's messages (inside the window until two more turns) are not queued.
    let due: Vec<String> = stored[1..7].iter().map(|m| m.id.clone()).collect();
    assert_eq!(queued, due, "{stored:#?}");
    for message in &stored {
        let policy = embedding_policy(message);
        let expected = match (message.kind, message.is_incomplete()) {
            (Greeting, _) | (_, true) => EmbeddingStatus::Skipped,
            _ => EmbeddingStatus::Pending,
        };
        assert_eq!(policy, expected, "{:?}", message.kind);
        // The store records the policy; only pending messages are ever queued.
        assert_eq!(
            backend.store.embedding_status(scope, &message.id),
            Some(policy)
        );
        if queued.contains(&message.id) {
            assert_eq!(policy, EmbeddingStatus::Pending, "{:?}", message.kind);
        }
    }
}

/// A template that sends a table with its streamed answer.
struct Report {
    turn: TurnConfig,
}

fn table() -> Payload {
    let mut row = serde_json::Map::new();
    row.insert("month".into(), json!("2026-10"));
    row.insert("revenue".into(), json!(1200));
    Payload::Table(TablePayload {
        columns: vec![
            TableColumn {
                key: "month".into(),
                label: "Tháng".into(),
                column_type: ColumnKind::Date,
            },
            TableColumn {
                key: "revenue".into(),
                label: "Doanh thu".into(),
                column_type: ColumnKind::Number,
            },
        ],
        rows: vec![row],
        preview_limit: None,
    })
}

impl Assistant for Report {
    fn config(&self) -> &TurnConfig {
        &self.turn
    }
    fn greeting(&self, _language: Language) -> &str {
        "Chào anh/chị."
    }
    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        let request = ChatRequest {
            messages: chat_history(&turn.history),
            ..ChatRequest::default()
        };
        turn.payload(table());
        let answered = engine::stream_answer(platform, turn, &request, Metadata::new()).await?;
        Ok(Answer {
            reply: answered.reply,
            intent: None,
            confidence: None,
            usage: answered.usage,
            route: vec!["report"],
        })
    }
}

#[test]
fn payloads_are_sent_stored_with_the_reply_and_replayed() {
    let backend = MemoryBackend::default();
    let report = Report {
        turn: TurnConfig::default(),
    };
    let id = conversation(&backend, &report);
    backend.model.reply(&["Doanh thu tháng 10 ", "là 1200."]);
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.clone(),
        text: "Doanh thu tháng 10?".into(),
        idempotency_key: Some("report-1".into()),
    };
    let mut events = Vec::new();
    let outcome = block_on(engine::run_turn(&backend, &report, &input, &mut events)).unwrap();
    assert_eq!(
        names(&events),
        ["started", "payload", "chunk", "chunk", "completed"]
    );
    let TurnEvent::Payload { kind, data } = &events[1] else {
        panic!("a payload")
    };
    assert_eq!(kind, "table");
    assert_eq!(data["rows"][0]["revenue"], json!(1200));
    assert_eq!(data["columns"][1]["type"], json!("number"));
    let stored = backend.store.messages(Scope::new(SITE, &id));
    assert_eq!(stored.last().unwrap().payloads, [table()]);
    assert_eq!(outcome.reply.payloads, [table()]);

    // A repeat with the same key replays the text and the payload, without the model.
    let mut replay = Vec::new();
    block_on(engine::run_turn(&backend, &report, &input, &mut replay)).unwrap();
    assert_eq!(names(&replay), ["started", "chunk", "payload", "completed"]);
    assert_eq!(replay[2], events[1]);
    assert_eq!(backend.model.requests().len(), 1);
}

#[test]
fn every_payload_kind_has_one_wire_shape() {
    use concierge_core::payload::{
        ChartKind, ChartPayload, ChartSeries, ControlPayload, Evidence, ListItem, ListPayload,
        Source,
    };
    let payloads = [
        Payload::List(ListPayload {
            items: vec![ListItem {
                id: "123".into(),
                title: "Phòng trọ ABC".into(),
                path: "/rooms/123".into(),
                entity: "room".into(),
                subtitle: None,
            }],
            total: 5,
        }),
        table(),
        Payload::Chart(ChartPayload {
            chart: ChartKind::Bar,
            title: None,
            labels: vec!["Q1".into(), "Q2".into()],
            series: vec![ChartSeries {
                name: "Doanh thu".into(),
                values: vec![1.5, 2.0],
            }],
            alt: "Doanh thu tăng từ 1,5 lên 2".into(),
        }),
        Payload::Sources(vec![Source {
            title: "Nha khoa".into(),
            url: "https://example.com/a".into(),
            snippet: None,
        }]),
        Payload::Evidence(vec![Evidence {
            claim: "Nên đánh răng hai lần mỗi ngày".into(),
            sources: vec![0],
            confidence: Some(0.9),
        }]),
        Payload::FollowUps(vec!["Giá bao nhiêu?".into()]),
        Payload::Control(ControlPayload {
            reason: "CLARIFICATION".into(),
            questions: vec!["Quận nào ạ?".into()],
        }),
    ];
    let kinds: Vec<&str> = payloads.iter().map(Payload::kind).collect();
    assert_eq!(
        kinds,
        [
            "list",
            "table",
            "chart",
            "sources",
            "evidence",
            "follow_ups",
            "control"
        ]
    );
    for payload in &payloads {
        // The stored form is {"kind", "data"}, the event carries the same two, and the
        // stored form reads back to the same payload.
        let stored = serde_json::to_value(payload).unwrap();
        let TurnEvent::Payload { kind, data } = TurnEvent::payload(payload) else {
            panic!("a payload event")
        };
        assert_eq!(stored, json!({"kind": kind, "data": data}));
        assert_eq!(&serde_json::from_value::<Payload>(stored).unwrap(), payload);
    }
    let chart = serde_json::to_value(&payloads[2]).unwrap();
    assert_eq!(chart["data"]["chart"], json!("bar"));
    assert_eq!(chart["data"]["series"][0]["values"], json!([1.5, 2.0]));
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn shop<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::shop::ShopConfig,
) -> concierge_core::flows::shop::ShopAssistant<&'b concierge_core::memory::MemoryWarrantyRecords> {
    concierge_core::flows::shop::ShopAssistant::new(config.clone(), &backend.warranty)
}
