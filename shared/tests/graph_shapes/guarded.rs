//! Seed 004: guard first with an early exit, and summary memory.

use super::*;

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

    async fn run_node(
        &mut self,
        node: Guarded,
        state: &mut GuardedState,
    ) -> Result<(), GraphError> {
        let scope = concierge_core::conversation::Scope::new(SITE, CONVERSATION);
        match node {
            Guarded::DetectLanguage => {
                state.language = concierge_core::language::detect(&state.question)
            }
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
                let summary = state
                    .summary
                    .as_ref()
                    .map(|s| s.content.as_str())
                    .unwrap_or("");
                state.answer = format!(
                    "Trả lời ({} tin nhắn, tóm tắt: {summary:?})\n\nNguồn tham khảo:\n1. {}",
                    state.context.len(),
                    state.sources[0]
                );
            }
            Guarded::SaveAndSummarize => {
                let seq = state.context.last().map_or(1, |m| m.seq + 1);
                for (offset, (role, text)) in [
                    (Role::User, &state.question),
                    (Role::Assistant, &state.answer),
                ]
                .into_iter()
                .enumerate()
                {
                    let message = StoredMessage {
                        id: format!("m{}", seq + offset as u64),
                        seq: seq + offset as u64,
                        role,
                        kind: if role == Role::User {
                            MessageKind::Text
                        } else {
                            MessageKind::Answer
                        },
                        content: text.clone(),
                        metadata: Metadata::new(),
                        created_at: 0,
                        tool_steps: Vec::new(),
                        payloads: Vec::new(),
                    };
                    self.store.append_message(scope, &message).await.unwrap();
                }
                let new = format!("S{}", seq / 2 + 1);
                let content = match &state.summary {
                    Some(old) => format!("{}\n\n{new}", old.content),
                    None => new,
                };
                self.store
                    .save_summary(
                        scope,
                        &Summary {
                            content,
                            upto_seq: seq + 1,
                            updated_at: 0,
                        },
                    )
                    .await
                    .unwrap();
            }
        }
        Ok(())
    }
}

fn guarded_graph() -> Graph<Guarded, GuardedState> {
    use Guarded::*;
    Graph::new(DetectLanguage)
        .edge(DetectLanguage, Guardrail)
        .branch(
            Guardrail,
            |s: &GuardedState| {
                if s.on_topic {
                    LoadMemory.into()
                } else {
                    Refuse.into()
                }
            },
            [Refuse.into(), LoadMemory.into()],
        )
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
    let conversation = Conversation {
        id: CONVERSATION.into(),
        site_id: SITE.into(),
        user_id: None,
        identity: None,
        language: Language::Vi,
        created_at: 0,
    };
    block_on(store.create_conversation(&conversation)).unwrap();
    let (route, state) = ask(&store, "What is the price of bitcoin?");
    assert_eq!(route, ["detect_language", "guardrail", "refuse"]);
    assert_eq!(
        state.answer,
        "Sorry, I can only help with dental questions."
    );
    assert!(store.messages(conversation.scope()).is_empty());

    let (route, _) = ask(&store, "Đau răng khôn phải làm sao?");
    assert_eq!(
        route,
        [
            "detect_language",
            "guardrail",
            "load_memory",
            "search",
            "respond_stream",
            "save_and_summarize"
        ]
    );
    let (_, state) = ask(&store, "Răng ê buốt khi uống nước lạnh?");
    assert!(
        state.answer.contains("2 tin nhắn, tóm tắt: \"S1\""),
        "{}",
        state.answer
    );
    assert!(
        state
            .answer
            .ends_with("Nguồn tham khảo:\n1. https://example.invalid/dental")
    );
    let summary = block_on(store.load_summary(conversation.scope()))
        .unwrap()
        .unwrap();
    assert_eq!(summary.content, "S1\n\nS2");
    assert_eq!(store.messages(conversation.scope()).len(), 4);
}
