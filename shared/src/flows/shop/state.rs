//! The `shop` turn state (seed 000's `AgentState`), rebuilt from the store every turn.

use alloc::string::String;
use alloc::vec::Vec;

use crate::chat::Usage;
use crate::conversation::{Language, Scope, StoredMessage};
use crate::intent::Intent;
use crate::retrieval::Passage;

/// Seed 000's `AgentState`: what the nodes of one turn read and write.
#[derive(Debug, Clone, PartialEq)]
pub struct ShopState {
    /// The site.
    pub site_id: String,
    /// The conversation.
    pub conversation_id: String,
    /// The visitor, when known.
    pub user_id: Option<String>,
    /// Recent history from the store, oldest first; the visitor's current message is last.
    pub chat_history: Vec<StoredMessage>,
    /// When the visitor's message was stored (Unix ms).
    pub last_updated: u64,
    /// `preferred_language`.
    pub preferred_language: Language,
    /// The classified intent.
    pub intent: Intent,
    /// Its confidence.
    pub intent_confidence: f32,
    /// Whether to retrieve before answering.
    pub need_retrieval_hint: bool,
    /// Whether the message asks to check a product's warranty.
    pub warranty_check: bool,
    /// Clarifying questions, when clarification is needed (the first is asked).
    pub clarify_questions: Vec<String>,
    /// Clarifying questions asked in a row before this turn (observation only, no cap).
    pub clarify_attempts: u32,
    /// Whether the assistant's previous message asked for a serial.
    pub awaiting_serial: bool,
    /// The serial in the current message, if any.
    pub serial: Option<String>,
    /// Why this intent (debug).
    pub rationale: String,
    /// Retrieved passages (empty when retrieval did not run or found nothing).
    pub retrieved: Vec<Passage>,
    /// Whether retrieval could find anything (the store knows when it cannot: no indexed
    /// knowledge and no indexed memory outside the history); `false` skips `retrieve`.
    pub retrievable: bool,
    /// Whether the `retrieve` node ran.
    pub retrieval_ran: bool,
    /// The visitor's current message's id (the turn's reply answers it).
    pub user_message_id: String,
    /// The id the assistant's reply is stored under (minted when the turn starts).
    pub reply_id: String,
    /// Tokens the model used, when it reported them.
    pub usage: Option<Usage>,
    /// The stored assistant reply, once a node has produced it.
    pub reply: Option<StoredMessage>,
}

impl ShopState {
    /// A state for a turn on `history`, whose last message is the visitor's current one.
    pub fn new(
        scope: Scope<'_>,
        user_id: Option<String>,
        language: Language,
        chat_history: Vec<StoredMessage>,
        now: u64,
    ) -> Self {
        Self {
            site_id: scope.site_id.into(),
            conversation_id: scope.conversation_id.into(),
            user_id,
            chat_history,
            last_updated: now,
            preferred_language: language,
            intent: Intent::Unknown,
            intent_confidence: 0.0,
            need_retrieval_hint: false,
            warranty_check: false,
            clarify_questions: Vec::new(),
            clarify_attempts: 0,
            awaiting_serial: false,
            serial: None,
            rationale: String::new(),
            retrieved: Vec::new(),
            retrievable: true,
            retrieval_ran: false,
            user_message_id: String::new(),
            reply_id: String::new(),
            usage: None,
            reply: None,
        }
    }

    /// The store scope of this turn.
    pub fn scope(&self) -> Scope<'_> {
        Scope::new(&self.site_id, &self.conversation_id)
    }

    /// The visitor's current message.
    pub fn current_message(&self) -> &str {
        self.chat_history
            .last()
            .map(|m| m.content.as_str())
            .unwrap_or_default()
    }

    /// The history before the current message.
    pub fn history_before_current(&self) -> &[StoredMessage] {
        let end = self.chat_history.len().saturating_sub(1);
        &self.chat_history[..end]
    }

    /// Whether node 2 decided to ask a clarifying question.
    pub fn clarify_needed(&self) -> bool {
        !self.clarify_questions.is_empty()
    }
}
