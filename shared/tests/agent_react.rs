//! The ReAct building block with in-memory doubles: a two-tool turn whose first call
//! fails (the error is fed back), stored with its tool calls and replayed into the next
//! turn's prompt in each provider's format; the step cap, the retry budget and tool
//! timeouts end in a clear outcome, never a hang.
#![allow(clippy::unwrap_used)]

use concierge_core::agent::{ReactConfig, ReactEnd, Tool, ToolFuture, ToolRegistry, run_react};
use concierge_core::boundary::{ChatRequest, ConversationStore, Timer};
use concierge_core::chat::{ChatMessage, Role};
use concierge_core::conversation::{
    Conversation, Language, MessageKind, Metadata, Scope, StoredMessage, chat_history,
};
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryStore, MemoryTimer, ScriptedChatModel};
use concierge_core::stream::ollama::OllamaChatRequest;
use concierge_core::stream::openai::ChatRequestBuilder;
use concierge_core::turn::TurnEvent;
use serde_json::{Value, json};

mod tools;
use tools::{ListSheets, SumColumn};

/// Takes a minute; its own timeout is 50 ms.
struct Slow<'t> {
    timer: &'t MemoryTimer,
}

impl Tool for Slow<'_> {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Never answers in time."
    }
    fn parameters(&self) -> Value {
        json!({"type":"object"})
    }
    fn call(&self, _arguments: Value) -> ToolFuture<'_> {
        Box::pin(async move {
            self.timer.sleep(60_000).await;
            Ok(json!("late"))
        })
    }
    fn timeout_ms(&self) -> Option<u64> {
        Some(50)
    }
}

const SITE: &str = "site-1";
const CONV: &str = "c1";

fn message(id: &str, role: Role, kind: MessageKind, content: &str) -> StoredMessage {
    StoredMessage {
        id: id.into(),
        seq: 0,
        role,
        kind,
        content: content.into(),
        metadata: Metadata::new(),
        created_at: 0,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    }
}

fn request(history: &[StoredMessage], text: &str) -> ChatRequest {
    let mut messages = vec![ChatMessage::system("Bạn là trợ lý phân tích dữ liệu.")];
    messages.extend(chat_history(history));
    messages.push(ChatMessage::user(text));
    ChatRequest {
        messages,
        ..ChatRequest::default()
    }
}

