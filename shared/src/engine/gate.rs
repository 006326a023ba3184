//! Storing the visitor's message while the answer is already under way.
//!
//! A streamed turn without an idempotency key reads its history first, then stores the
//! visitor's message *and* runs the template's answer at the same time, so the model is
//! asked without waiting for the write. Until the message is stored the answer's events
//! are held back (the turn's `Started` must come first) and its store calls wait at a
//! [`Gate`]; if the message cannot be stored, the answer is dropped unfinished and the
//! turn fails as one that never started.

use alloc::vec::Vec;
use core::cell::RefCell;
use core::future::poll_fn;
use core::task::{Poll, Waker};

use super::contract::Platform;
use crate::boundary::{
    ChatModel, ChatSink, Clock, ConversationStore, EmbedQueue, Ids, KnowledgeState, LogEntry,
    LogQuery, Logger, ModelCall, NewTurn, RentalData, Reopening, TurnContext, TurnOpening,
    TurnResume,
};
use crate::chat::ChatEvent;
use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::{ChatModelError, ServiceError, ServiceErrorKind};
use crate::turn::{TurnEvent, TurnSink};

/// Whether the visitor's message is stored yet — and whether the answer's model has its
/// request yet, so the write can keep out of its way.
#[derive(Default)]
pub(super) struct Gate {
    state: RefCell<GateState>,
}

#[derive(Default)]
struct GateState {
    /// `None` while the write runs; then whether it stored the message.
    stored: Option<bool>,
    /// Whether the answer's model has its request, or the answer needs no model now.
    reached: bool,
    waiting: Vec<Waker>,
}

impl Gate {
    fn change(&self, change: impl FnOnce(&mut GateState)) {
        let waiting = {
            let mut state = self.state.borrow_mut();
            change(&mut state);
            core::mem::take(&mut state.waiting)
        };
        waiting.into_iter().for_each(Waker::wake);
    }

    /// Settles the gate: `stored` opens it, otherwise every waiting call fails.
    pub(super) fn settle(&self, stored: bool) {
        self.change(|state| state.stored = Some(stored));
    }

    /// The answer's model has its request (its response began, or it ended), or the
    /// answer is waiting for the write or done: the write may go.
    pub(super) fn reach(&self) {
        if !self.state.borrow().reached {
            self.change(|state| state.reached = true);
        }
    }

    /// Waits until [`reach`](Self::reach).
    pub(super) async fn reached(&self) {
        poll_fn(|cx| {
            let mut state = self.state.borrow_mut();
            if state.reached {
                return Poll::Ready(());
            }
            state.waiting.push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// Waits until the message is stored (the write may go at once: nothing else is
    /// running for it to keep out of the way of).
    async fn pass(&self) -> Result<(), ServiceError> {
        self.reach();
        poll_fn(|cx| {
            let mut state = self.state.borrow_mut();
            match state.stored {
                Some(true) => Poll::Ready(Ok(())),
                Some(false) => Poll::Ready(Err(ServiceError::new(
                    ServiceErrorKind::Unavailable,
                    "the visitor's message was not stored",
                ))),
                None => {
                    state.waiting.push(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

/// The turn's sink, holding events back until the turn has started.
pub(super) struct HeldSink<'s> {
    sink: &'s mut dyn TurnSink,
    /// `Some` until [`release`](Self::release).
    held: Option<Vec<TurnEvent>>,
}

impl<'s> HeldSink<'s> {
    pub(super) fn new(sink: &'s mut dyn TurnSink) -> RefCell<Self> {
        RefCell::new(Self {
            sink,
            held: Some(Vec::new()),
        })
    }

    /// Emits `started`, then what was held back; later events pass straight through.
    pub(super) fn release(&mut self, started: TurnEvent) {
        self.sink.emit(started);
        for event in self.held.take().unwrap_or_default() {
            self.sink.emit(event);
        }
    }

    /// Drops what was held back (an answer nobody is to see), giving the sink back.
    pub(super) fn discard(self) -> &'s mut dyn TurnSink {
        self.sink
    }
}

/// A [`TurnSink`] over a shared [`HeldSink`].
pub(super) struct Held<'a, 's>(pub(super) &'a RefCell<HeldSink<'s>>);

impl TurnSink for Held<'_, '_> {
    fn emit(&mut self, event: TurnEvent) {
        let mut inner = self.0.borrow_mut();
        match &mut inner.held {
            Some(held) => held.push(event),
            None => inner.sink.emit(event),
        }
    }
}

/// The platform as the answer sees it while the visitor's message is being stored: the
/// store waits at the gate, the model tells it when it has the request; everything else is
/// the platform's own.
pub(super) struct Gated<'a, P: Platform> {
    platform: &'a P,
    model: GatedModel<'a, P::Model>,
    store: GatedStore<'a, P::Store>,
}

impl<'a, P: Platform> Gated<'a, P> {
    pub(super) fn new(platform: &'a P, gate: &'a Gate) -> Self {
        Self {
            platform,
            model: GatedModel {
                model: platform.model(),
                gate,
            },
            store: GatedStore {
                store: platform.store(),
                gate,
            },
        }
    }
}

impl<'a, P: Platform> Platform for Gated<'a, P> {
    type Model = GatedModel<'a, P::Model>;
    type Store = GatedStore<'a, P::Store>;
    type Embedder = P::Embedder;
    type Index = P::Index;
    type Records = P::Records;
    type Timer = P::Timer;
    type Sql = P::Sql;
    type Search = P::Search;
    type Cache = P::Cache;

    fn model(&self) -> &Self::Model {
        &self.model
    }
    fn store(&self) -> &Self::Store {
        &self.store
    }
    fn embedder(&self) -> &P::Embedder {
        self.platform.embedder()
    }
    fn index(&self) -> &P::Index {
        self.platform.index()
    }
    fn records(&self) -> &P::Records {
        self.platform.records()
    }
    fn timer(&self) -> &P::Timer {
        self.platform.timer()
    }
    fn sql(&self) -> &P::Sql {
        self.platform.sql()
    }
    fn search(&self) -> &P::Search {
        self.platform.search()
    }
    fn cache(&self) -> &P::Cache {
        self.platform.cache()
    }
    fn ids(&self) -> &dyn Ids {
        self.platform.ids()
    }
    fn clock(&self) -> &dyn Clock {
        self.platform.clock()
    }
    fn queue(&self) -> &dyn EmbedQueue {
        self.platform.queue()
    }
    fn logger(&self) -> &dyn Logger {
        self.platform.logger()
    }
    fn rental(&self) -> Option<&dyn RentalData> {
        self.platform.rental()
    }
    fn data_sets(&self) -> Option<&dyn crate::boundary::DataSets> {
        self.platform.data_sets()
    }
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        self.platform.search_logs(site_id, query).await
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        self.platform.knowledge_state(site_id).await
    }
}

/// The platform's chat model, telling the [`Gate`] once the model has the request.
pub(super) struct GatedModel<'a, M> {
    model: &'a M,
    gate: &'a Gate,
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
pub(super) struct GatedStore<'a, S> {
    store: &'a S,
    gate: &'a Gate,
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
