//! Seed 001: a ReAct tool loop with a retry cap.

use super::*;

nodes!(Analyst {
    IntentClassifier => "intent_classifier",
    ChatNode => "chat_node",
    Agent => "data_agent_node",
    Tools => "tools",
    ClarifyNode => "clarify_node",
    ResponseFormatter => "response_formatter",
});

const MAX_TOOL_ERRORS: u32 = 3;

#[derive(Default)]
struct AnalystState {
    intent: &'static str,
    messages: Vec<ChatMessage>,
    pending: Vec<ToolCall>,
    tool_errors: u32,
    answer: String,
    final_response: String,
}

struct AnalystFlow<'a> {
    model: &'a ScriptedChatModel,
}

impl Flow for AnalystFlow<'_> {
    type Node = Analyst;
    type State = AnalystState;
    type Error = GraphError;

    async fn run_node(
        &mut self,
        node: Analyst,
        state: &mut AnalystState,
    ) -> Result<(), GraphError> {
        match node {
            Analyst::IntentClassifier | Analyst::ChatNode | Analyst::ClarifyNode => {}
            Analyst::Agent => {
                let request = ChatRequest {
                    messages: state.messages.clone(),
                    ..ChatRequest::default()
                };
                let (mut calls, mut text) = (Vec::new(), String::new());
                let mut sink = |event: ChatEvent| match event {
                    ChatEvent::ToolCall(call) => calls.push(call),
                    ChatEvent::TextDelta(t) => text.push_str(&t),
                    _ => {}
                };
                self.model
                    .stream(
                        &concierge_core::boundary::ModelCall::new(&request),
                        &mut sink,
                    )
                    .await
                    .unwrap();
                state.pending = calls;
                state.answer = text;
            }
            Analyst::Tools => {
                for call in std::mem::take(&mut state.pending) {
                    let result = if call.name == "execute_aggregation" {
                        state.tool_errors += 1;
                        "error: $out stage is not allowed".to_string()
                    } else {
                        "{\"total\": 150000000}".to_string()
                    };
                    state
                        .messages
                        .push(ChatMessage::tool_result(call.id, result));
                }
            }
            Analyst::ResponseFormatter => {
                state.final_response = if state.answer.is_empty() {
                    "Không có dữ liệu.".into()
                } else {
                    state.answer.clone()
                };
            }
        }
        Ok(())
    }
}

fn analyst_graph() -> Graph<Analyst, AnalystState> {
    use Analyst::*;
    Graph::new(IntentClassifier)
        .branch(
            IntentClassifier,
            |s: &AnalystState| match s.intent {
                "data_query" => Agent.into(),
                "chat" => ChatNode.into(),
                _ => ClarifyNode.into(),
            },
            [ChatNode.into(), Agent.into(), ClarifyNode.into()],
        )
        .branch(
            Agent,
            |s| {
                if s.pending.is_empty() {
                    ResponseFormatter.into()
                } else {
                    Tools.into()
                }
            },
            [Tools.into(), ResponseFormatter.into()],
        )
        .branch(
            Tools,
            |s| {
                if s.tool_errors >= MAX_TOOL_ERRORS {
                    ResponseFormatter.into()
                } else {
                    Agent.into()
                }
            },
            [Agent.into(), ResponseFormatter.into()],
        )
        .edge(ChatNode, ResponseFormatter)
        .edge(ClarifyNode, ResponseFormatter)
        .edge(ResponseFormatter, END)
}

fn tool_call(id: &str, name: &str) -> Script {
    Script::Events(vec![
        ChatEvent::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        }),
        ChatEvent::finish(FinishReason::ToolCalls),
    ])
}

#[test]
fn analyst_react_loop_answers_after_a_tool_call() {
    let model = ScriptedChatModel::new();
    model.push(tool_call("c1", "aggregate_data"));
    model.reply(&["Doanh thu: 150.000.000 VND"]);
    let mut state = AnalystState {
        intent: "data_query",
        ..AnalystState::default()
    };
    let trace =
        block_on(analyst_graph().run(&mut AnalystFlow { model: &model }, &mut state)).unwrap();
    assert_eq!(
        trace.names(),
        [
            "intent_classifier",
            "data_agent_node",
            "tools",
            "data_agent_node",
            "response_formatter"
        ]
    );
    assert_eq!(state.final_response, "Doanh thu: 150.000.000 VND");
    // The tool's result went back to the model.
    assert_eq!(model.last_request().unwrap().messages[0].role, Role::Tool);
}

#[test]
fn analyst_react_loop_stops_at_the_retry_cap() {
    let model = ScriptedChatModel::new();
    for id in ["c1", "c2", "c3", "c4"] {
        model.push(tool_call(id, "execute_aggregation"));
    }
    let mut state = AnalystState {
        intent: "data_query",
        ..AnalystState::default()
    };
    let trace =
        block_on(analyst_graph().run(&mut AnalystFlow { model: &model }, &mut state)).unwrap();
    let agent_runs = trace
        .names()
        .iter()
        .filter(|n| **n == "data_agent_node")
        .count();
    assert_eq!(agent_runs, 3);
    assert_eq!(state.tool_errors, 3);
    assert_eq!(trace.names().last(), Some(&"response_formatter"));
    assert_eq!(state.final_response, "Không có dữ liệu.");
    assert_eq!(model.scripts_left(), 1);
}

#[test]
fn analyst_unclear_goes_to_clarify_then_the_formatter() {
    let model = ScriptedChatModel::new();
    let mut state = AnalystState {
        intent: "unclear",
        ..AnalystState::default()
    };
    let trace =
        block_on(analyst_graph().run(&mut AnalystFlow { model: &model }, &mut state)).unwrap();
    assert_eq!(
        trace.names(),
        ["intent_classifier", "clarify_node", "response_formatter"]
    );
}
