//! Storing the visitor's message while the answer is already under way.
//!
//! A streamed turn without an idempotency key reads its history first, then stores the
//! visitor's message *and* runs the template's answer at the same time, so the model is
//! asked without waiting for the write. Until the message is stored the answer's events
//! are held back (the turn's `Started` must come first) and its store calls wait at a
//! [`Gate`]; if the message cannot be stored, the answer is dropped unfinished and the
//! turn fails as one that never started.
//!
//! The gated model and store are in `wrapped`.

use alloc::vec::Vec;
use core::cell::RefCell;
use core::future::poll_fn;
use core::task::{Poll, Waker};

use super::contract::Platform;
use crate::boundary::{Clock, EmbedQueue, Ids, Logger};
use crate::error::{ServiceError, ServiceErrorKind};
use crate::turn::{Started, TurnEvent, TurnSink};

mod wrapped;

use wrapped::{GatedModel, GatedStore};

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
    /// A gate already open: the visitor's message is stored before the answer starts.
    /// Every answer runs over [`Gated`] (an open gate lets every call straight through),
    /// so each template's answer is compiled once, not once per platform type.
    pub(super) fn open() -> Self {
        Self {
            state: RefCell::new(GateState {
                stored: Some(true),
                reached: true,
                waiting: Vec::new(),
            }),
        }
    }

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
    pub(super) fn release(&mut self, started: &Started) {
        started.announce(self.sink);
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
    type Timer = P::Timer;

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
    fn timer(&self) -> &P::Timer {
        self.platform.timer()
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
}
