//! An in-memory [`ConversationStore`]: its conversations are in `entry`, its state,
//! constructor, test switches and reads in `state`.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::future::poll_fn;
use core::task::Poll;

use crate::boundary::{
    ConversationStore, NewTurn, Reopening, TurnContext, TurnOpening, TurnResume, TurnStart,
};
use crate::conversation::{
    ANSWER_FAILED, Conversation, EmbeddingStatus, Language, Role, Scope, StoredMessage, Summary,
};
use crate::error::{ServiceError, ServiceErrorKind};

mod entry;
mod state;

use entry::{Entry, Turn, key};
pub use state::MemoryStore;

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
            turns: BTreeMap::new(),
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
    ) -> Result<u64, ServiceError> {
        self.with_entry(scope, |entry| entry.append(message).map(|m| m.seq))
    }

    async fn append_reply(
        &self,
        scope: Scope<'_>,
        reply_to: &str,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        self.with_entry(scope, |entry| {
            if entry.turns.get(reply_to).map(|t| t.reply_id.as_str()) != Some(&message.id) {
                return Err(ServiceError::new(
                    ServiceErrorKind::Conflict,
                    "the turn is no longer answered under this id",
                ));
            }
            let seq = entry.append(message)?.seq;
            if !message.is_incomplete()
                && let Some(m) = entry.messages.iter_mut().find(|m| m.id == reply_to)
            {
                m.metadata.remove(ANSWER_FAILED);
            }
            Ok(seq)
        })
    }

    async fn start_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError> {
        self.check()?;
        let mut entries = self.entries.borrow_mut();
        let Some(entry) = entries.get_mut(&key(scope)) else {
            return Ok(None);
        };
        if let Some(wanted) = turn.idempotency_key {
            let repeated = entry
                .turns
                .iter()
                .find(|(_, t)| t.idempotency_key.as_deref() == Some(wanted))
                .and_then(|(id, _)| entry.message(id));
            if let Some(message) = repeated {
                return Ok(Some(TurnOpening::Repeated(message.clone())));
            }
        }
        let start = entry.messages.len().saturating_sub(window);
        let history = entry.messages[start..].to_vec();
        let message = entry.append(&turn.message)?;
        entry.turns.insert(
            message.id.clone(),
            Turn {
                reply_id: turn.reply_id.into(),
                idempotency_key: turn.idempotency_key.map(Into::into),
            },
        );
        Ok(Some(TurnOpening::Started(TurnStart {
            conversation: entry.conversation.clone(),
            history,
            message,
            retrievable: true,
        })))
    }

    async fn read_turn(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError> {
        self.check()?;
        self.turn_reads.set(self.turn_reads.get() + 1);
        let entries = self.entries.borrow();
        let Some(entry) = entries.get(&key(scope)) else {
            return Ok(None);
        };
        let start = entry.messages.len().saturating_sub(window);
        let context = TurnContext {
            conversation: entry.conversation.clone(),
            history: entry.messages[start..].to_vec(),
            retrievable: true,
        };
        if let Some(remembered) = &self.remembered {
            (remembered.borrow_mut()).insert(key(scope), (window, context.clone()));
        }
        Ok(Some(context))
    }

    fn cached_turn(&self, scope: Scope<'_>, window: usize) -> Option<TurnContext> {
        let remembered = self.remembered.as_ref()?.borrow();
        let (read_with, context) = remembered.get(&key(scope))?;
        (*read_with == window).then(|| context.clone())
    }

    async fn insert_checked_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<(u64, TurnContext)>, ServiceError> {
        let remembered = self.cached_turn(scope, window);
        let Some(context) = self.read_turn(scope, window).await? else {
            return Ok(None);
        };
        // Reading here is part of the write: what was remembered stays as it was.
        if let (Some(memory), Some(before)) = (&self.remembered, remembered) {
            memory.borrow_mut().insert(key(scope), (window, before));
        }
        Ok(self
            .insert_turn(scope, turn)
            .await?
            .map(|seq| (seq, context)))
    }

    async fn insert_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
    ) -> Result<Option<u64>, ServiceError> {
        self.check()?;
        let mut polls = self.insert_polls.get();
        poll_fn(|cx| {
            if polls == 0 {
                return Poll::Ready(());
            }
            polls -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await;
        if self.insert_unavailable.get() {
            return Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "message writes set unavailable",
            ));
        }
        let mut entries = self.entries.borrow_mut();
        let Some(entry) = entries.get_mut(&key(scope)) else {
            return Ok(None);
        };
        if let Some(wanted) = turn.idempotency_key
            && entry
                .turns
                .values()
                .any(|t| t.idempotency_key.as_deref() == Some(wanted))
        {
            return Err(ServiceError::new(
                ServiceErrorKind::Conflict,
                "idempotency key already used in this conversation",
            ));
        }
        let message = entry.append(&turn.message)?;
        entry.turns.insert(
            message.id.clone(),
            Turn {
                reply_id: turn.reply_id.into(),
                idempotency_key: turn.idempotency_key.map(Into::into),
            },
        );
        Ok(Some(message.seq))
    }

    async fn resume_turn(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        claim: Option<&str>,
        window: usize,
    ) -> Result<Option<TurnResume>, ServiceError> {
        self.check()?;
        let mut entries = self.entries.borrow_mut();
        let Some(entry) = entries.get_mut(&key(scope)) else {
            return Ok(None);
        };
        let Some(turn) = entry.turns.get(message_id).cloned() else {
            return Ok(None);
        };
        let mut reply_id = turn.reply_id;
        if let Some(claim) = claim.filter(|_| !entry.answered(&reply_id)) {
            reply_id = claim.into();
            if let Some(t) = entry.turns.get_mut(message_id) {
                t.reply_id = reply_id.clone();
            }
            if let Some(m) = entry.messages.iter_mut().find(|m| m.id == message_id) {
                m.metadata.remove(ANSWER_FAILED);
            }
        }
        let Some(message) = entry.message(message_id).filter(|m| m.role == Role::User) else {
            return Ok(None);
        };
        Ok(Some(TurnResume {
            start: TurnStart {
                conversation: entry.conversation.clone(),
                history: entry.history_before(message.seq, window),
                message: message.clone(),
                retrievable: true,
            },
            reply: entry.message(&reply_id).cloned(),
            reply_id,
        }))
    }

    async fn reopen_last_turn(
        &self,
        scope: Scope<'_>,
        expected: Option<&str>,
        claim: &str,
        window: usize,
    ) -> Result<Option<Reopening>, ServiceError> {
        self.check()?;
        if let Some(remembered) = &self.remembered {
            remembered.borrow_mut().remove(&key(scope));
        }
        let mut entries = self.entries.borrow_mut();
        let Some(entry) = entries.get_mut(&key(scope)) else {
            return Ok(None);
        };
        let Some(message) = entry.messages.iter().rev().find(|m| m.role == Role::User) else {
            return Ok(Some(Reopening::NotLast));
        };
        let (message_id, seq) = (message.id.clone(), message.seq);
        let failed = message.metadata.contains_key(ANSWER_FAILED);
        let Some(turn) = entry.turns.get(&message_id).cloned() else {
            return Ok(Some(Reopening::NotLast));
        };
        let reply = entry.message(&turn.reply_id).map(|m| m.id.clone());
        let later = entry
            .messages
            .iter()
            .any(|m| m.seq > seq && Some(&m.id) != reply.as_ref());
        let named = expected.is_none_or(|e| e == message_id || Some(e) == reply.as_deref());
        if !named {
            return Ok(Some(Reopening::NotLast));
        }
        if entry
            .messages
            .iter()
            .max_by_key(|m| m.seq)
            .is_some_and(|m| m.role == Role::Assistant && m.kind.is_fixed())
        {
            return Ok(Some(Reopening::Fixed));
        }
        if later {
            return Ok(Some(Reopening::NotLast));
        }
        if reply.is_none() && !failed {
            return Ok(Some(Reopening::InProgress));
        }
        if let Some(reply) = &reply {
            entry.messages.retain(|m| &m.id != reply);
            entry.embedding.remove(reply);
        }
        if let Some(t) = entry.turns.get_mut(&message_id) {
            t.reply_id = claim.into();
        }
        let Some(message) = entry.messages.iter_mut().find(|m| m.id == message_id) else {
            return Ok(Some(Reopening::NotLast));
        };
        message.metadata.remove(ANSWER_FAILED);
        let message = message.clone();
        Ok(Some(Reopening::Reopened {
            resume: Box::new(TurnResume {
                start: TurnStart {
                    conversation: entry.conversation.clone(),
                    history: entry.history_before(message.seq, window),
                    message,
                    retrievable: true,
                },
                reply_id: claim.into(),
                reply: None,
            }),
            replaced: reply,
        }))
    }

    async fn mark_answer_failed(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        reply_id: &str,
        code: &str,
    ) -> Result<(), ServiceError> {
        self.with_entry(scope, |entry| {
            let current = entry.turns.get(message_id).map(|t| t.reply_id.as_str());
            if current != Some(reply_id) || entry.answered(reply_id) {
                return Ok(());
            }
            if let Some(m) = entry.messages.iter_mut().find(|m| m.id == message_id) {
                m.metadata.insert(ANSWER_FAILED.into(), code.into());
            }
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
