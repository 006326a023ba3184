//! The `rental` template through whole turns on the in-memory platform with a scripted
//! model (TEMPLATES.md §2): each branch, the SQL retry loop, canonical reuse, the
//! validator's verdict, role labels, and what streams (never past `---END`).
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::{ColumnSchema, ColumnType, TableSchema};
use concierge_core::conversation::Language;
use concierge_core::engine::{self, NewConversation, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::flows::rental::memory::MemoryRentalBackend;
use concierge_core::flows::rental::{
    ORCHESTRATOR_PROMPT, RESPONSE_PROMPT, RentalConfig, SENTENCES_VI, SQL_PROMPT, VALIDATOR_PROMPT,
    marker,
};
use concierge_core::graph::block_on;
use concierge_core::identity::UserIdentity;
use concierge_core::memory::MemoryTable;
use concierge_core::payload::Payload;
use concierge_core::prompt::Sentences;
use concierge_core::turn::{TurnEvent, TurnInput};
use serde_json::json;

const SITE: &str = "site-r";

fn backend() -> MemoryRentalBackend {
    let backend = MemoryRentalBackend::default();
    let columns = vec![
        ColumnSchema::new("id", ColumnType::Text),
        ColumnSchema::new("title", ColumnType::Text),
        ColumnSchema::new("price", ColumnType::Integer),
        ColumnSchema::new("district", ColumnType::Text),
    ];
    let mut rooms = MemoryTable::new(TableSchema::new("rooms", columns));
    for (id, title, price, district) in [
        ("r1", "Phòng trọ Lan Anh", 2_000_000, "Quận 1"),
        ("r2", "Phòng Bến Thành", 3_500_000, "Quận 1"),
        ("r3", "Phòng Gò Vấp", 1_800_000, "Gò Vấp"),
    ] {
        rooms = rooms.row(json!({"id": id, "title": title, "price": price, "district": district}));
    }
    backend.sql.add_table(SITE, rooms);
    backend
}

fn conversation(backend: &MemoryRentalBackend, identity: Option<UserIdentity>) -> String {
    let new = NewConversation {
        site_id: SITE.into(),
        identity,
        language: Some(Language::Vi),
        ..NewConversation::default()
    };
    let created = block_on(engine::create_conversation(
        &backend.base,
        &rental(backend, &RentalConfig::default()),
        new,
    ));
    created.unwrap().conversation.id
}

fn say(
    backend: &MemoryRentalBackend,
    id: &str,
    text: &str,
) -> (Vec<TurnEvent>, Result<TurnOutcome, Error>) {
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.into(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = backend.timer.run(engine::run_turn(
        &backend.base,
        &rental(backend, &RentalConfig::default()),
        &input,
        &mut events,
    ));
    (events, outcome)
}

fn streamed(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn payloads(events: &[TurnEvent]) -> Vec<(String, serde_json::Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Payload { kind, data } => Some((kind.to_string(), data.clone())),
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

/// The markers of the model calls, in order.
fn calls(backend: &MemoryRentalBackend) -> Vec<String> {
    backend
        .model
        .requests()
        .iter()
        .map(|r| {
            r.messages[0]
                .content
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn orchestrator(backend: &MemoryRentalBackend, kind: &str, ready: bool, mode: &str, message: &str) {
    let reply = json!({"message": message, "requestType": kind, "readyForSql": ready,
        "intentModeHint": mode, "entityHint": "room"});
    backend
        .model
        .reply(&["```json\n", &reply.to_string(), "\n```"]);
}

fn fixed(key: &str) -> String {
    Sentences::parse(SENTENCES_VI).get(key).to_string()
}

const CHEAP_Q1: &str =
    "SELECT id, title, price FROM rooms WHERE district = 'Quận 1' ORDER BY price ASC";

#[test]
fn a_list_answer_streams_the_message_only_and_links_come_from_code() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(
        &backend,
        "QUERY",
        true,
        "LIST",
        "Để mình tìm phòng giá rẻ ở quận 1",
    );
    backend.model.reply(&[CHEAP_Q1]);
    backend.model.reply(&[
        "Đây là 2 phòng giá rẻ ở quận 1, căn Phòng trọ Lan Anh là rẻ nhất đó -",
        "--E",
        "ND\nLIST: [{\"id\":\"r1\",\"path\":\"https://evil.example/x\"},{\"id\":\"zz\"}]\nTABLE: null\nCHART: null",
    ]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (events, outcome) = say(&backend, &id, "Phòng giá rẻ ở quận 1?");
    let outcome = outcome.unwrap();
    let text = streamed(&events);
    assert!(text.starts_with("[GUEST] Đây là 2 phòng"), "{text}");
    assert!(
        !text.contains("---") && !text.contains("LIST") && !text.contains("evil"),
        "{text}"
    );
    let payloads = payloads(&events);
    assert_eq!(payloads.len(), 1);
    assert_eq!(payloads[0].0, "list");
    let items = payloads[0].1["items"].as_array().unwrap();
    assert_eq!(
        items.len(),
        1,
        "the model selected r1; the unknown id is dropped"
    );
    assert_eq!(items[0]["path"], "/rooms/r1");
    assert_eq!(items[0]["entity"], "room");
    assert_eq!(payloads[0].1["total"], 2);
    assert_eq!(terminals(&events), 1);
    let reply = outcome.reply;
    assert_eq!(reply.content, text.trim());
    assert_eq!(reply.metadata["kind"], "DATA");
    assert_eq!(reply.metadata["request_type"], "QUERY");
    assert_eq!(reply.metadata["role"], "GUEST");
    assert_eq!(reply.metadata["sql_attempts"], 1);
    assert_eq!(reply.payloads.len(), 1);
    // The four agents ran in order, each recognisable by its prompt's first line.
    let expected: Vec<String> = [
        ORCHESTRATOR_PROMPT,
        SQL_PROMPT,
        RESPONSE_PROMPT,
        VALIDATOR_PROMPT,
    ]
    .iter()
    .map(|p| marker(p))
    .collect();
    assert_eq!(calls(&backend), expected);
    // Valid: the Q&A is learned.
    let learned = backend.rental.learned(SITE);
    assert_eq!(learned.len(), 1);
    assert_eq!(learned[0].sql, CHEAP_Q1);
}

#[test]
fn a_table_and_a_chart_are_built_from_the_rows() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "TABLE", "So sánh giá");
    backend
        .model
        .reply(&["SELECT title, price FROM rooms ORDER BY price"]);
    backend
        .model
        .reply(&["Bảng so sánh giá\n---END\nLIST: null\nTABLE: {}\nCHART: null"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (events, _) = say(&backend, &id, "So sánh giá các phòng");
    let payload = &payloads(&events)[0];
    assert_eq!(payload.0, "table");
    assert_eq!(
        payload.1["columns"][1],
        json!({"key": "price", "label": "price", "type": "number"})
    );
    assert_eq!(
        payload.1["rows"][0],
        json!({"title": "Phòng Gò Vấp", "price": 1_800_000})
    );
    assert_eq!(payload.1["previewLimit"], 10);

    orchestrator(&backend, "QUERY", true, "CHART", "Thống kê");
    backend
        .model
        .reply(&["SELECT district, price FROM rooms ORDER BY price"]);
    backend
        .model
        .reply(&["Biểu đồ giá theo quận\n---END LIST: null TABLE: null CHART: {\"type\":\"bar\"}"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (events, _) = say(&backend, &id, "Thống kê giá theo quận");
    let payload = &payloads(&events)[0];
    assert_eq!(payload.0, "chart");
    assert_eq!(payload.1["labels"], json!(["Gò Vấp", "Quận 1", "Quận 1"]));
    assert_eq!(
        payload.1["series"][0]["values"],
        json!([1_800_000.0, 2_000_000.0, 3_500_000.0])
    );
    // Issue 27 item 7: the seed's chart object on every surface (it was absent here; the
    // widget still draws its own SVG from `labels` and `series`).
    // Its text alternative is in the conversation's language (screen readers say it).
    assert_eq!(payload.1["alt"], "price theo district (3 giá trị)");
    assert_eq!(payload.1["mimeType"], "image/png");
    assert_eq!(payload.1["spec"]["data"]["labels"], payload.1["labels"]);
    assert!(payload.1["url"].as_str().is_some_and(|u| {
        u.starts_with("https://quickchart.io/chart?c=") && u.ends_with("&w=500&h=300")
    }));
}

#[test]
fn clarification_greeting_and_a_broken_orchestrator() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(
        &backend,
        "CLARIFICATION",
        false,
        "LIST",
        "Bạn muốn tìm ở quận nào?",
    );
    let (events, outcome) = say(&backend, &id, "Tìm phòng");
    assert_eq!(streamed(&events), "[GUEST] Bạn muốn tìm ở quận nào?");
    assert_eq!(
        payloads(&events),
        vec![("control".into(), json!({"reason": "CLARIFICATION"}))]
    );
    assert_eq!(outcome.unwrap().reply.metadata["kind"], "CONTROL");

    orchestrator(&backend, "QUERY", false, "LIST", "");
    let (events, _) = say(&backend, &id, "Tìm phòng đi");
    assert_eq!(streamed(&events), format!("[GUEST] {}", fixed("clarify")));

    orchestrator(
        &backend,
        "GREETING",
        false,
        "LIST",
        "[TENANT] Xin chào bạn!",
    );
    let (events, outcome) = say(&backend, &id, "Chào bạn");
    assert_eq!(
        streamed(&events),
        "[GUEST] Xin chào bạn!",
        "a wrong label is replaced"
    );
    assert!(payloads(&events).is_empty());
    assert_eq!(outcome.unwrap().reply.metadata["kind"], "CONTENT");

    backend.model.reply(&["tôi không biết JSON"]);
    let (events, _) = say(&backend, &id, "???");
    assert_eq!(
        streamed(&events),
        format!("[GUEST] {}", fixed("fallback_chat"))
    );
    assert_eq!(
        calls(&backend).len(),
        4,
        "no SQL model call on these branches"
    );
}

#[test]
fn sql_that_fails_twice_then_succeeds_feeds_each_error_back() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&["SELECT * FROM rental_rows"]);
    backend
        .model
        .reply(&["SELECT id, title FROM rooms; DELETE FROM rooms"]);
    backend
        .model
        .reply(&["```sql\nSELECT id, title FROM rooms WHERE district = 'Gò Vấp'\n```"]);
    backend.model.reply(&["Có 1 phòng ở Gò Vấp"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (events, outcome) = say(&backend, &id, "Phòng ở Gò Vấp");
    let reply = outcome.unwrap().reply;
    assert_eq!(reply.metadata["sql_attempts"], 3);
    let requests = backend.model.requests();
    assert!(
        requests[2].messages[0]
            .content
            .contains("no such table: rental_rows")
    );
    assert!(
        requests[3].messages[0]
            .content
            .contains("exactly one SELECT")
    );
    // The model ignored `---END`: the whole text is the message; the payload comes from code.
    assert_eq!(streamed(&events), "[GUEST] Có 1 phòng ở Gò Vấp");
    assert_eq!(payloads(&events)[0].1["items"][0]["path"], "/rooms/r3");
}

#[test]
fn five_failures_answer_sql_failed_without_a_payload_and_learn_nothing() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    for _ in 0..5 {
        backend.model.reply(&["SELECT * FROM sqlite_master"]);
    }
    let (events, outcome) = say(&backend, &id, "Phòng rẻ");
    assert_eq!(
        streamed(&events),
        format!("[GUEST] {}", fixed("sql_failed"))
    );
    assert!(payloads(&events).is_empty());
    assert_eq!(terminals(&events), 1);
    assert_eq!(outcome.unwrap().reply.metadata["kind"], "CONTENT");
    assert_eq!(calls(&backend).len(), 6);
    assert!(backend.rental.learned(SITE).is_empty());
}

#[test]
fn a_canonical_hit_reuses_validated_sql_without_the_sql_model() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&[CHEAP_Q1]);
    backend
        .model
        .reply(&["Đây là các phòng\n---END\nLIST: null\nTABLE: null\nCHART: null"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    say(&backend, &id, "Phòng giá rẻ ở quận 1?").1.unwrap();
    let before = calls(&backend).len();

    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend
        .model
        .reply(&["Lại là các phòng quận 1\n---END\nLIST: null TABLE: null CHART: null"]);
    let (events, outcome) = say(&backend, &id, "Phòng giá rẻ ở quận 1?");
    let reply = outcome.unwrap().reply;
    let after: Vec<String> = calls(&backend)[before..].to_vec();
    assert_eq!(
        after,
        vec![marker(ORCHESTRATOR_PROMPT), marker(RESPONSE_PROMPT)],
        "neither the SQL model nor the validator is called on a hard hit"
    );
    assert_eq!(reply.metadata["canonical"], "hard");
    assert_eq!(reply.metadata["sql_attempts"], 0);
    assert_eq!(payloads(&events)[0].1["total"], 2);
    assert_eq!(backend.rental.learned(SITE)[0].hits, 1);
}

#[test]
fn an_invalid_verdict_persists_nothing() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend
        .model
        .reply(&["SELECT id, title FROM rooms WHERE district = 'Gò Vấp'"]);
    backend.model.reply(&["Đây là các phòng quận 1"]);
    backend
        .model
        .reply(&["{\"isValid\": false, \"reason\": \"quận 1 vs Gò Vấp\"}"]);
    let (_, outcome) = say(&backend, &id, "Phòng ở quận 1");
    assert_eq!(outcome.unwrap().reply.metadata["valid"], false);
    assert!(backend.rental.learned(SITE).is_empty());
}

#[test]
fn a_tenant_is_labelled_from_the_verified_identity_not_the_model() {
    let backend = backend();
    let tenant = UserIdentity::new("user-123".into(), Some("TENANT".into()), vec![], None).unwrap();
    let id = conversation(&backend, Some(tenant));
    orchestrator(&backend, "GREETING", false, "LIST", "[LANDLORD] Chào bạn");
    let (events, outcome) = say(&backend, &id, "Chào");
    assert_eq!(streamed(&events), "[TENANT] Chào bạn");
    assert_eq!(outcome.unwrap().reply.metadata["role"], "TENANT");

    let known = UserIdentity::new("user-9".into(), None, vec![], None).unwrap();
    backend.rental.set_role(SITE, "user-9", "LANDLORD");
    let id = conversation(&backend, Some(known));
    orchestrator(&backend, "GREETING", false, "LIST", "Chào chủ trọ");
    let (events, _) = say(&backend, &id, "Chào");
    assert_eq!(streamed(&events), "[LANDLORD] Chào chủ trọ");
    let requests = backend.model.requests();
    let prompt = &requests.last().unwrap().messages[0].content;
    assert!(
        prompt.contains("LANDLORD"),
        "the orchestrator is told the role"
    );
}

#[test]
fn a_model_failure_mid_answer_ends_with_one_failed_event() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&[CHEAP_Q1]);
    // No script left for the response generator: the model is unreachable.
    let (events, outcome) = say(&backend, &id, "Phòng giá rẻ ở quận 1?");
    assert!(outcome.is_err());
    assert_eq!(terminals(&events), 1);
    assert!(matches!(events.last(), Some(TurnEvent::Failed { .. })));
}

#[test]
fn the_list_payload_round_trips_through_the_typed_payload() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend
        .model
        .reply(&["SELECT id, title, price, district FROM rooms"]);
    backend.model.reply(&["Ba phòng"]);
    backend.model.reply(&["không rõ"]);
    let (_, outcome) = say(&backend, &id, "Tất cả phòng");
    let reply = outcome.unwrap().reply;
    let Payload::List(list) = &reply.payloads[0] else {
        panic!("{:?}", reply.payloads)
    };
    assert_eq!(list.items[0].subtitle.as_deref(), Some("2000000 · Quận 1"));
    assert_eq!(
        backend.rental.learned(SITE).len(),
        1,
        "an unreadable verdict counts as valid"
    );
}

fn message(
    seq: u64,
    role: concierge_core::chat::Role,
    at_minutes: u64,
) -> concierge_core::conversation::StoredMessage {
    concierge_core::conversation::StoredMessage {
        id: format!("m{seq}"),
        seq,
        role,
        kind: concierge_core::conversation::MessageKind::Text,
        content: format!("message {seq}"),
        metadata: Default::default(),
        created_at: at_minutes * 60_000,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    }
}

#[test]
fn the_session_context_is_the_last_20_messages_after_a_30_minute_idle_gap() {
    use concierge_core::chat::Role;
    use concierge_core::flows::rental::session_context;
    let role = |i: u64| {
        if i.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        }
    };
    // 30 messages a minute apart, then the new question: the system prompt + the last 20.
    let mut history: Vec<_> = (0..30).map(|i| message(i, role(i), i)).collect();
    history.push(message(30, Role::User, 30));
    let context = session_context(&history);
    assert_eq!(context.len(), 21);
    assert_eq!(context[0].role, Role::System);
    assert_eq!(context[1].content, "message 10");
    assert_eq!(context[20].content, "message 29");
    // A gap of more than 30 minutes resets the context (the display history is kept).
    let mut idle: Vec<_> = (0..4).map(|i| message(i, role(i), i)).collect();
    idle.push(message(4, Role::User, 3 + 31));
    assert_eq!(session_context(&idle).len(), 1, "only the system prompt");
    let mut within: Vec<_> = (0..4).map(|i| message(i, role(i), i)).collect();
    within.push(message(4, Role::User, 3 + 30));
    assert_eq!(session_context(&within).len(), 5);
}

#[test]
fn a_similar_learned_question_is_a_hint_in_the_sql_prompt() {
    let backend = backend();
    let id = conversation(&backend, None);
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&[CHEAP_Q1]);
    backend.model.reply(&["Đây là các phòng"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    say(&backend, &id, "phòng giá rẻ ở quận 1").1.unwrap();

    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&[CHEAP_Q1]);
    backend.model.reply(&["Đây là các phòng cho sinh viên"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (_, outcome) = say(&backend, &id, "phòng giá rẻ ở quận 1 cho sinh viên");
    assert_eq!(outcome.unwrap().reply.metadata["canonical"], "soft");
    let requests = backend.model.requests();
    let sql_prompt = &requests[5].messages[0].content;
    assert!(sql_prompt.starts_with(&marker(SQL_PROMPT)));
    assert!(
        sql_prompt.contains(CHEAP_Q1) && sql_prompt.contains("phòng giá rẻ ở quận 1"),
        "{sql_prompt}"
    );
}

/// The SQL prompts the model received (their whole message lists), in order.
fn sql_requests(backend: &MemoryRentalBackend) -> Vec<String> {
    backend
        .model
        .requests()
        .iter()
        .filter(|r| r.messages[0].content.starts_with(&marker(SQL_PROMPT)))
        .map(|r| {
            r.messages
                .iter()
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// One QUERY turn answered with `sql`, judged valid.
fn query_turn(backend: &MemoryRentalBackend, id: &str, question: &str, sql: &str) -> TurnOutcome {
    orchestrator(backend, "QUERY", true, "LIST", "");
    backend.model.reply(&[sql]);
    backend.model.reply(&["Đây là phòng bạn cần"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (_, outcome) = say(backend, id, question);
    outcome.unwrap()
}

const STEERING: &str = "Từ giờ chỉ cho tôi xem phòng ở Quận 1 thôi nhé";
const CHEAPEST: &str = "Phòng nào rẻ nhất?";
const STEERED_SQL: &str =
    "SELECT id, title, price FROM rooms WHERE district = 'Quận 1' ORDER BY price ASC LIMIT 1";
const CLEAN_SQL: &str = "SELECT id, title, price FROM rooms ORDER BY price ASC LIMIT 1";

#[test]
fn sql_steered_by_one_visitors_conversation_is_never_learned_for_another() {
    let backend = backend();
    // Visitor A steers, then asks a clean question; the SQL model follows the steering.
    let a = conversation(&backend, None);
    orchestrator(&backend, "GENERAL_CHAT", false, "LIST", "Dạ, mình nhớ rồi");
    say(&backend, &a, STEERING).1.unwrap();
    let reply = query_turn(&backend, &a, CHEAPEST, STEERED_SQL).reply;
    assert_eq!(reply.metadata["valid"], true);
    let prompts = sql_requests(&backend);
    assert!(
        prompts[0].contains(STEERING),
        "A's follow-up is read in A's context: {}",
        prompts[0]
    );
    assert!(
        backend.rental.learned(SITE).is_empty(),
        "SQL written with A's conversation in the prompt is not learned"
    );
    assert_eq!(reply.metadata.get("learned"), Some(&json!(false)));

    // Visitor B asks the same clean question: the SQL model is asked, without A's words.
    let b = conversation(&backend, None);
    let before = calls(&backend).len();
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&[CLEAN_SQL]);
    backend.model.reply(&["Đây là phòng rẻ nhất"]);
    backend.model.reply(&["{\"isValid\": true}"]);
    let (events, outcome) = say(&backend, &b, CHEAPEST);
    let reply = outcome.unwrap().reply;
    assert_eq!(
        calls(&backend)[before..].to_vec(),
        vec![
            marker(ORCHESTRATOR_PROMPT),
            marker(SQL_PROMPT),
            marker(RESPONSE_PROMPT),
            marker(VALIDATOR_PROMPT)
        ],
        "the SQL model is asked for B"
    );
    let items = &payloads(&events)[0].1["items"];
    assert_eq!(
        items[0]["id"], "r3",
        "B gets the cheapest room of all: {items}"
    );
    let prompt = sql_requests(&backend).pop().unwrap();
    assert!(!prompt.contains(STEERING), "{prompt}");
    assert!(
        prompt.ends_with(CHEAPEST),
        "nothing but the question: {prompt}"
    );
    // B's question stood alone: its SQL is learned, with what produced it.
    assert_eq!(reply.metadata.get("learned"), Some(&json!(true)));
    let learned = backend.rental.learned(SITE);
    assert_eq!(learned.len(), 1);
    assert_eq!(
        (learned[0].question.as_str(), learned[0].sql.as_str()),
        (CHEAPEST, CLEAN_SQL)
    );
    assert_eq!(learned[0].role.as_deref(), Some("GUEST"));
    assert!(learned[0].context_free);

    // Visitor C (and A again) get the context-free SQL without the SQL model.
    let c = conversation(&backend, None);
    let before = calls(&backend).len();
    orchestrator(&backend, "QUERY", true, "LIST", "");
    backend.model.reply(&["Đây là phòng rẻ nhất"]);
    let (events, outcome) = say(&backend, &c, CHEAPEST);
    assert_eq!(outcome.unwrap().reply.metadata["canonical"], "hard");
    assert_eq!(calls(&backend).len() - before, 2);
    assert_eq!(payloads(&events)[0].1["items"][0]["id"], "r3");
}

#[test]
fn an_assistant_message_without_a_visitor_turn_never_reaches_the_sql_prompt() {
    // A first question is answered from the question alone, even when the history holds
    // assistant text (the greeting, or a message an API client supplied).
    let backend = backend();
    let id = conversation(&backend, None);
    query_turn(&backend, &id, CHEAPEST, CLEAN_SQL);
    let requests = backend.model.requests();
    let sql = requests
        .iter()
        .find(|r| r.messages[0].content.starts_with(&marker(SQL_PROMPT)))
        .unwrap();
    assert_eq!(sql.messages.len(), 2, "system prompt and question only");
    assert_eq!(backend.rental.learned(SITE).len(), 1);
}

#[test]
fn learned_sql_is_reused_only_for_the_role_it_was_written_for_and_only_if_context_free() {
    use concierge_core::flows::rental::RentalData;
    let backend = backend();
    let landlord =
        UserIdentity::new("owner-1".into(), Some("LANDLORD".into()), vec![], None).unwrap();
    let id = conversation(&backend, Some(landlord));
    query_turn(&backend, &id, CHEAPEST, STEERED_SQL);

    // A guest asking the same question gets SQL written for a guest.
    let guest = conversation(&backend, None);
    let before = calls(&backend).len();
    query_turn(&backend, &guest, CHEAPEST, CLEAN_SQL);
    assert_eq!(
        calls(&backend)[before + 1],
        marker(SQL_PROMPT),
        "the landlord's SQL is not reused for a guest"
    );
    let learned = backend.rental.learned(SITE);
    let roles: Vec<Option<&str>> = learned.iter().map(|r| r.role.as_deref()).collect();
    assert_eq!(roles, [Some("LANDLORD"), Some("GUEST")]);

    // An entry not known to be context-free (learned before this was recorded) is kept
    // for review but neither reused nor offered as a hint.
    for record in learned {
        let legacy = concierge_core::flows::rental::QaRecord {
            context_free: false,
            ..record
        };
        block_on(backend.rental.save_qa(SITE, &legacy)).unwrap();
    }
    let other = conversation(&backend, None);
    let before = calls(&backend).len();
    let reply = query_turn(&backend, &other, CHEAPEST, CLEAN_SQL).reply;
    assert_eq!(calls(&backend)[before + 1], marker(SQL_PROMPT));
    assert_eq!(reply.metadata["canonical"], serde_json::Value::Null);
}

#[test]
fn an_unreachable_orchestrator_fails_the_turn_instead_of_greeting() {
    use concierge_core::conversation::Scope;
    use concierge_core::conversation::{MessageKind, Role as MessageRole};
    let backend = backend();
    let id = conversation(&backend, None);
    // No script: the first model call (the orchestrator) finds the model unreachable.
    let (events, outcome) = say(&backend, &id, "Phòng giá rẻ ở quận 1?");
    assert!(outcome.is_err(), "an upstream failure is a failure");
    assert_eq!(terminals(&events), 1);
    assert!(
        matches!(events.last(), Some(TurnEvent::Failed { .. })),
        "ends with `failed`: {events:?}"
    );
    assert_eq!(streamed(&events), "", "no greeting-like text is streamed");
    let stored: Vec<(MessageRole, MessageKind)> = backend
        .store
        .messages(Scope::new(SITE, &id))
        .into_iter()
        .map(|m| (m.role, m.kind))
        .collect();
    assert_eq!(
        stored.last().map(|(role, _)| *role),
        Some(MessageRole::User),
        "the visitor's message stays stored and no answer is stored: {stored:?}"
    );
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn rental<'b>(
    backend: &'b MemoryRentalBackend,
    config: &concierge_core::flows::rental::RentalConfig,
) -> concierge_core::flows::rental::RentalAssistant<
    &'b concierge_core::memory::MemorySql,
    &'b concierge_core::flows::rental::memory::MemoryRental,
> {
    backend.assistant(config.clone())
}
