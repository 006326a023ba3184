//! The conversation test harness: runs a table of turns against the `shop` flow over the
//! in-memory backend and checks, for every turn, exactly what was streamed and exactly what
//! was stored.
#![allow(dead_code, clippy::unwrap_used)]

use concierge_core::conversation::{Language, MessageKind, Role, Scope, StoredMessage};
use concierge_core::engine::{CreatedConversation, NewConversation, TurnOutcome};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::MemoryBackend;
use concierge_core::turn::{TurnEvent, TurnInput};
use serde_json::{Value, json};

/// The demo site.
pub const SITE: &str = "site-1";

/// One visitor message and everything the turn must do.
pub struct Turn {
    /// What the visitor says.
    pub say: &'static str,
    /// The scripted model's chunks (empty: the model must not be called).
    pub model: &'static [&'static str],
    /// The exact text streamed to the visitor (and stored).
    pub reply: &'static str,
    /// The stored reply's kind.
    pub kind: MessageKind,
    /// The stored reply's metadata, exactly.
    pub metadata: Value,
    /// The graph nodes visited.
    pub route: &'static [&'static str],
}

/// A conversation: how it is created and its turns.
pub struct Case {
    /// Name, for failure messages.
    pub name: &'static str,
    /// The language hint at creation.
    pub greeting_language: Option<Language>,
    /// The exact greeting.
    pub greeting: &'static str,
    /// The conversation's language after the turns.
    pub language: Language,
    /// The turns.
    pub turns: Vec<Turn>,
}

/// Creates a conversation on `backend`.
pub fn create(
    backend: &MemoryBackend,
    config: &ShopConfig,
    language: Option<Language>,
) -> CreatedConversation {
    let new = NewConversation {
        site_id: SITE.into(),
        user_id: Some("visitor-7".into()),
        identity: None,
        language,
    };
    block_on(concierge_core::engine::create_conversation(
        &backend,
        &shop(backend, config),
        new,
    ))
    .unwrap()
}

/// Runs one turn, returning its events and outcome.
pub fn say(
    backend: &MemoryBackend,
    config: &ShopConfig,
    conversation_id: &str,
    text: &str,
) -> (
    Vec<TurnEvent>,
    Result<TurnOutcome, concierge_core::error::Error>,
) {
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = block_on(concierge_core::engine::run_turn(
        &backend,
        &shop(backend, config),
        &input,
        &mut events,
    ));
    (events, outcome)
}

/// Whether `request` is node 2's intent classification call (issue 48), not an answer.
pub fn is_intent_call(request: &concierge_core::boundary::ChatRequest) -> bool {
    request.messages.first().is_some_and(|m| {
        m.content == concierge_core::flows::shop::intent_model::INTENT_MODEL_PROMPT.trim()
    })
}

/// The answer requests the model received (intent classification calls left out: a turn
/// whose rules are uncertain asks one, and a test says so where it matters).
pub fn answer_requests(backend: &MemoryBackend) -> usize {
    backend
        .model
        .requests()
        .iter()
        .filter(|r| !is_intent_call(r))
        .count()
}

fn static_intent(name: &str) -> &'static str {
    ["assemble_pc", "shopping", "warranty", "unknown"]
        .into_iter()
        .find(|i| *i == name)
        .unwrap()
}

/// The stored messages as `(role, kind, content, metadata)`.
pub fn stored(
    backend: &MemoryBackend,
    conversation_id: &str,
) -> Vec<(Role, MessageKind, String, Value)> {
    backend
        .store
        .messages(Scope::new(SITE, conversation_id))
        .into_iter()
        .map(|m: StoredMessage| (m.role, m.kind, m.content, Value::Object(m.metadata)))
        .collect()
}