fn ends(events: &[TurnEvent]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolEnd { call_id, ok, .. } => Some((call_id.clone(), *ok)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_failed_call_is_fed_back_then_the_turn_is_stored_and_replayed_in_provider_format() {
    let (model, timer, store) = (
        ScriptedChatModel::new(),
        MemoryTimer::new(),
        MemoryStore::new(),
    );
    let scope = Scope::new(SITE, CONV);
    let conversation = Conversation {
        id: CONV.into(),
        site_id: SITE.into(),
        user_id: None,
        identity: None,
        language: Language::Vi,
        created_at: 0,
    };
    block_on(store.create_conversation(&conversation)).unwrap();
    let user = message("u1", Role::User, MessageKind::Text, "Tổng doanh thu?");
    block_on(store.append_message(scope, &user)).unwrap();

    model.tool_calls(
        "Để tôi xem. ",
        &[("call_1", "sum_column", r#"{"column":"revenu"}"#)],
    );
    model.tool_calls(
        "",
        &[
            ("call_2", "sum_column", r#"{"column":"revenue"}"#),
            ("call_3", "list_sheets", "{}"),
        ],
    );
    model.reply(&["Tổng doanh thu ", "là 1200."]);
    let (sum, list) = (SumColumn, ListSheets);
    let tools = ToolRegistry::new().with(&sum).with(&list);
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &model,
        &timer,
        &tools,
        &ReactConfig::default(),
        request(&[], &user.content),
        &mut events,
    ));

    assert_eq!(outcome.end, ReactEnd::Answered);
    assert_eq!(outcome.answer, "Tổng doanh thu là 1200.");
    assert_eq!((outcome.model_calls, outcome.tool_errors), (3, 1));
    // Events: the first step's text, then a start/end pair per call, then the answer.
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            TurnEvent::Chunk { .. } => "chunk",
            TurnEvent::ToolStart { .. } => "tool_start",
            TurnEvent::ToolEnd { .. } => "tool_end",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "chunk",
            "tool_start",
            "tool_end",
            "tool_start",
            "tool_end",
            "tool_start",
            "tool_end",
            "chunk",
            "chunk"
        ]
    );
    assert_eq!(
        events[1],
        TurnEvent::ToolStart {
            call_id: "call_1".into(),
            name: "sum_column".into(),
            input: json!({"column": "revenu"}),
        }
    );
    assert_eq!(
        events[2],
        TurnEvent::ToolEnd {
            call_id: "call_1".into(),
            name: "sum_column".into(),
            ok: false,
            output: json!("unknown column: revenu; columns: revenue"),
        }
    );
    assert_eq!(
        ends(&events),
        [
            ("call_1".into(), false),
            ("call_2".into(), true),
            ("call_3".into(), true)
        ]
    );

    // The model saw the tools, then its failed call answered with the error text.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].tools.len(), 2);
    let fed_back = requests[1].messages.last().unwrap();
    assert_eq!(fed_back.role, Role::Tool);
    assert_eq!(fed_back.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(fed_back.content, "unknown column: revenu; columns: revenue");
    let last = &requests[2].messages;
    assert_eq!(last[last.len() - 2].content, r#"{"sum":1200}"#);
    assert_eq!(last[last.len() - 1].content, r#"["sales"]"#);

    // The template stores the reply with its tool steps.
    let mut reply = message("a1", Role::Assistant, MessageKind::Answer, &outcome.answer);
    reply.tool_steps = outcome.steps.clone();
    block_on(store.append_message(scope, &reply)).unwrap();
    let stored = store.messages(scope);
    assert_eq!(stored.len(), 2);
    assert_eq!(
        serde_json::to_value(&stored[1].tool_steps).unwrap(),
        json!([
            {"text": "Để tôi xem. ", "calls": [{"id": "call_1", "name": "sum_column",
              "arguments": "{\"column\":\"revenu\"}", "ok": false,
              "output": "unknown column: revenu; columns: revenue"}]},
            {"calls": [
              {"id": "call_2", "name": "sum_column", "arguments": "{\"column\":\"revenue\"}",
               "ok": true, "output": {"sum": 1200}},
              {"id": "call_3", "name": "list_sheets", "arguments": "{}", "ok": true,
               "output": ["sales"]}]}
        ])
    );

    // The next turn's prompt replays them, in OpenAI's and Ollama's formats.
    let history = block_on(store.load_recent_messages(scope, 12)).unwrap();
    model.reply(&["Vẫn là 1200."]);
    let mut next_events: Vec<TurnEvent> = Vec::new();
    let next = timer.run(run_react(
        &model,
        &timer,
        &tools,
        &ReactConfig::default(),
        request(&history, "Còn tháng trước?"),
        &mut next_events,
    ));
    assert_eq!(next.end, ReactEnd::Answered);
    let prompt = model.last_request().unwrap();
    let roles: Vec<Role> = prompt.messages.iter().map(|m| m.role).collect();
    use Role::{Assistant, System, Tool as T, User};
    assert_eq!(
        roles,
        [System, User, Assistant, T, Assistant, T, T, Assistant, User]
    );
    let openai: Value = serde_json::from_str(
        &ChatRequestBuilder::new("m", &prompt.messages)
            .build()
            .to_json(),
    )
    .unwrap();
    assert_eq!(
        openai["messages"][2],
        json!({"role": "assistant", "content": "Để tôi xem. ", "tool_calls": [{"id": "call_1",
          "type": "function", "function": {"name": "sum_column", "arguments": "{\"column\":\"revenu\"}"}}]})
    );
    assert_eq!(
        openai["messages"][3],
        json!({"role": "tool", "content": "unknown column: revenu; columns: revenue", "tool_call_id": "call_1"})
    );
    assert_eq!(
        openai["messages"][4],
        json!({"role": "assistant", "tool_calls": [
          {"id": "call_2", "type": "function", "function": {"name": "sum_column", "arguments": "{\"column\":\"revenue\"}"}},
          {"id": "call_3", "type": "function", "function": {"name": "list_sheets", "arguments": "{}"}}]})
    );
    assert_eq!(
        openai["messages"][5],
        json!({"role": "tool", "content": "{\"sum\":1200}", "tool_call_id": "call_2"})
    );
    assert_eq!(
        openai["messages"][7],
        json!({"role": "assistant", "content": "Tổng doanh thu là 1200."})
    );
    let ollama: Value =
        serde_json::from_str(&OllamaChatRequest::new("m", &prompt.messages).to_json()).unwrap();
    assert_eq!(
        ollama["messages"][4]["tool_calls"],
        json!([{"function": {"name": "sum_column", "arguments": {"column": "revenue"}}},
               {"function": {"name": "list_sheets", "arguments": {}}}])
    );
    assert_eq!(
        ollama["messages"][6],
        json!({"role": "tool", "content": "[\"sales\"]", "tool_name": "list_sheets"})
    );
}

#[test]
fn the_step_cap_ends_the_loop_without_running_the_last_calls() {
    let (model, timer) = (ScriptedChatModel::new(), MemoryTimer::new());
    for i in 0..10 {
        model.tool_calls("", &[(&format!("c{i}"), "list_sheets", "{}")]);
    }
    let list = ListSheets;
    let tools = ToolRegistry::new().with(&list);
    let config = ReactConfig {
        max_model_calls: 3,
        ..ReactConfig::default()
    };
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &model,
        &timer,
        &tools,
        &config,
        request(&[], "?"),
        &mut events,
    ));
    assert_eq!(outcome.end, ReactEnd::StepLimit);
    assert_eq!(outcome.end.code(), "step_limit");
    assert_eq!(outcome.model_calls, 3);
    assert_eq!(model.requests().len(), 3);
    assert_eq!(model.scripts_left(), 7);
    // The third reply's call did not run: two steps, each call answered.
    assert_eq!(outcome.steps.len(), 2);
    assert_eq!(ends(&events), [("c0".into(), true), ("c1".into(), true)]);
}

#[test]
fn the_fourth_failure_ends_the_loop_without_asking_the_model_again() {
    let (model, timer) = (ScriptedChatModel::new(), MemoryTimer::new());
    for i in 0..10 {
        model.tool_calls("", &[(&format!("c{i}"), "sum_column", r#"{"column":"x"}"#)]);
    }
    let sum = SumColumn;
    let tools = ToolRegistry::new().with(&sum);
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &model,
        &timer,
        &tools,
        &ReactConfig::default(),
        request(&[], "?"),
        &mut events,
    ));
    assert_eq!(outcome.end, ReactEnd::ToolErrorBudget);
    assert_eq!(outcome.end.code(), "tool_error_budget");
    assert_eq!((outcome.model_calls, outcome.tool_errors), (4, 4));
    assert_eq!(model.requests().len(), 4);
    // Failures 1–3 were fed back; the 4th was not.
    let last = model.last_request().unwrap();
    let fed: Vec<&str> = last
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(fed.len(), 3);
    assert!(fed.iter().all(|c| c.starts_with("unknown column: x")));
    assert_eq!(ends(&events).len(), 4);
    assert_eq!(outcome.steps.len(), 4);
}

#[test]
fn a_slow_tool_times_out_unknown_tools_and_bad_json_are_errors_for_the_model() {
    let (model, timer) = (ScriptedChatModel::new(), MemoryTimer::new());
    model.tool_calls(
        "",
        &[
            ("c1", "slow", "{}"),
            ("c2", "drop_table", "{}"),
            ("c3", "sum_column", "{not json"),
        ],
    );
    model.reply(&["Xin lỗi."]);
    let slow = Slow { timer: &timer };
    let sum = SumColumn;
    let tools = ToolRegistry::new().with(&slow).with(&sum);
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &model,
        &timer,
        &tools,
        &ReactConfig::default(),
        request(&[], "?"),
        &mut events,
    ));
    assert_eq!(outcome.end, ReactEnd::Answered);
    assert_eq!(outcome.tool_errors, 3);
    assert_eq!(
        timer.now_ms(),
        50,
        "the slow call was cut at its own timeout"
    );
    let outputs: Vec<Value> = outcome.steps[0]
        .calls
        .iter()
        .map(|c| c.output.clone())
        .collect();
    assert_eq!(
        outputs,
        [
            json!("timed out after 50 ms"),
            json!("unknown tool: drop_table"),
            json!("invalid arguments (not JSON): key must be a string at line 1 column 2"),
        ]
    );
    // A start event carries unparseable arguments as a string.
    assert!(events.iter().any(|e| matches!(e,
        TurnEvent::ToolStart { call_id, input, .. } if call_id == "c3" && input == &json!("{not json"))));
}

#[test]
fn a_model_failure_mid_loop_keeps_what_ran() {
    let (model, timer) = (ScriptedChatModel::new(), MemoryTimer::new());
    model.tool_calls("", &[("c1", "list_sheets", "{}")]);
    // No second script: the model is unreachable on the second call.
    let list = ListSheets;
    let tools = ToolRegistry::new().with(&list);
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &model,
        &timer,
        &tools,
        &ReactConfig::default(),
        request(&[], "?"),
        &mut events,
    ));
    assert!(matches!(outcome.end, ReactEnd::ModelFailed(_)));
    assert_eq!(outcome.steps.len(), 1);
    assert_eq!(ends(&events), [("c1".into(), true)]);
}

