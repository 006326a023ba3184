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
use core::future::{Future, poll_fn};
use core::pin::pin;
use core::task::{Poll, Waker};

use super::Platform;
use crate::boundary::{
    Clock, ConversationStore, EmbedQueue, Ids, KnowledgeState, LogEntry, LogQuery, Logger, NewTurn,
    RentalData, TurnContext, TurnOpening, TurnResume,
};
use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::{ServiceError, ServiceErrorKind};
use crate::turn::{TurnEvent, TurnSink};

/// Whether the visitor's message is stored yet.
#[derive(Default)]
pub(super) struct Gate {
    state: RefCell<GateState>,
}

#[derive(Default)]
struct GateState {
    /// `None` while the write runs; then whether it stored the message.
    stored: Option<bool>,
    waiting: Vec<Waker>,
}

impl Gate {
    /// Settles the gate: `stored` opens it, otherwise every waiting call fails.
    pub(super) fn settle(&self, stored: bool) {
        let waiting = {
            let mut state = self.state.borrow_mut();
            state.stored = Some(stored);
            core::mem::take(&mut state.waiting)
        };
        waiting.into_iter().for_each(Waker::wake);
    }

    /// Waits until the message is stored.
    async fn pass(&self) -> Result<(), ServiceError> {
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

/// Runs `store` and `answer` together. `store`'s failure ends both at once (the answer is
/// dropped unfinished); otherwise both run to their end.
///
/// The answer is polled first: its model request is on its way before the write is.
pub(super) async fn alongside<S, A, T, E, R>(store: S, answer: A) -> Result<(T, R), E>
where
    S: Future<Output = Result<T, E>>,
    A: Future<Output = R>,
{
    let (mut store, mut answer) = (pin!(store), pin!(answer));
    let (mut stored, mut answered) = (None, None);
    poll_fn(|cx| {
        if answered.is_none()
            && let Poll::Ready(result) = answer.as_mut().poll(cx)
        {
            answered = Some(result);
        }
        if stored.is_none()
            && let Poll::Ready(result) = store.as_mut().poll(cx)
        {
            match result {
                Ok(value) => stored = Some(value),
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
        // The write just opened the gate: the answer may go on at once.
        if stored.is_some()
            && answered.is_none()
            && let Poll::Ready(result) = answer.as_mut().poll(cx)
        {
            answered = Some(result);
        }
        match (stored.take(), answered.take()) {
            (Some(value), Some(result)) => Poll::Ready(Ok((value, result))),
            (value, result) => {
                (stored, answered) = (value, result);
                Poll::Pending
            }
        }
    })
    .await
}

/// Runs `a` and `b` together to both their ends.
pub(super) async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut a_out, mut b_out) = (None, None);
    poll_fn(|cx| {
        if a_out.is_none()
            && let Poll::Ready(out) = a.as_mut().poll(cx)
        {
            a_out = Some(out);
        }
        if b_out.is_none()
            && let Poll::Ready(out) = b.as_mut().poll(cx)
        {
            b_out = Some(out);
        }
        match (a_out.take(), b_out.take()) {
            (Some(a), Some(b)) => Poll::Ready((a, b)),
            (a, b) => {
                (a_out, b_out) = (a, b);
                Poll::Pending
            }
        }
    })
    .await
}

/// The platform as the answer sees it while the visitor's message is being stored: the
/// store waits at the gate; everything else is the platform's own.
pub(super) struct Gated<'a, P: Platform> {
    platform: &'a P,
    store: GatedStore<'a, P::Store>,
}

impl<'a, P: Platform> Gated<'a, P> {
    pub(super) fn new(platform: &'a P, gate: &'a Gate) -> Self {
        Self {
            platform,
            store: GatedStore {
                store: platform.store(),
                gate,
            },
        }
    }
}

impl<'a, P: Platform> Platform for Gated<'a, P> {
    type Model = P::Model;
    type Store = GatedStore<'a, P::Store>;
    type Embedder = P::Embedder;
    type Index = P::Index;
    type Records = P::Records;
    type Timer = P::Timer;
    type Sql = P::Sql;
    type Search = P::Search;
    type Cache = P::Cache;

    fn model(&self) -> &P::Model {
        self.platform.model()
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
