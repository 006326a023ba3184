//! The engine expresses every seed's graph: each shape below is built with toy nodes.
//!
//! - 001: a ReAct tool loop with a retry cap;
//! - 002: sequential agents, a self-retrying SQL step, a validator;
//! - 003: planned stages whose tasks run concurrently and merge;
//! - 004: guard first with an early exit, and summary memory.
#![allow(clippy::unwrap_used)]

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use concierge_core::boundary::{ChatModel, ChatRequest, ConversationStore};
use concierge_core::chat::{ChatEvent, ChatMessage, FinishReason, ToolCall};
use concierge_core::conversation::{Conversation, Language, MessageKind, Metadata, Role, StoredMessage, Summary};
use concierge_core::graph::{END, Flow, Graph, GraphError, Next, Node, block_on, join_all};
use concierge_core::memory::{MemoryStore, Script, ScriptedChatModel};

macro_rules! nodes {
    ($name:ident { $($variant:ident => $text:literal),* $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum $name { $($variant),* }
        impl Node for $name {
            fn name(self) -> &'static str {
                match self { $(Self::$variant => $text),* }
            }
        }
    };
}

// ---------------------------------------------------------------- 001: ReAct, retry cap

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

    async fn run_node(&mut self, node: Analyst, state: &mut AnalystState) -> Result<(), GraphError> {
        match node {
            Analyst::IntentClassifier | Analyst::ChatNode | Analyst::ClarifyNode => {}
            Analyst::Agent => {
                let request = ChatRequest { messages: state.messages.clone(), ..ChatRequest::default() };
                let (mut calls, mut text) = (Vec::new(), String::new());
                let mut sink = |event: ChatEvent| match event {
                    ChatEvent::ToolCall(call) => calls.push(call),
                    ChatEvent::TextDelta(t) => text.push_str(&t),
                    _ => {}
                };
                self.model.stream(&request, &mut sink).await.unwrap();
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
                    state.messages.push(ChatMessage::tool_result(call.id, result));
                }
            }
            Analyst::ResponseFormatter => {
                state.final_response =
                    if state.answer.is_empty() { "Không có dữ liệu.".into() } else { state.answer.clone() };
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
        .branch(Agent, |s| if s.pending.is_empty() { ResponseFormatter.into() } else { Tools.into() }, [
            Tools.into(),
            ResponseFormatter.into(),
        ])
        .branch(Tools, |s| if s.tool_errors >= MAX_TOOL_ERRORS { ResponseFormatter.into() } else { Agent.into() }, [
            Agent.into(),
            ResponseFormatter.into(),
        ])
        .edge(ChatNode, ResponseFormatter)
        .edge(ClarifyNode, ResponseFormatter)
        .edge(ResponseFormatter, END)
}

fn tool_call(id: &str, name: &str) -> Script {
    Script::Events(vec![
        ChatEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: "{}".into() }),
        ChatEvent::finish(FinishReason::ToolCalls),
    ])
}

#[test]
fn analyst_react_loop_answers_after_a_tool_call() {
    let model = ScriptedChatModel::new();
    model.push(tool_call("c1", "aggregate_data"));
    model.reply(&["Doanh thu: 150.000.000 VND"]);
    let mut state = AnalystState { intent: "data_query", ..AnalystState::default() };
    let trace = block_on(analyst_graph().run(&mut AnalystFlow { model: &model }, &mut state)).unwrap();
    assert_eq!(trace.names(), ["intent_classifier", "data_agent_node", "tools", "data_agent_node", "response_formatter"]);
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
    let mut state = AnalystState { intent: "data_query", ..AnalystState::default() };
    let trace = block_on(analyst_graph().run(&mut AnalystFlow { model: &model }, &mut state)).unwrap();
    let agent_runs = trace.names().iter().filter(|n| **n == "data_agent_node").count();
    assert_eq!(agent_runs, 3);
    assert_eq!(state.tool_errors, 3);
    assert_eq!(trace.names().last(), Some(&"response_formatter"));
    assert_eq!(state.final_response, "Không có dữ liệu.");
    assert_eq!(model.scripts_left(), 1);
}

