//! Parallel stages with in-memory doubles: tasks run concurrently on one thread (shown by
//! the order of their progress events under scripted delays in virtual time), within the
//! concurrency limit; a timed-out or failing task is a partial result, not a failed stage.
#![allow(clippy::unwrap_used)]

use core::cell::{Cell, RefCell};

use concierge_core::agent::{StageConfig, TaskOutcome, run_stage};
use concierge_core::boundary::Timer;
use concierge_core::memory::MemoryTimer;
use concierge_core::turn::TurnEvent;

/// The progress messages, in order.
fn progress(events: &RefCell<Vec<TurnEvent>>) -> Vec<String> {
    events
        .borrow()
        .iter()
        .map(|e| match e {
            TurnEvent::Progress { message, .. } => message.clone(),
            other => panic!("only progress events expected, got {other:?}"),
        })
        .collect()
}

/// A task that reports, waits its delay, reports again and answers its name.
async fn task(
    timer: &MemoryTimer,
    (name, delay): &(&'static str, u64),
    ctx: concierge_core::agent::TaskContext<'_>,
) -> Result<&'static str, String> {
    let stage = Some("executing_task");
    ctx.progress
        .report(format!("{name}: start #{}", ctx.attempt), None, stage);
    timer.sleep(*delay).await;
    ctx.progress
        .report(format!("{name}: done"), Some(100.0), stage);
    Ok(*name)
}

#[test]
fn a_timed_out_task_leaves_two_results_a_partial_flag_and_everyones_progress() {
    let timer = MemoryTimer::new();
    let events: RefCell<Vec<TurnEvent>> = RefCell::new(Vec::new());
    let inputs = [("a", 30), ("b", 10), ("c", 1_000)];
    let config = StageConfig {
        timeout_ms: 100,
        retries: 1,
        ..StageConfig::default()
    };
    let outcome = timer.run(run_stage(
        &timer,
        &config,
        &inputs,
        |input, ctx| task(&timer, input, ctx),
        &events,
    ));

    assert!(outcome.partial);
    let results: Vec<(usize, &str)> = outcome.results().map(|(i, v)| (i, *v)).collect();
    assert_eq!(results, [(0, "a"), (1, "b")]);
    assert_eq!(outcome.tasks[2].outcome, TaskOutcome::TimedOut);
    assert_eq!(
        outcome.tasks[2].attempts, 2,
        "the timed-out attempt was retried once"
    );
    assert_eq!(
        timer.now_ms(),
        200,
        "two 100 ms attempts, the others inside them"
    );
    // All three started before any finished, and finished by their delays: concurrent.
    assert_eq!(
        progress(&events),
        [
            "a: start #1",
            "b: start #1",
            "c: start #1",
            "b: done",
            "a: done",
            "c: start #2"
        ]
    );
    assert!(events.borrow().iter().all(|e| matches!(e,
        TurnEvent::Progress { stage: Some(s), .. } if s == "executing_task")));
}

#[test]
fn no_more_tasks_than_the_limit_are_in_flight() {
    let timer = MemoryTimer::new();
    let events: RefCell<Vec<TurnEvent>> = RefCell::new(Vec::new());
    let inputs = [("a", 30), ("b", 10), ("c", 5)];
    let config = StageConfig {
        max_concurrent: 2,
        ..StageConfig::default()
    };
    let outcome = timer.run(run_stage(
        &timer,
        &config,
        &inputs,
        |input, ctx| task(&timer, input, ctx),
        &events,
    ));
    assert!(!outcome.partial);
    assert_eq!(outcome.results().count(), 3);
    // `c` starts only when `b` frees a slot, and still overlaps `a`.
    assert_eq!(
        progress(&events),
        [
            "a: start #1",
            "b: start #1",
            "b: done",
            "c: start #1",
            "c: done",
            "a: done"
        ]
    );
    assert_eq!(timer.now_ms(), 30);
}

#[test]
fn failed_attempts_are_retried_and_a_task_that_keeps_failing_is_a_partial_result() {
    let timer = MemoryTimer::new();
    let events: RefCell<Vec<TurnEvent>> = RefCell::new(Vec::new());
    let flaky_calls = Cell::new(0);
    let inputs = ["flaky", "broken", "fine"];
    let outcome = timer.run(run_stage(
        &timer,
        &StageConfig::default(),
        &inputs,
        |name, ctx| {
            let flaky_calls = &flaky_calls;
            async move {
                ctx.progress.report(*name, None, None);
                match *name {
                    "flaky" => {
                        flaky_calls.set(flaky_calls.get() + 1);
                        if ctx.attempt < 2 {
                            Err("upstream 503")
                        } else {
                            Ok(ctx.index)
                        }
                    }
                    "broken" => Err("no index"),
                    _ => Ok(ctx.index),
                }
            }
        },
        &events,
    ));
    assert!(outcome.partial);
    assert_eq!(flaky_calls.get(), 2);
    assert_eq!(outcome.tasks[0].outcome, TaskOutcome::Done(0));
    assert_eq!(outcome.tasks[0].attempts, 2);
    assert_eq!(outcome.tasks[1].outcome, TaskOutcome::Failed("no index"));
    assert_eq!(
        outcome.tasks[1].attempts, 4,
        "1 attempt + 3 retries by default"
    );
    assert_eq!(outcome.tasks[2].outcome, TaskOutcome::Done(2));
    assert_eq!(progress(&events).len(), 2 + 4 + 1);
}
