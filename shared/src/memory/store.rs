//! An in-memory [`ConversationStore`].

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::boundary::ConversationStore;
use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::{ServiceError, ServiceErrorKind};

#[derive(Debug, Clone)]
struct Entry {
    conversation: Conversation,
    messages: Vec<StoredMessage>,
    ids: BTreeSet<String>,
    embedding: BTreeMap<String, EmbeddingStatus>,
    summary: Option<Summary>,
}

/// Conversations kept in a `RefCell`, scoped by site like the D1 store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: RefCell<BTreeMap<(String, String), Entry>>,
    unavailable: Cell<bool>,
    language_unavailable: Cell<bool>,
}

fn key(scope: Scope<'_>) -> (String, String) {
    (scope.site_id.into(), scope.conversation_id.into())
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every later call fail with `Unavailable` (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }

    /// Makes every later language update fail with `Unavailable` (or work again).
    pub fn set_language_unavailable(&self, unavailable: bool) {
        self.language_unavailable.set(unavailable);
    }

    /// Every message of a conversation, in order (empty when it does not exist).
    pub fn messages(&self, scope: Scope<'_>) -> Vec<StoredMessage> {
        self.entries
            .borrow()
            .get(&key(scope))
            .map(|e| e.messages.clone())
            .unwrap_or_default()
    }

    /// A conversation, if it exists.
    pub fn conversation(&self, scope: Scope<'_>) -> Option<Conversation> {
        self.entries
            .borrow()
            .get(&key(scope))
            .map(|e| e.conversation.clone())
    }

    /// A message's embedding status (`Pending` until set).
    pub fn embedding_status(&self, scope: Scope<'_>, message_id: &str) -> Option<EmbeddingStatus> {
        let entries = self.entries.borrow();
        let entry = entries.get(&key(scope))?;
        entry.messages.iter().any(|m| m.id == message_id).then(|| {
            entry
                .embedding
                .get(message_id)
                .copied()
                .unwrap_or(EmbeddingStatus::Pending)
        })
    }

    fn check(&self) -> Result<(), ServiceError> {
        if self.unavailable.get() {
            Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory store set unavailable",
            ))
        } else {
            Ok(())
        }
    }

    fn with_entry<T>(
        &self,
        scope: Scope<'_>,
        f: impl FnOnce(&mut Entry) -> Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        self.check()?;
        let mut entries = self.entries.borrow_mut();
        let entry = entries.get_mut(&key(scope)).ok_or_else(|| {
            ServiceError::new(
                ServiceErrorKind::Invalid,
                "no such conversation on this site",
            )
        })?;
        f(entry)
    }
}

impl ConversationStore for MemoryStore {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<(), ServiceError> {
        self.check()?;
        let mut entries = self.entries.borrow_mut();
        let key = key(conversation.scope());
        if entries.contains_key(&key) {
            return Err(ServiceError::new(
                ServiceErrorKind::Conflict,
                "conversation exists",
            ));
        }
        let entry = Entry {
            conversation: conversation.clone(),
            messages: Vec::new(),
            ids: BTreeSet::new(),
            embedding: BTreeMap::new(),
            summary: None,
        };
        entries.insert(key, entry);
        Ok(())
    }

    async fn load_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Conversation>, ServiceError> {
        self.check()?;
        Ok(self.conversation(scope))
    }

    async fn set_language(&self, scope: Scope<'_>, language: Language) -> Result<(), ServiceError> {
        if self.language_unavailable.get() {
            return Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "language updates set unavailable",
            ));
        }
        self.with_entry(scope, |entry| {
            entry.conversation.language = language;
            Ok(())
        })
    }

    async fn append_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<(), ServiceError> {
        self.with_entry(scope, |entry| {
            let at = entry.messages.partition_point(|m| m.seq < message.seq);
            let seq_taken = entry.messages.get(at).is_some_and(|m| m.seq == message.seq);
            if seq_taken || !entry.ids.insert(message.id.clone()) {
                return Err(ServiceError::new(
                    ServiceErrorKind::Conflict,
                    "sequence number or id taken",
                ));
            }
            entry.messages.insert(at, message.clone());
            Ok(())
        })
    }

    async fn load_recent_messages(
        &self,
        scope: Scope<'_>,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, ServiceError> {
        self.with_entry(scope, |entry| {
            let start = entry.messages.len().saturating_sub(limit);
            Ok(entry.messages[start..].to_vec())
        })
    }

    async fn set_embedding_status(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        status: EmbeddingStatus,
    ) -> Result<(), ServiceError> {
        self.with_entry(scope, |entry| {
            entry.embedding.insert(message_id.into(), status);
            Ok(())
        })
    }

    async fn load_summary(&self, scope: Scope<'_>) -> Result<Option<Summary>, ServiceError> {
        self.with_entry(scope, |entry| Ok(entry.summary.clone()))
    }

    async fn save_summary(&self, scope: Scope<'_>, summary: &Summary) -> Result<(), ServiceError> {
        self.with_entry(scope, |entry| {
            entry.summary = Some(summary.clone());
            Ok(())
        })
    }
}