/// Records what each call was constrained to, then answers from the script.
struct Recording<'m> {
    model: &'m ScriptedChatModel,
    seen: std::cell::RefCell<Vec<(bool, bool)>>,
}

impl concierge_core::boundary::ChatModel for Recording<'_> {
    async fn stream(
        &self,
        call: &concierge_core::boundary::ModelCall<'_>,
        sink: &mut dyn concierge_core::boundary::ChatSink,
    ) -> Result<(), concierge_core::error::ChatModelError> {
        let constraint = call.constraint;
        self.seen
            .borrow_mut()
            .push((constraint.call_tool, constraint.tool_as_json));
        self.model.stream(call, sink).await
    }
}

#[test]
fn a_required_first_call_answered_in_prose_is_asked_again_as_json() {
    let (model, timer) = (ScriptedChatModel::new(), MemoryTimer::new());
    model.reply(&["I think it is 42."]);
    model.reply(&[r#"{"name": "list_sheets", "arguments": {}}"#]);
    model.reply(&["There is one sheet: sales."]);
    let recording = Recording {
        model: &model,
        seen: Default::default(),
    };
    let list = ListSheets;
    let tools = ToolRegistry::new().with(&list);
    let config = ReactConfig {
        first_call_requires_tool: true,
        tool_json_fallback: true,
        ..ReactConfig::default()
    };
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &recording,
        &timer,
        &tools,
        &config,
        request(&[], "Which sheets?"),
        &mut events,
    ));
    assert_eq!(outcome.end, ReactEnd::Answered);
    assert_eq!(outcome.answer, "There is one sheet: sales.");
    assert_eq!(outcome.model_calls, 3);
    // Native `required` first, then the JSON form, then free.
    assert_eq!(
        *recording.seen.borrow(),
        [(true, false), (false, true), (false, false)]
    );
    assert_eq!(ends(&events), [("call_2".into(), true)]);
    assert_eq!(outcome.steps[0].calls[0].name, "list_sheets");
    // Without the fallback the prose stands; an invalid JSON call changes nothing either.
    model.reply(&["I think it is 42."]);
    let plain = ReactConfig {
        first_call_requires_tool: true,
        ..ReactConfig::default()
    };
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = timer.run(run_react(
        &recording,
        &timer,
        &tools,
        &plain,
        request(&[], "Which sheets?"),
        &mut events,
    ));
    assert_eq!(
        (outcome.answer.as_str(), outcome.model_calls),
        ("I think it is 42.", 1)
    );
    model.reply(&["I think it is 42."]);
    model.reply(&[r#"{"name": "drop_table", "arguments": {}}"#]);
    let outcome = timer.run(run_react(
        &recording,
        &timer,
        &tools,
        &config,
        request(&[], "Which sheets?"),
        &mut events,
    ));
    assert_eq!(
        (outcome.answer.as_str(), outcome.model_calls),
        ("I think it is 42.", 2)
    );
    assert!(outcome.steps.is_empty());
}
