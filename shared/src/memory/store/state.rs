//! The in-memory store's state, constructor, the failures tests switch on, and reads for
//! assertions.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::entry::Remembered;
use super::{Entry, key};
use crate::conversation::{Conversation, EmbeddingStatus, Scope, StoredMessage, embedding_policy};
use crate::error::{ServiceError, ServiceErrorKind};

/// Conversations kept in a `RefCell`, scoped by site like the D1 store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    pub(super) entries: RefCell<BTreeMap<(String, String), Entry>>,
    pub(super) unavailable: Cell<bool>,
    pub(super) language_unavailable: Cell<bool>,
    pub(super) insert_unavailable: Cell<bool>,
    pub(super) insert_polls: Cell<u32>,
    /// With [`remember_turns`](MemoryStore::remember_turns): the last context each
    /// conversation's [`read_turn`](crate::boundary::ConversationStore::read_turn) found, and its window.
    pub(super) remembered: Option<RefCell<Remembered>>,
    pub(super) turn_reads: Cell<usize>,
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

    /// Makes every later [`insert_turn`](crate::boundary::ConversationStore::insert_turn) (a streamed turn's
    /// visitor message) fail with `Unavailable`, reads still working (or work again).
    pub fn set_insert_unavailable(&self, unavailable: bool) {
        self.insert_unavailable.set(unavailable);
    }

    /// Makes every later [`insert_turn`](crate::boundary::ConversationStore::insert_turn) let other work run
    /// `polls` times before it writes, as a database round trip does (0: at once).
    pub fn set_insert_polls(&self, polls: u32) {
        self.insert_polls.set(polls);
    }

    /// How many times a turn's context was read
    /// ([`read_turn`](crate::boundary::ConversationStore::read_turn), also within
    /// [`insert_checked_turn`](crate::boundary::ConversationStore::insert_checked_turn)).
    pub fn turn_reads(&self) -> usize {
        self.turn_reads.get()
    }

    /// A store that remembers what [`read_turn`](crate::boundary::ConversationStore::read_turn) found and
    /// offers it as [`cached_turn`](crate::boundary::ConversationStore::cached_turn), as the Worker's store
    /// does — even once out of date (a later `read_turn` refreshes it).
    pub fn remember_turns() -> Self {
        Self {
            remembered: Some(RefCell::default()),
            ..Self::default()
        }
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

    /// A message's embedding status: as the embedding policy set it when the message was
    /// stored, until the indexer sets it.
    pub fn embedding_status(&self, scope: Scope<'_>, message_id: &str) -> Option<EmbeddingStatus> {
        let entries = self.entries.borrow();
        let entry = entries.get(&key(scope))?;
        entry.messages.iter().any(|m| m.id == message_id).then(|| {
            entry.embedding.get(message_id).copied().unwrap_or_else(|| {
                let message = entry.messages.iter().find(|m| m.id == message_id);
                message.map_or(EmbeddingStatus::Pending, embedding_policy)
            })
        })
    }

    pub(super) fn check(&self) -> Result<(), ServiceError> {
        if self.unavailable.get() {
            Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory store set unavailable",
            ))
        } else {
            Ok(())
        }
    }

    pub(super) fn with_entry<T>(
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
