//! Node 3 as stages: the plan's stages in order, each as two concurrent phases on the
//! engine's [`run_stage`] (retrieval tasks first, then summary/math tasks fed by the
//! same agent's earlier answers), with the seed's progress events (§9.2).

use alloc::format;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::deps::KnowledgePorts;
use super::exec::{Exec, TaskDone, TaskFailure, TaskInput};
use super::output::task_percentage;
use super::plan::{Plan, PlannedTask};
use super::resolve::AgentAnswer;
use crate::agent::{StageConfig, TaskOutcome, run_stage};
use crate::engine::Platform;
use crate::turn::TurnSink;

/// Why a task did not produce a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Its last attempt ran out of time (`timeout`, "Tool timeout").
    Timeout,
    /// It failed (`upstream_error` / `invalid_output`).
    Failed(TaskFailure),
}

impl Failure {
    /// The seed's `error_type`.
    pub fn error_type(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Failed(failure) => failure.error_type(),
        }
    }

    /// The seed's `partial_results.<agent>.error`.
    pub fn message(self) -> &'static str {
        match self {
            Self::Timeout => "Tool timeout",
            Self::Failed(TaskFailure::Upstream) => "Tool error",
            Self::Failed(TaskFailure::InvalidOutput) => "Invalid tool output",
        }
    }
}

/// What the plan's execution produced.
#[derive(Debug, Default)]
pub struct Execution {
    /// Finished tasks, in completion order.
    pub done: Vec<(PlannedTask, TaskDone)>,
    /// Tasks without a result, with the attempts each made.
    pub failed: Vec<(PlannedTask, Failure, u32)>,
}

/// Runs `plan`'s stages in order, reporting progress into `sink`.
pub async fn execute<P: Platform, D: KnowledgePorts>(
    exec: &Exec<'_, P, D>,
    plan: &Plan,
    stage: &StageConfig,
    sink: &mut dyn TurnSink,
) -> Execution {
    let total = plan.len();
    let completed = Cell::new(0usize);
    let last = Cell::new(75.0f32);
    let mut execution = Execution::default();
    let shared = RefCell::new(|event| sink.emit(event));
    for tasks in &plan.stages {
        for retrieval in [true, false] {
            let inputs: Vec<TaskInput> = tasks
                .iter()
                .filter(|t| t.tool.is_retrieval() == retrieval)
                .map(|task| TaskInput {
                    task: task.clone(),
                    inputs: earlier_answers(&execution, &task.agent),
                })
                .collect();
            if inputs.is_empty() {
                continue;
            }
            let (completed, last) = (&completed, &last);
            let outcome = run_stage(
                exec.platform.timer(),
                stage,
                &inputs,
                |input: &TaskInput, ctx| async move {
                    let task = &input.task;
                    if ctx.attempt == 1 {
                        let message = format!("Task {}/{total}: {}", task.step, task.purpose);
                        ctx.progress
                            .report(message, Some(last.get()), Some("executing_task"));
                    }
                    let done = exec.run(input).await?;
                    let count = completed.get() + 1;
                    completed.set(count);
                    let percentage = task_percentage(count, total);
                    last.set(percentage);
                    let message = format!("Completed {}/{total}: {}", task.step, task.purpose);
                    ctx.progress
                        .report(message, Some(percentage), Some("task_completed"));
                    Ok::<_, TaskFailure>(done)
                },
                &shared,
            )
            .await;
            let mut finished: Vec<(PlannedTask, TaskDone)> = Vec::new();
            for result in outcome.tasks {
                let task = inputs[result.index].task.clone();
                let attempts = result.attempts;
                match result.outcome {
                    TaskOutcome::Done(mut done) => {
                        done.attempts = attempts;
                        finished.push((task, done));
                    }
                    TaskOutcome::TimedOut => {
                        execution.failed.push((task, Failure::Timeout, attempts));
                    }
                    TaskOutcome::Failed(failure) => {
                        let failure = Failure::Failed(failure);
                        execution.failed.push((task, failure, attempts));
                    }
                }
            }
            finished.sort_by_key(|(_, done)| done.finished);
            execution.done.extend(finished);
        }
    }
    execution
}

/// The retrieval answers `agent` has so far (what its summary/math tasks build on).
fn earlier_answers(execution: &Execution, agent: &str) -> Vec<AgentAnswer> {
    execution
        .done
        .iter()
        .filter(|(task, _)| task.agent == agent && task.tool.is_retrieval())
        .map(|(_, done)| done.answer.clone())
        .collect()
}
