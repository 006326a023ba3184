//! One conversation of the in-memory store: its messages, turns, embedding states and summary.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;

use crate::boundary::TurnContext;
use crate::conversation::{Conversation, EmbeddingStatus, Scope, StoredMessage, Summary};
use crate::error::{ServiceError, ServiceErrorKind};

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) conversation: Conversation,
    pub(super) messages: Vec<StoredMessage>,
    pub(super) ids: BTreeSet<String>,
    pub(super) embedding: BTreeMap<String, EmbeddingStatus>,
    pub(super) summary: Option<Summary>,
    /// The turn of each visitor's message, by message id.
    pub(super) turns: BTreeMap<String, Turn>,
}

/// What a visitor's message carries besides the message (a SQL store keeps it in columns).
#[derive(Debug, Clone)]
pub(super) struct Turn {
    pub(super) reply_id: String,
    pub(super) idempotency_key: Option<String>,
}

impl Entry {
    pub(super) fn message(&self, id: &str) -> Option<&StoredMessage> {
        self.messages.iter().find(|m| m.id == id)
    }

    /// Whether a complete reply is stored under `reply_id`.
    pub(super) fn answered(&self, reply_id: &str) -> bool {
        self.message(reply_id).is_some_and(|m| !m.is_incomplete())
    }

    /// Appends `message` with the next `seq`.
    pub(super) fn append(
        &mut self,
        message: &StoredMessage,
    ) -> Result<StoredMessage, ServiceError> {
        if !self.ids.insert(message.id.clone()) {
            return Err(ServiceError::new(ServiceErrorKind::Conflict, "id taken"));
        }
        let mut message = message.clone();
        message.seq = self.messages.last().map_or(1, |m| m.seq + 1);
        self.messages.push(message.clone());
        Ok(message)
    }

    /// The last `window` messages before `seq`.
    pub(super) fn history_before(&self, seq: u64, window: usize) -> Vec<StoredMessage> {
        let end = self.messages.partition_point(|m| m.seq < seq);
        self.messages[end.saturating_sub(window)..end].to_vec()
    }
}

/// Turn contexts remembered per conversation, with the window each was read with.
pub(super) type Remembered = BTreeMap<(String, String), (usize, TurnContext)>;

pub(super) fn key(scope: Scope<'_>) -> (String, String) {
    (scope.site_id.into(), scope.conversation_id.into())
}