/// Runs `case` with `config`; returns the backend and conversation id for further checks.
pub fn run_case(case: &Case, config: &ShopConfig) -> (MemoryBackend, String) {
    let backend = MemoryBackend::demo(SITE);
    let created = create(&backend, config, case.greeting_language);
    let conversation_id = created.conversation.id.clone();
    assert_eq!(conversation_id, "id1", "{}", case.name);
    assert_eq!(
        created.greeting.content, case.greeting,
        "{}: greeting",
        case.name
    );
    let mut expected_stored = vec![(
        Role::Assistant,
        MessageKind::Greeting,
        case.greeting.to_string(),
        json!({}),
    )];
    let mut next_id = 3;

    for (number, turn) in case.turns.iter().enumerate() {
        let at = format!("{} turn {} ({:?})", case.name, number + 1, turn.say);
        let requests_before = answer_requests(&backend);
        if !turn.model.is_empty() {
            backend.model.reply(turn.model);
        }
        let (events, outcome) = say(&backend, config, &conversation_id, turn.say);
        let outcome = outcome.unwrap_or_else(|e| panic!("{at}: {e}"));

        let (user_id, reply_id) = (format!("id{next_id}"), format!("id{}", next_id + 1));
        next_id += 2;
        let chunks: Vec<&str> = if turn.model.is_empty() {
            vec![turn.reply]
        } else {
            turn.model.to_vec()
        };
        assert_eq!(
            chunks.concat(),
            turn.reply,
            "{at}: the scripted chunks make up the reply"
        );
        let mut expected_events = vec![TurnEvent::Started {
            conversation_id: conversation_id.clone(),
            user_message_id: user_id.clone(),
            message_id: reply_id.clone(),
        }];
        expected_events.extend(chunks.iter().map(|c| TurnEvent::Chunk {
            text: c.to_string(),
        }));
        expected_events.push(TurnEvent::Completed {
            message_id: reply_id.clone(),
            kind: turn.kind,
            intent: Some(static_intent(turn.metadata["intent"].as_str().unwrap())),
            confidence: Some(turn.metadata["confidence"].as_f64().unwrap() as f32),
            usage: None,
            reply: None,
        });
        assert_eq!(events, expected_events, "{at}: streamed events");
        assert_eq!(outcome.route, turn.route, "{at}: route");
        assert_eq!(outcome.user_message_id, user_id, "{at}");
        let model_called = answer_requests(&backend) > requests_before;
        assert_eq!(model_called, !turn.model.is_empty(), "{at}: model called");

        expected_stored.push((
            Role::User,
            MessageKind::Text,
            turn.say.to_string(),
            json!({}),
        ));
        expected_stored.push((
            Role::Assistant,
            turn.kind,
            turn.reply.to_string(),
            turn.metadata.clone(),
        ));
        assert_eq!(
            stored(&backend, &conversation_id),
            expected_stored,
            "{at}: stored messages"
        );
    }

    let messages = backend.store.messages(Scope::new(SITE, &conversation_id));
    let seqs: Vec<u64> = messages.iter().map(|m| m.seq).collect();
    assert_eq!(
        seqs,
        (1..=messages.len() as u64).collect::<Vec<_>>(),
        "{}: seq",
        case.name
    );
    assert!(
        messages
            .windows(2)
            .all(|w| w[0].created_at < w[1].created_at),
        "{}: timestamps",
        case.name
    );
    let conversation = backend
        .store
        .conversation(Scope::new(SITE, &conversation_id))
        .unwrap();
    assert_eq!(
        conversation.language, case.language,
        "{}: language",
        case.name
    );
    assert_eq!(
        backend.model.scripts_left(),
        0,
        "{}: every scripted reply used",
        case.name
    );
    (backend, conversation_id)
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
pub fn shop<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::shop::ShopConfig,
) -> concierge_core::flows::shop::ShopAssistant<&'b concierge_core::memory::MemoryWarrantyRecords> {
    concierge_core::flows::shop::ShopAssistant::new(config.clone(), &backend.warranty)
}
