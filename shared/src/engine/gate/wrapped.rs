//! The model and store an answer sees while the visitor's message is being stored: the
//! model reaches the [`Gate`] at its first sign of life, every store call waits at it.

use alloc::vec::Vec;

use crate::boundary::{
    ChatModel, ChatSink, ConversationStore, ModelCall, NewTurn, Reopening, TurnContext,
    TurnOpening, TurnResume,
};
use crate::chat::ChatEvent;
use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::{ChatModelError, ServiceError};

use super::Gate;

/// The platform's chat model, telling the [`Gate`] once the model has the request.
pub(in crate::engine) struct GatedModel<'a, M> {
    pub(super) model: &'a M,
    pub(super) gate: &'a Gate,
}

impl<M: ChatModel> ChatModel for GatedModel<'_, M> {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let mut reaching = Reaching {
            sink,
            gate: self.gate,
        };
        let result = self.model.stream(call, &mut reaching).await;
        self.gate.reach();
        result
    }
}

/// A model's sink that reaches the gate at the model's first sign of life.
struct Reaching<'a, 's> {
    sink: &'s mut dyn ChatSink,
    gate: &'a Gate,
}

impl ChatSink for Reaching<'_, '_> {
    fn event(&mut self, event: ChatEvent) {
        self.gate.reach();
        self.sink.event(event);
    }

    fn answering(&mut self) {
        self.gate.reach();
        self.sink.answering();
    }
}

/// A store whose every call first waits for the visitor's message to be stored.
pub(in crate::engine) struct GatedStore<'a, S> {
    pub(super) store: &'a S,
    pub(super) gate: &'a Gate,
}

impl<S: ConversationStore> ConversationStore for GatedStore<'_, S> {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<(), ServiceError> {
        self.gate.pass().await?;
        self.store.create_conversation(conversation).await
    }

    async fn load_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Conversation>, ServiceError> {
        self.gate.pass().await?;
        self.store.load_conversation(scope).await
    }

    async fn set_language(&self, scope: Scope<'_>, language: Language) -> Result<(), ServiceError> {
        self.gate.pass().await?;
        self.store.set_language(scope, language).await
    }

    async fn append_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        self.gate.pass().await?;
        self.store.append_message(scope, message).await
    }

    async fn append_reply(
        &self,
        scope: Scope<'_>,
        reply_to: &str,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        self.gate.pass().await?;
        self.store.append_reply(scope, reply_to, message).await
    }

    async fn start_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError> {
        self.gate.pass().await?;
        self.store.start_turn(scope, turn, window).await
    }

    async fn read_turn(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError> {
        self.gate.pass().await?;
        self.store.read_turn(scope, window).await
    }

    async fn insert_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
    ) -> Result<Option<u64>, ServiceError> {
        self.gate.pass().await?;
        self.store.insert_turn(scope, turn).await
    }

    fn cached_turn(&self, scope: Scope<'_>, window: usize) -> Option<TurnContext> {
        self.store.cached_turn(scope, window)
    }

    async fn insert_checked_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<(u64, TurnContext)>, ServiceError> {
        self.gate.pass().await?;
        self.store.insert_checked_turn(scope, turn, window).await
    }

    async fn resume_turn(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        claim: Option<&str>,
        window: usize,
    ) -> Result<Option<TurnResume>, ServiceError> {
        self.gate.pass().await?;
        self.store
            .resume_turn(scope, message_id, claim, window)
            .await
    }

    async fn reopen_last_turn(
        &self,
        scope: Scope<'_>,
        expected: Option<&str>,
        claim: &str,
        window: usize,
    ) -> Result<Option<Reopening>, ServiceError> {
        self.gate.pass().await?;
        self.store
            .reopen_last_turn(scope, expected, claim, window)
            .await
    }

    async fn mark_answer_failed(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        reply_id: &str,
        code: &str,
    ) -> Result<(), ServiceError> {
        self.gate.pass().await?;
        self.store
            .mark_answer_failed(scope, message_id, reply_id, code)
            .await
    }

    async fn load_recent_messages(
        &self,
        scope: Scope<'_>,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, ServiceError> {
        self.gate.pass().await?;
        self.store.load_recent_messages(scope, limit).await
    }

    async fn set_embedding_status(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        status: EmbeddingStatus,
    ) -> Result<(), ServiceError> {
        self.gate.pass().await?;
        self.store
            .set_embedding_status(scope, message_id, status)
            .await
    }

    async fn load_summary(&self, scope: Scope<'_>) -> Result<Option<Summary>, ServiceError> {
        self.gate.pass().await?;
        self.store.load_summary(scope).await
    }

    async fn save_summary(&self, scope: Scope<'_>, summary: &Summary) -> Result<(), ServiceError> {
        self.gate.pass().await?;
        self.store.save_summary(scope, summary).await
    }

    async fn compress_messages(
        &self,
        scope: Scope<'_>,
        keep_recent: usize,
        above: usize,
        delete: bool,
    ) -> Result<usize, ServiceError> {
        self.gate.pass().await?;
        self.store
            .compress_messages(scope, keep_recent, above, delete)
            .await
    }
}
