//! A [`Timer`] over virtual time.

use alloc::collections::BTreeMap;
use core::cell::{Cell, RefCell};
use core::future::{Future, poll_fn};
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use crate::boundary::Timer;

/// A timer over virtual time, for deterministic tests of timeouts and concurrency.
///
/// Time only moves in [`run`](Self::run): whenever the future it drives is waiting, the
/// clock jumps to the earliest deadline of a pending [`sleep`](Timer::sleep). So sleeps
/// end in deadline order (ties in the order they began), and a test's scripted delays
/// cost no real time.
#[derive(Debug, Default)]
pub struct MemoryTimer {
    now: Cell<u64>,
    next_id: Cell<u64>,
    /// Pending sleeps: id → deadline.
    pending: RefCell<BTreeMap<u64, u64>>,
}

impl MemoryTimer {
    /// A timer at virtual time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The virtual time, in milliseconds since the timer was made.
    pub fn now_ms(&self) -> u64 {
        self.now.get()
    }

    /// Drives `future` to completion, advancing virtual time whenever it waits.
    ///
    /// # Panics
    /// If the future waits while no sleep is pending: nothing could ever wake it.
    pub fn run<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
            let next = self.pending.borrow().values().copied().min();
            match next {
                Some(deadline) => self.now.set(self.now.get().max(deadline)),
                None => panic!("MemoryTimer::run: the future waits, but no sleep is pending"),
            }
        }
    }
}

/// Removes a sleep's registration when it ends or is dropped (e.g. by a timeout).
struct Registration<'a> {
    timer: &'a MemoryTimer,
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.timer.pending.borrow_mut().remove(&self.id);
    }
}

impl Timer for MemoryTimer {
    async fn sleep(&self, ms: u64) {
        let deadline = self.now.get().saturating_add(ms);
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.pending.borrow_mut().insert(id, deadline);
        let _registration = Registration { timer: self, id };
        poll_fn(|_| {
            if self.now.get() >= deadline {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}
