//! Engine building blocks for tool-using and planning templates.
//!
//! - [`react`]: a bounded agent ⇄ tools loop over the [`ChatModel`](crate::boundary::ChatModel)
//!   boundary (seed 001's data agent): tool calls run with per-tool timeouts, their errors
//!   are fed back to the model, and a retry budget and a step cap end the loop with a typed
//!   [`ReactEnd`] the template turns into a sentence.
//! - [`tool`]: the [`Tool`] trait and the [`ToolRegistry`] a loop offers the model.
//! - [`stage`]: the tasks of one planned stage run concurrently on the current thread
//!   (seed 003), with a concurrency limit, per-task timeouts and retries, and a
//!   [`Progress`] handle every task can report through while the others run. A failed
//!   task is a partial result, not a failed stage.
//!
//! Waiting goes through the [`Timer`](crate::boundary::Timer) boundary, so all of it runs
//! unchanged in the Worker and, with virtual time, in tests.

pub mod react;
pub mod stage;
pub mod tool;

pub use react::{ReactConfig, ReactEnd, ReactOutcome, run_react};
pub use stage::{
    Progress, StageConfig, StageOutcome, TaskContext, TaskOutcome, TaskResult, run_stage,
};
pub use tool::{Tool, ToolError, ToolFuture, ToolRegistry};

use core::future::{Future, poll_fn};
use core::pin::pin;
use core::task::Poll;

use crate::boundary::Timer;

/// Runs `future` for at most `ms` milliseconds of `timer`: `None` when time ran out first
/// (the future is dropped, unfinished).
pub async fn with_timeout<T: Timer, F: Future>(timer: &T, ms: u64, future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    let mut sleep = pin!(timer.sleep(ms));
    poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}
