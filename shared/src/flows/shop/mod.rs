//! `shop` — the store assistant of seed 000 (`000_fbdaa2e0010c667b.txt`).
//!
//! ```text
//! 0. greeting (out of band)   engine::create_conversation: the persona's `Greeting:` line
//! 1. receive                  the engine's turn lifecycle: store the visitor's message,
//!                             queue its embedding
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
//! Node 2 decides by rules (`crate::intent`: the seed's keyword lists, question shapes,
//! product vocabulary and the site's catalog terms); what they leave uncertain — no keyword
//! in a real question, or a tie — is asked of the model in one constrained call
//! ([`intent_model`], issue 48) before the clarifying question is settled on.
//!
//! Where the seed is silent: a warranty message without a serial goes to `warranty_stream`
//! (which asks for the serial) only when it asks to *check* a warranty
//! (`[warranty.check]` keywords); questions about warranty policy are answered by the model
//! with retrieval.

mod classify;
mod config;
pub mod evaluation;
pub mod intent_model;
pub mod mcp;
mod nodes;
mod prompt;
mod state;
pub mod warranty;

pub use classify::{
    Analysis, Context, analyze, clarify_attempts, intent_label, previous_user_messages,
};
pub use config::{
    PERSONA_EN, PERSONA_VI, SENTENCE_KEYS, SENTENCES_EN, SENTENCES_VI, ShopConfig, ShopTexts,
};
pub use prompt::build_request;
pub use state::ShopState;

use serde_json::Value;

use crate::boundary::WarrantyRecords;
use crate::conversation::{Language, StoredMessage};
use crate::engine::{Answer, Assistant, Platform, Turn, TurnConfig};
use crate::error::Error;
use crate::graph::{END, Graph, GraphError, Next, Node};
use crate::intent::Intent;
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

/// What `shop` needs besides the engine's platform: the site's warranty records (its
/// `warranty_stream` node).
#[derive(Debug, Clone)]
pub struct ShopDeps<R> {
    /// The site's warranty records.
    pub records: R,
}

/// The `shop` template as the engine runs it: seed 000's graph with the site's settings
/// and its dependencies.
#[derive(Debug, Clone)]
pub struct ShopAssistant<R> {
    /// The site's settings.
    pub config: ShopConfig,
    /// Its dependencies.
    pub deps: ShopDeps<R>,
}

impl<R: WarrantyRecords> ShopAssistant<R> {
    /// `config` over the warranty records `records`.
    pub fn new(config: ShopConfig, records: R) -> Self {
        Self {
            config,
            deps: ShopDeps { records },
        }
    }
}

impl<R: WarrantyRecords> Assistant for ShopAssistant<R> {
    fn config(&self) -> &TurnConfig {
        &self.config.turn
    }

    fn greeting(&self, language: Language) -> &str {
        self.config.greeting(language)
    }

    fn stored_intent(&self, reply: &StoredMessage) -> (Option<&'static str>, Option<f32>) {
        let intent = reply.meta_str("intent").and_then(Intent::parse);
        let confidence = reply.metadata.get("confidence").and_then(Value::as_f64);
        (
            Some(intent.unwrap_or(Intent::Unknown).as_str()),
            Some(confidence.unwrap_or_default() as f32),
        )
    }

    /// Nodes 2–4: the graph from `classify`, for the turn's stored visitor message.
    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        let history = core::mem::take(&mut turn.history);
        let received_at = history.last().map_or(0, |m| m.created_at);
        let user_id = turn.conversation.user_id.clone();
        let mut state = ShopState::new(turn.scope(), user_id, turn.language, history, received_at);
        state.user_message_id = turn.user_message_id.clone();
        state.reply_id = turn.reply_id.clone();
        state.retrievable = turn.retrievable;
        let mut flow = ShopFlow {
            platform,
            records: &self.deps.records,
            config: &self.config,
            turn,
        };
        let trace = graph().run(&mut flow, &mut state).await?;
        let reply = state
            .reply
            .ok_or(Error::Graph(GraphError::MissingOutput { what: "a reply" }))?;
        Ok(Answer {
            reply,
            intent: Some(state.intent.as_str()),
            confidence: Some(state.intent_confidence),
            usage: state.usage,
            route: trace.names(),
        })
    }
}