#[test]
fn analyst_unclear_goes_to_clarify_then_the_formatter() {
    let model = ScriptedChatModel::new();
    let mut state = AnalystState { intent: "unclear", ..AnalystState::default() };
    let trace = block_on(analyst_graph().run(&mut AnalystFlow { model: &model }, &mut state)).unwrap();
    assert_eq!(trace.names(), ["intent_classifier", "clarify_node", "response_formatter"]);
}

// ------------------------------------------------- 002: sequential agents, retries, validator

nodes!(Rental {
    Orchestrator => "orchestrator",
    SqlGeneration => "sql_generation",
    ResponseGenerator => "response_generator",
    ResultValidator => "result_validator",
    PersistKnowledge => "persist_knowledge",
    Clarify => "clarify",
});

const MAX_SQL_ATTEMPTS: u32 = 5;

#[derive(Default)]
struct RentalState {
    request_type: &'static str,
    ready_for_sql: bool,
    sql_outcomes: Vec<bool>,
    attempts: u32,
    sql_ok: bool,
    last_error: Option<String>,
    valid: bool,
    persisted: bool,
}

struct RentalFlow;

impl Flow for RentalFlow {
    type Node = Rental;
    type State = RentalState;
    type Error = GraphError;

    async fn run_node(&mut self, node: Rental, state: &mut RentalState) -> Result<(), GraphError> {
        match node {
            Rental::SqlGeneration => {
                state.attempts += 1;
                state.sql_ok = state.sql_outcomes.get(state.attempts as usize - 1).copied().unwrap_or(false);
                state.last_error = (!state.sql_ok).then(|| format!("attempt {} failed", state.attempts));
            }
            Rental::ResultValidator => state.valid = state.sql_ok,
            Rental::PersistKnowledge => state.persisted = true,
            Rental::Orchestrator | Rental::ResponseGenerator | Rental::Clarify => {}
        }
        Ok(())
    }
}

fn rental_graph() -> Graph<Rental, RentalState> {
    use Rental::*;
    Graph::new(Orchestrator)
        .branch(
            Orchestrator,
            |s: &RentalState| match (s.request_type, s.ready_for_sql) {
                ("QUERY", true) => SqlGeneration.into(),
                ("CLARIFICATION", _) | ("QUERY", false) => Clarify.into(),
                _ => ResponseGenerator.into(),
            },
            [SqlGeneration.into(), Clarify.into(), ResponseGenerator.into()],
        )
        .branch(
            SqlGeneration,
            |s| if s.sql_ok || s.attempts >= MAX_SQL_ATTEMPTS { ResponseGenerator.into() } else { SqlGeneration.into() },
            [SqlGeneration.into(), ResponseGenerator.into()],
        )
        .edge(ResponseGenerator, ResultValidator)
        .branch(ResultValidator, |s| if s.valid { PersistKnowledge.into() } else { Next::End }, [
            PersistKnowledge.into(),
            END.into(),
        ])
        .edge(PersistKnowledge, END)
        .edge(Clarify, END)
}

#[test]
fn rental_sql_step_retries_then_the_validator_persists() {
    let mut state = RentalState { request_type: "QUERY", ready_for_sql: true, sql_outcomes: vec![false, false, true], ..RentalState::default() };
    let trace = block_on(rental_graph().run(&mut RentalFlow, &mut state)).unwrap();
    assert_eq!(trace.names(), [
        "orchestrator",
        "sql_generation",
        "sql_generation",
        "sql_generation",
        "response_generator",
        "result_validator",
        "persist_knowledge",
    ]);
    assert!(state.persisted);
}

