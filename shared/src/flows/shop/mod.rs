//! `shop` — the store assistant of seed 000 (`000_fbdaa2e0010c667b.txt`).
//!
//! ```text
//! 0. greeting (out of band)   create_conversation: persona's `Greeting:` line, stored
//! 1. receive                  run_turn: store the visitor's message, queue its embedding
//! 2. classify                 entry point
//!      ├─ clarify_needed                                    → clarify_stream  → END
//!      ├─ intent == warranty and (serial or awaiting serial
//!      │                          or a warranty check)      → warranty_stream → END
//!      ├─ need_retrieval_hint (and anything to retrieve)    → retrieve → respond_stream → END
//!      └─ otherwise                                         → respond_stream  → END
//! ```
//!
//! Each turn rebuilds its state from the store (the conversation and its recent messages),
//! so `clarify_attempts` and "awaiting serial" are derived from stored history, never kept
//! in RAM. The early exits stream one fixed sentence; `respond_stream` streams the model.
//!
//! Where the seed is silent: a warranty message without a serial goes to `warranty_stream`
//! (which asks for the serial) only when it asks to *check* a warranty
//! (`[warranty.check]` keywords); questions about warranty policy are answered by the model
//! with retrieval.

mod classify;
mod config;
mod nodes;
mod prompt;
mod state;
pub mod warranty;

use alloc::string::String;
use alloc::vec::Vec;

pub use classify::{
    Analysis, Context, analyze, clarify_attempts, intent_label, previous_user_messages,
};
pub use config::{
    PERSONA_EN, PERSONA_VI, SENTENCE_KEYS, SENTENCES_EN, SENTENCES_VI, ShopConfig, ShopTexts,
};
pub use prompt::build_request;
pub use state::ShopState;

use crate::boundary::{
    ChatModel, Clock, ConversationStore, EmbedQueue, Embedder, Ids, LogRecord, Logger, TurnStart,
    VectorIndex, WarrantyRecords,
};
use crate::chat::Usage;
use crate::conversation::{
    Conversation, EmbedJob, Language, MessageKind, Metadata, Role, Scope, StoredMessage,
};
use crate::error::{Error, InvalidMessage};
use crate::graph::{END, Graph, GraphError, Next, Node};
use crate::intent::Intent;
use crate::language;
use crate::turn::{TurnEvent, TurnInput, TurnSink};
use nodes::ShopFlow;

/// The nodes of the `shop` graph, named as in seed 000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShopNode {
    /// Node 2: intent, confidence, clarify questions, serial.
    Classify,
    /// Early exit: one clarifying question.
    ClarifyStream,
    /// Early exit: the warranty branch.
    WarrantyStream,
    /// Node 3: retrieval.
    Retrieve,
    /// Node 4: the model's answer.
    RespondStream,
}

impl Node for ShopNode {
    fn name(self) -> &'static str {
        match self {
            Self::Classify => "classify",
            Self::ClarifyStream => "clarify_stream",
            Self::WarrantyStream => "warranty_stream",
            Self::Retrieve => "retrieve",
            Self::RespondStream => "respond_stream",
        }
    }
}

/// Seed 000's streaming graph with its early exits.
pub fn graph() -> Graph<ShopNode, ShopState> {
    use ShopNode::*;
    Graph::new(Classify)
        .branch(
            Classify,
            route_after_classify,
            [
                ClarifyStream.into(),
                WarrantyStream.into(),
                Retrieve.into(),
                RespondStream.into(),
            ],
        )
        .edge(ClarifyStream, END)
        .edge(WarrantyStream, END)
        .edge(Retrieve, RespondStream)
        .edge(RespondStream, END)
}

/// The conditional edge leaving `classify`.
pub fn route_after_classify(state: &ShopState) -> Next<ShopNode> {
    if state.clarify_needed() {
        ShopNode::ClarifyStream.into()
    } else if state.intent == Intent::Warranty
        && (state.serial.is_some() || state.awaiting_serial || state.warranty_check)
    {
        ShopNode::WarrantyStream.into()
    } else if state.need_retrieval_hint && state.retrievable {
        ShopNode::Retrieve.into()
    } else {
        ShopNode::RespondStream.into()
    }
}

/// The boundaries the `shop` template uses.
pub struct ShopServices<'a, M, S, E, V, W> {
    /// The chat model.
    pub model: &'a M,
    /// The conversation store.
    pub store: &'a S,
    /// The embedder (retrieval queries).
    pub embedder: &'a E,
    /// The vector index (knowledge and conversation memory).
    pub index: &'a V,
    /// Warranty records.
    pub warranty: &'a W,
    /// Id minting.
    pub ids: &'a dyn Ids,
    /// The clock.
    pub clock: &'a dyn Clock,
    /// Where stored messages go to be embedded.
    pub queue: &'a dyn EmbedQueue,
    /// Where log records go.
    pub logger: &'a dyn Logger,
}

impl<M, S, E, V, W> Clone for ShopServices<'_, M, S, E, V, W> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M, S, E, V, W> Copy for ShopServices<'_, M, S, E, V, W> {}

impl<M, S, E, V, W> core::fmt::Debug for ShopServices<'_, M, S, E, V, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShopServices").finish_non_exhaustive()
    }
}

/// A conversation to create.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewConversation {
    /// The site.
    pub site_id: String,
    /// The visitor, when known.
    pub user_id: Option<String>,
    /// The greeting's language (default Vietnamese); the visitor's first message decides
    /// the conversation's language.
    pub language: Option<Language>,
}

/// A created conversation and its stored greeting.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedConversation {
    /// The conversation.
    pub conversation: Conversation,
    /// The greeting, stored as its first message.
    pub greeting: StoredMessage,
}

