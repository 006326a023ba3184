//! Concurrency inside a node, and a minimal executor for tests and native tools.
//!
//! [`join_all`] runs a stage's tasks concurrently on the current thread and merges their
//! outputs in order (seed 003's planned stages). [`block_on`] drives a future to completion
//! by polling it in a loop; it is meant for tests, benchmarks and native tools whose
//! boundaries complete without waiting (the Worker has its own executor).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

enum Slot<F: Future> {
    Running(Pin<Box<F>>),
    Done(F::Output),
    Taken,
}

/// The future returned by [`join_all`].
#[must_use = "futures do nothing unless awaited"]
pub struct JoinAll<F: Future> {
    slots: Vec<Slot<F>>,
}

// Outputs are only moved, never pinned; the running futures are pinned in their boxes.
impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> core::fmt::Debug for JoinAll<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let running = self
            .slots
            .iter()
            .filter(|slot| matches!(slot, Slot::Running(_)))
            .count();
        f.debug_struct("JoinAll")
            .field("tasks", &self.slots.len())
            .field("running", &running)
            .finish()
    }
}

/// Runs `futures` concurrently; resolves to their outputs, in the order given.
pub fn join_all<I>(futures: I) -> JoinAll<I::Item>
where
    I: IntoIterator,
    I::Item: Future,
{
    JoinAll {
        slots: futures
            .into_iter()
            .map(|future| Slot::Running(Box::pin(future)))
            .collect(),
    }
}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut all_done = true;
        for slot in &mut this.slots {
            if let Slot::Running(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => *slot = Slot::Done(output),
                    Poll::Pending => all_done = false,
                }
            }
        }
        if !all_done {
            return Poll::Pending;
        }
        let outputs = this
            .slots
            .iter_mut()
            .filter_map(|slot| match core::mem::replace(slot, Slot::Taken) {
                Slot::Done(output) => Some(output),
                Slot::Running(_) | Slot::Taken => None,
            })
            .collect();
        Poll::Ready(outputs)
    }
}

/// Drives `future` to completion on the current thread, polling it in a loop.
///
/// For tests, benchmarks and native tools; a future waiting on real I/O would spin.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = core::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        core::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pending `n` times, then ready with `value`; logs each poll.
    struct Yielding<'a> {
        left: u32,
        value: u32,
        log: &'a core::cell::RefCell<Vec<u32>>,
    }

    impl Future for Yielding<'_> {
        type Output = u32;
        fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<u32> {
            self.log.borrow_mut().push(self.value);
            if self.left == 0 {
                Poll::Ready(self.value)
            } else {
                self.left -= 1;
                Poll::Pending
            }
        }
    }

    #[test]
    fn join_all_interleaves_and_keeps_order() {
        let log = core::cell::RefCell::new(Vec::new());
        let tasks = [(2, 10), (0, 20), (1, 30)].map(|(left, value)| Yielding {
            left,
            value,
            log: &log,
        });
        assert_eq!(block_on(join_all(tasks)), [10, 20, 30]);
        // All three started before the first finished: they ran concurrently.
        assert_eq!(log.borrow()[..3], [10, 20, 30]);
    }

    #[test]
    fn join_all_of_nothing_is_ready() {
        let none: [core::future::Ready<u8>; 0] = [];
        assert!(block_on(join_all(none)).is_empty());
    }
}