#[test]
fn rental_sql_step_gives_up_after_five_attempts_and_nothing_is_persisted() {
    let mut state = RentalState { request_type: "QUERY", ready_for_sql: true, ..RentalState::default() };
    let trace = block_on(rental_graph().run(&mut RentalFlow, &mut state)).unwrap();
    assert_eq!(state.attempts, 5);
    assert_eq!(state.last_error.as_deref(), Some("attempt 5 failed"));
    assert_eq!(trace.names().last(), Some(&"result_validator"));
    assert!(!state.persisted);
}

// ------------------------------------------- 003: planned stages, concurrent tasks, merge

nodes!(Knowledge {
    Orchestrator => "orchestrator",
    SemanticRouter => "semantic_router",
    ExecuteStage => "execute_stage",
    ConflictResolution => "conflict_resolution",
    FinalResponse => "final_response",
});

#[derive(Default)]
struct KnowledgeState {
    chitchat: bool,
    plan: Vec<Vec<(&'static str, &'static str)>>,
    stage: usize,
    results: Vec<String>,
    answer: String,
}

/// Pending once, then ready: lets concurrent tasks interleave.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

struct KnowledgeFlow<'a> {
    log: &'a RefCell<Vec<String>>,
}

impl KnowledgeFlow<'_> {
    async fn task(&self, agent: &'static str, tool: &'static str) -> Result<String, String> {
        self.log.borrow_mut().push(format!("start {agent}#{tool}"));
        YieldOnce(false).await;
        self.log.borrow_mut().push(format!("end {agent}#{tool}"));
        if tool == "broken_tool" { Err(format!("{agent}#{tool} timed out")) } else { Ok(format!("{agent}:{tool}")) }
    }
}

impl Flow for KnowledgeFlow<'_> {
    type Node = Knowledge;
    type State = KnowledgeState;
    type Error = GraphError;

    async fn run_node(&mut self, node: Knowledge, state: &mut KnowledgeState) -> Result<(), GraphError> {
        match node {
            Knowledge::Orchestrator => {}
            Knowledge::SemanticRouter => {
                state.plan = vec![
                    vec![("general", "rag_tool"), ("hr", "rag_tool"), ("it", "broken_tool")],
                    vec![("hr", "summary_tool")],
                ];
            }
            Knowledge::ExecuteStage => {
                let stage = state.plan[state.stage].clone();
                let this = &*self;
                let outputs = join_all(stage.iter().map(|(agent, tool)| this.task(agent, tool))).await;
                // Partial failure: failed tasks become results, not errors.
                state.results.extend(outputs.into_iter().map(|o| o.unwrap_or_else(|e| format!("failed: {e}"))));
                state.stage += 1;
            }
            Knowledge::ConflictResolution => state.results.sort(),
            Knowledge::FinalResponse => state.answer = state.results.join(" | "),
        }
        Ok(())
    }
}

fn knowledge_graph() -> Graph<Knowledge, KnowledgeState> {
    use Knowledge::*;
    Graph::new(Orchestrator)
        .branch(Orchestrator, |s: &KnowledgeState| if s.chitchat { Next::End } else { SemanticRouter.into() }, [
            SemanticRouter.into(),
            END.into(),
        ])
        .edge(SemanticRouter, ExecuteStage)
        .branch(
            ExecuteStage,
            |s| if s.stage < s.plan.len() { ExecuteStage.into() } else { ConflictResolution.into() },
            [ExecuteStage.into(), ConflictResolution.into()],
        )
        .edge(ConflictResolution, FinalResponse)
        .edge(FinalResponse, END)
}