/// Node 0: creates a conversation and stores the persona's greeting (not embedded: it
/// is the same fixed sentence in every conversation).
pub async fn create_conversation<M, S: ConversationStore, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    new: NewConversation,
) -> Result<CreatedConversation, Error> {
    let now = services.clock.now_ms();
    let language = new.language.unwrap_or_default();
    let conversation = Conversation {
        id: services.ids.new_id(),
        site_id: new.site_id,
        user_id: new.user_id,
        language,
        created_at: now,
    };
    services
        .store
        .create_conversation(&conversation)
        .await
        .map_err(Error::Store)?;
    let greeting = StoredMessage {
        id: services.ids.new_id(),
        seq: 1,
        role: Role::Assistant,
        kind: MessageKind::Greeting,
        content: config.greeting(language).into(),
        metadata: Metadata::new(),
        created_at: now,
    };
    services
        .store
        .append_message(conversation.scope(), &greeting)
        .await
        .map_err(Error::Store)?;
    // The greeting is the persona's fixed sentence: nothing to remember, so not embedded.
    Ok(CreatedConversation {
        conversation,
        greeting,
    })
}

/// What a completed turn produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The stored visitor message.
    pub user_message_id: String,
    /// The stored assistant reply.
    pub reply: StoredMessage,
    /// The classified intent.
    pub intent: Intent,
    /// Its confidence.
    pub confidence: f32,
    /// The conversation's language for this turn.
    pub language: Language,
    /// The graph nodes the turn visited.
    pub route: Vec<&'static str>,
    /// Tokens the model used, when it was called and reported them.
    pub usage: Option<Usage>,
}

/// Runs one turn: node 1 (store the visitor's message), then the graph from `classify`.
///
/// Emits `Started`, the reply's `Chunk`s, and exactly one terminal event into `sink`
/// (see [`turn`](crate::turn)). On error the `Failed` event has already been emitted.
pub async fn run_turn<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    input: &TurnInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    let result = turn(services, config, input, sink).await;
    match &result {
        Ok(outcome) => sink.emit(TurnEvent::Completed {
            message_id: outcome.reply.id.clone(),
            kind: outcome.reply.kind,
            intent: Some(outcome.intent.as_str()),
            confidence: Some(outcome.confidence),
            usage: outcome.usage,
        }),
        Err(error) => sink.emit(TurnEvent::Failed {
            code: error.code(),
            message: error.public_message(),
        }),
    }
    result
}

async fn turn<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    input: &TurnInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    // Node 1: receive.
    let text = input.text.trim();
    if text.is_empty() {
        return Err(Error::InvalidMessage(InvalidMessage::Empty));
    }
    if text.chars().count() > config.max_message_chars {
        return Err(Error::InvalidMessage(InvalidMessage::TooLong {
            max_chars: config.max_message_chars,
        }));
    }
    let scope = Scope::new(&input.site_id, &input.conversation_id);
    let store = services.store;

    // The visitor's message is stored first, whatever happens next: one store call loads
    // the conversation and its history and appends the message.
    let now = services.clock.now_ms();
    let draft = StoredMessage {
        id: services.ids.new_id(),
        seq: 0,
        role: Role::User,
        kind: MessageKind::Text,
        content: text.into(),
        metadata: Metadata::new(),
        created_at: now,
    };
    let TurnStart {
        conversation,
        mut history,
        message,
        retrievable,
    } = store
        .start_turn(scope, draft, config.history_window)
        .await
        .map_err(Error::Store)?
        .ok_or(Error::ConversationNotFound)?;
    services.queue.enqueue(embed_job(scope, &message));
    let user_message_id = message.id.clone();
    let reply_id = services.ids.new_id();
    sink.emit(TurnEvent::Started {
        conversation_id: input.conversation_id.clone(),
        user_message_id: user_message_id.clone(),
        message_id: reply_id.clone(),
    });

    // The language: detected from the visitor's first message, or explicitly asked for.
    let first_user_message = !history.iter().any(|m| m.role == Role::User);
    let detected = if first_user_message {
        language::detect(text)
    } else {
        conversation.language
    };
    let language = language::requested(text).unwrap_or(detected);
    history.push(message);

    // Nodes 2–4: the graph.
    let mut state = ShopState::new(scope, conversation.user_id, language, history, now);
    state.reply_id = reply_id;
    state.retrievable = retrievable;
    let mut flow = ShopFlow {
        services,
        config,
        sink,
    };
    let trace = graph().run(&mut flow, &mut state).await;
    // A changed language is remembered after the answer, off the time-to-first-token path
    // (and also when the answer failed: the visitor's message was stored). Best effort: the
    // answer is already streamed and stored, so a failure here is logged, not the turn's.
    if language != conversation.language
        && let Err(error) = store.set_language(scope, language).await
    {
        services.logger.log(&LogRecord::Warning {
            conversation_id: scope.conversation_id,
            code: "language_not_saved",
            detail: &error.detail,
        });
    }
    let trace = trace?;
    let reply = state
        .reply
        .ok_or(Error::Graph(GraphError::MissingOutput { what: "a reply" }))?;
    Ok(TurnOutcome {
        user_message_id,
        reply,
        intent: state.intent,
        confidence: state.intent_confidence,
        language,
        route: trace.names(),
        usage: state.usage,
    })
}

fn embed_job(scope: Scope<'_>, message: &StoredMessage) -> EmbedJob {
    EmbedJob {
        site_id: scope.site_id.into(),
        conversation_id: scope.conversation_id.into(),
        message_id: message.id.clone(),
        text: message.content.clone(),
    }
}
