//! `shop` — the store assistant of seed 000 (`000_fbdaa2e0010c667b.txt`).
//!
//! ```text
//! 0. greeting (out of band)   create_conversation: persona's `Greeting:` line, stored
//! 1. receive                  receive (run_turn, or a background turn's first half):
//!                             store the visitor's message, queue its embedding
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
mod lifecycle;
mod nodes;
mod prompt;
mod state;
pub mod warranty;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

pub use classify::{
    Analysis, Context, analyze, clarify_attempts, intent_label, previous_user_messages,
};
pub use config::{
    PERSONA_EN, PERSONA_VI, SENTENCE_KEYS, SENTENCES_EN, SENTENCES_VI, ShopConfig, ShopTexts,
};
pub use lifecycle::{PendingTurn, Received, answer_job, receive, run_turn};
pub use prompt::build_request;
pub use state::ShopState;

use crate::boundary::{Clock, ConversationStore, EmbedQueue, Ids, Logger};
use crate::chat::Usage;
use crate::conversation::{Conversation, Language, MessageKind, Metadata, Role, StoredMessage};
use crate::error::Error;
use crate::graph::{END, Graph, Next, Node};
use crate::intent::Intent;

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
    /// The visitor, when known (a label unless `identity` is set).
    pub user_id: Option<String>,
    /// The verified identity the conversation is bound to (`None`: anonymous).
    pub identity: Option<crate::identity::UserIdentity>,
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
        identity: new.identity.map(Box::new),
        language,
        created_at: now,
    };
    services
        .store
        .create_conversation(&conversation)
        .await
        .map_err(Error::Store)?;
    let mut greeting = StoredMessage {
        id: services.ids.new_id(),
        seq: 0,
        role: Role::Assistant,
        kind: MessageKind::Greeting,
        content: config.greeting(language).into(),
        metadata: Metadata::new(),
        created_at: now,
        tool_steps: Vec::new(),
    };
    greeting.seq = services
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