#[test]
fn knowledge_stages_run_their_tasks_concurrently_and_merge() {
    let log = RefCell::new(Vec::new());
    let mut state = KnowledgeState::default();
    let trace = block_on(knowledge_graph().run(&mut KnowledgeFlow { log: &log }, &mut state)).unwrap();
    assert_eq!(trace.names(), [
        "orchestrator",
        "semantic_router",
        "execute_stage",
        "execute_stage",
        "conflict_resolution",
        "final_response",
    ]);
    // Stage 1's three tasks all started before any finished; stage 2 came after.
    assert_eq!(log.borrow()[..3], ["start general#rag_tool", "start hr#rag_tool", "start it#broken_tool"]);
    assert_eq!(log.borrow()[6], "start hr#summary_tool");
    assert_eq!(state.answer, "failed: it#broken_tool timed out | general:rag_tool | hr:rag_tool | hr:summary_tool");
}

#[test]
fn knowledge_chitchat_short_cut() {
    let log = RefCell::new(Vec::new());
    let mut state = KnowledgeState { chitchat: true, ..KnowledgeState::default() };
    let trace = block_on(knowledge_graph().run(&mut KnowledgeFlow { log: &log }, &mut state)).unwrap();
    assert_eq!(trace.names(), ["orchestrator"]);
}

// --------------------------------------------- 004: guard first, early exit, summary memory

nodes!(Guarded {
    DetectLanguage => "detect_language",
    Guardrail => "guardrail",
    Refuse => "refuse",
    LoadMemory => "load_memory",
    Search => "search",
    RespondStream => "respond_stream",
    SaveAndSummarize => "save_and_summarize",
});

struct GuardedState {
    question: String,
    language: Language,
    on_topic: bool,
    context: Vec<StoredMessage>,
    summary: Option<Summary>,
    sources: Vec<String>,
    answer: String,
}

struct GuardedFlow<'a> {
    store: &'a MemoryStore,
}

const SITE: &str = "dental";
const CONVERSATION: &str = "c1";

impl Flow for GuardedFlow<'_> {
    type Node = Guarded;
    type State = GuardedState;
    type Error = GraphError;

    async fn run_node(&mut self, node: Guarded, state: &mut GuardedState) -> Result<(), GraphError> {
        let scope = concierge_core::conversation::Scope::new(SITE, CONVERSATION);
        match node {
            Guarded::DetectLanguage => state.language = concierge_core::language::detect(&state.question),
            Guarded::Guardrail => {
                let question = state.question.to_lowercase();
                state.on_topic = question.contains("răng") || question.contains("teeth");
            }
            Guarded::Refuse => {
                state.answer = match state.language {
                    Language::Vi => "Xin lỗi, em chỉ tư vấn về nha khoa.".into(),
                    Language::En => "Sorry, I can only help with dental questions.".into(),
                }
            }
            Guarded::LoadMemory => {
                state.context = self.store.load_recent_messages(scope, 6).await.unwrap();
                state.summary = self.store.load_summary(scope).await.unwrap();
            }
            Guarded::Search => state.sources = vec!["https://example.invalid/dental".into()],
            Guarded::RespondStream => {
                let summary = state.summary.as_ref().map(|s| s.content.as_str()).unwrap_or("");
                state.answer = format!("Trả lời ({} tin nhắn, tóm tắt: {summary:?})\n\nNguồn tham khảo:\n1. {}", state.context.len(), state.sources[0]);
            }
            Guarded::SaveAndSummarize => {
                let seq = state.context.last().map_or(1, |m| m.seq + 1);
                for (offset, (role, text)) in [(Role::User, &state.question), (Role::Assistant, &state.answer)].into_iter().enumerate() {
                    let message = StoredMessage {
                        id: format!("m{}", seq + offset as u64),
                        seq: seq + offset as u64,
                        role,
                        kind: if role == Role::User { MessageKind::Text } else { MessageKind::Answer },
                        content: text.clone(),
                        metadata: Metadata::new(),
                        created_at: 0,
                    };
                    self.store.append_message(scope, &message).await.unwrap();
                }
                let new = format!("S{}", seq / 2 + 1);
                let content = match &state.summary {
                    Some(old) => format!("{}\n\n{new}", old.content),
                    None => new,
                };
                self.store.save_summary(scope, &Summary { content, upto_seq: seq + 1, updated_at: 0 }).await.unwrap();
            }
        }
        Ok(())
    }
}

