//! One planned stage: its tasks run concurrently on the current thread.
//!
//! At most [`StageConfig::max_concurrent`] tasks are in flight (Workers allow 6
//! simultaneous outgoing connections per request; the default 5 leaves one for the turn).
//! Each attempt of a task is bounded by [`StageConfig::timeout_ms`] on the
//! [`Timer`] boundary; a failed or timed-out attempt is retried up to
//! [`StageConfig::retries`] times. A task that still fails is a [`TaskOutcome`] in the
//! stage's result, which is then [`partial`](StageOutcome::partial): the stage never fails
//! as a whole. Every task gets a [`Progress`] handle on the turn's sink and can report
//! while the others run. No threads: the tasks are futures polled in turn.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt;
use core::future::{Future, poll_fn};
use core::task::Poll;

use super::with_timeout;
use crate::boundary::Timer;
use crate::turn::{TurnEvent, TurnSink};

/// A stage's bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageConfig {
    /// Tasks in flight at once (default 5; at least 1).
    pub max_concurrent: usize,
    /// One attempt's timeout (default 30 000 ms, seed 003 `timeout_per_agent_ms`).
    pub timeout_ms: u64,
    /// Further attempts after a failed one (default 3, seed 003 `max_retries`).
    pub retries: u32,
}

impl Default for StageConfig {
    fn default() -> Self {
        Self {
            max_concurrent: 5,
            timeout_ms: 30_000,
            retries: 3,
        }
    }
}

/// A cloneable handle through which tasks report progress into the turn's sink while the
/// stage runs. The sink is borrowed only for the length of one report.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    sink: &'a RefCell<dyn TurnSink + 'a>,
}

impl fmt::Debug for Progress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress").finish_non_exhaustive()
    }
}

impl<'a> Progress<'a> {
    /// A handle on `sink`.
    pub fn new(sink: &'a RefCell<dyn TurnSink + 'a>) -> Self {
        Self { sink }
    }

    /// Emits [`TurnEvent::Progress`].
    pub fn report(&self, message: impl Into<String>, percentage: Option<f32>, stage: Option<&str>) {
        self.sink.borrow_mut().emit(TurnEvent::Progress {
            message: message.into(),
            percentage,
            stage: stage.map(Into::into),
        });
    }
}

/// What a task attempt is given.
#[derive(Debug, Clone, Copy)]
pub struct TaskContext<'a> {
    /// The task's position in the stage.
    pub index: usize,
    /// The attempt, from 1.
    pub attempt: u32,
    /// Where to report progress.
    pub progress: Progress<'a>,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome<T, E> {
    /// It produced a result.
    Done(T),
    /// Its last attempt failed with this error.
    Failed(E),
    /// Its last attempt ran out of time.
    TimedOut,
}

/// One task's result.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskResult<T, E> {
    /// The task's position in the stage.
    pub index: usize,
    /// Attempts made.
    pub attempts: u32,
    /// How it ended.
    pub outcome: TaskOutcome<T, E>,
}

/// A stage's results, in task order.
#[derive(Debug, Clone, PartialEq)]
pub struct StageOutcome<T, E> {
    /// One per task, in the order given.
    pub tasks: Vec<TaskResult<T, E>>,
    /// Whether some task did not produce a result.
    pub partial: bool,
}

impl<T, E> StageOutcome<T, E> {
    /// The results that were produced, with their task index.
    pub fn results(&self) -> impl Iterator<Item = (usize, &T)> {
        self.tasks.iter().filter_map(|t| match &t.outcome {
            TaskOutcome::Done(value) => Some((t.index, value)),
            TaskOutcome::Failed(_) | TaskOutcome::TimedOut => None,
        })
    }
}

/// One task with its retries and timeouts.
async fn drive<'a, I, T, E, Fut, R>(
    timer: &impl Timer,
    config: &StageConfig,
    index: usize,
    input: &'a I,
    run: &R,
    progress: Progress<'a>,
) -> TaskResult<T, E>
where
    R: Fn(&'a I, TaskContext<'a>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        let context = TaskContext {
            index,
            attempt,
            progress,
        };
        let outcome = match with_timeout(timer, config.timeout_ms, run(input, context)).await {
            Some(Ok(value)) => TaskOutcome::Done(value),
            Some(Err(error)) => TaskOutcome::Failed(error),
            None => TaskOutcome::TimedOut,
        };
        if matches!(outcome, TaskOutcome::Done(_)) || attempt > config.retries {
            return TaskResult {
                index,
                attempts: attempt,
                outcome,
            };
        }
    }
}

/// Runs `run` on every input concurrently (at most [`StageConfig::max_concurrent`] at
/// once, started in input order), each attempt under the timeout, failed attempts
/// retried. Progress goes to `sink` through each task's [`TaskContext::progress`].
///
/// A turn holding `&mut dyn TurnSink` lends it to the stage as a closure in a `RefCell`:
/// ```
/// # #[cfg(feature = "memory")] {
/// use core::cell::RefCell;
/// use concierge_core::agent::{StageConfig, run_stage};
/// use concierge_core::memory::MemoryTimer;
/// use concierge_core::turn::{TurnEvent, TurnSink};
///
/// let mut events: Vec<TurnEvent> = Vec::new();
/// let sink: &mut dyn TurnSink = &mut events;
/// let timer = MemoryTimer::new();
/// let queries = ["giá", "bảo hành"];
/// let shared = RefCell::new(|event| sink.emit(event));
/// let outcome = timer.run(run_stage(&timer, &StageConfig::default(), &queries, |q, ctx| async move {
///     ctx.progress.report(*q, None, Some("executing_task"));
///     Ok::<_, ()>(q.len())
/// }, &shared));
/// assert!(!outcome.partial);
/// drop(shared);
/// assert_eq!(events.len(), 2);
/// # }
/// ```
pub async fn run_stage<'a, I, T, E, Fut, R>(
    timer: &impl Timer,
    config: &StageConfig,
    inputs: &'a [I],
    run: R,
    sink: &'a RefCell<dyn TurnSink + 'a>,
) -> StageOutcome<T, E>
where
    R: Fn(&'a I, TaskContext<'a>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let progress = Progress::new(sink);
    let limit = config.max_concurrent.max(1);
    let run = &run;
    let start = |index: usize| Box::pin(drive(timer, config, index, &inputs[index], run, progress));
    let mut running: Vec<_> = (0..inputs.len().min(limit))
        .map(|i| Some(start(i)))
        .collect();
    let mut next = running.len();
    let mut done: Vec<Option<TaskResult<T, E>>> = (0..inputs.len()).map(|_| None).collect();
    poll_fn(|cx| {
        let mut any_running = false;
        for slot in &mut running {
            // A finished slot takes the next task, which is polled at once.
            while let Some(task) = slot {
                match task.as_mut().poll(cx) {
                    Poll::Ready(result) => {
                        let index = result.index;
                        done[index] = Some(result);
                        *slot = (next < inputs.len()).then(|| start(next));
                        next += 1;
                    }
                    Poll::Pending => {
                        any_running = true;
                        break;
                    }
                }
            }
        }
        if any_running {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    let tasks: Vec<_> = done.into_iter().flatten().collect();
    let partial = tasks
        .iter()
        .any(|t| !matches!(t.outcome, TaskOutcome::Done(_)));
    StageOutcome { tasks, partial }
}