fn guarded_graph() -> Graph<Guarded, GuardedState> {
    use Guarded::*;
    Graph::new(DetectLanguage)
        .edge(DetectLanguage, Guardrail)
        .branch(Guardrail, |s: &GuardedState| if s.on_topic { LoadMemory.into() } else { Refuse.into() }, [
            Refuse.into(),
            LoadMemory.into(),
        ])
        .edge(Refuse, END)
        .edge(LoadMemory, Search)
        .edge(Search, RespondStream)
        .edge(RespondStream, SaveAndSummarize)
        .edge(SaveAndSummarize, END)
}

fn ask(store: &MemoryStore, question: &str) -> (Vec<&'static str>, GuardedState) {
    let mut state = GuardedState {
        question: question.into(),
        language: Language::Vi,
        on_topic: false,
        context: Vec::new(),
        summary: None,
        sources: Vec::new(),
        answer: String::new(),
    };
    let trace = block_on(guarded_graph().run(&mut GuardedFlow { store }, &mut state)).unwrap();
    (trace.names(), state)
}

#[test]
fn guarded_refuses_off_domain_first_and_stores_nothing() {
    let store = MemoryStore::new();
    let conversation = Conversation { id: CONVERSATION.into(), site_id: SITE.into(), user_id: None, language: Language::Vi, created_at: 0 };
    block_on(store.create_conversation(&conversation)).unwrap();
    let (route, state) = ask(&store, "What is the price of bitcoin?");
    assert_eq!(route, ["detect_language", "guardrail", "refuse"]);
    assert_eq!(state.answer, "Sorry, I can only help with dental questions.");
    assert!(store.messages(conversation.scope()).is_empty());

    let (route, _) = ask(&store, "Đau răng khôn phải làm sao?");
    assert_eq!(route, ["detect_language", "guardrail", "load_memory", "search", "respond_stream", "save_and_summarize"]);
    let (_, state) = ask(&store, "Răng ê buốt khi uống nước lạnh?");
    assert!(state.answer.contains("2 tin nhắn, tóm tắt: \"S1\""), "{}", state.answer);
    assert!(state.answer.ends_with("Nguồn tham khảo:\n1. https://example.invalid/dental"));
    let summary = block_on(store.load_summary(conversation.scope())).unwrap().unwrap();
    assert_eq!(summary.content, "S1\n\nS2");
    assert_eq!(store.messages(conversation.scope()).len(), 4);
}

// ------------------------------------------------------------------- wiring errors

nodes!(Toy { A => "a", B => "b" });

struct Noop;

impl Flow for Noop {
    type Node = Toy;
    type State = u32;
    type Error = GraphError;

    async fn run_node(&mut self, _node: Toy, state: &mut u32) -> Result<(), GraphError> {
        *state += 1;
        Ok(())
    }
}

#[test]
fn wiring_errors_are_reported() {
    let missing = Graph::<Toy, u32>::new(Toy::A).edge(Toy::A, Toy::B);
    assert_eq!(block_on(missing.run(&mut Noop, &mut 0)).unwrap_err(), GraphError::NoEdge { node: "b" });

    let undeclared = Graph::<Toy, u32>::new(Toy::A).branch(Toy::A, |_| Toy::B.into(), [END.into()]);
    assert_eq!(block_on(undeclared.run(&mut Noop, &mut 0)).unwrap_err(), GraphError::UndeclaredTarget { from: "a", to: "b" });

    let endless = Graph::<Toy, u32>::new(Toy::A).edge(Toy::A, Toy::B).edge(Toy::B, Toy::A).step_limit(10);
    let mut runs = 0;
    assert_eq!(block_on(endless.run(&mut Noop, &mut runs)).unwrap_err(), GraphError::StepLimit { limit: 10 });
    assert_eq!(runs, 10);
}
