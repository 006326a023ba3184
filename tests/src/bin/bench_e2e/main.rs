//! End-to-end benchmark of one streamed turn through the Worker under `wrangler dev`,
//! against a scripted upstream with fixed timing (first token after 200 ms, then 50 tokens
//! 10 ms apart). Run on demand: `make bench-e2e` (needs `make build` first).
//!
//! Prints, for the Concierge Worker, a bare pass-through relay Worker (`tests/bench/relay/`,
//! the floor on the same machine, measured the same way) and — for information — the
//! durable floor (`tests/bench/floor/`: a conversation object and its two writes to its own
//! SQLite, no logic; what the design costs before any of Concierge's own work):
//! - added time-to-first-token over calling the upstream directly, paired per round
//!   (median and p90 of 60 rounds), each round's conversation created just before it (not
//!   timed), as the widget opens one when the visitor opens it; for information, the same
//!   on conversations left idle for minutes (their objects started again, not warm);
//! - CPU time per streamed answer, read from all of the Worker's workerd processes'
//!   `/proc/<pid>/stat` (user + system) around a run of sequential turns; the Concierge
//!   figure includes its background work (the queue consumer embedding the turn's messages);
//! - the wall time of 50 conversations streaming at once, and whether every token arrived.
//!
//! Then the targets (durable conversations' issue), each with PASS/FAIL: the added TTFT
//! median as a difference to the relay's (target ≤ 3 ms), CPU per streamed answer as a ratio
//! to the relay's (target ≤ 2.0×), and the 50-at-once wall time as a ratio to the relay's
//! (target ≤ 1.3×).
//!
//! The Worker runs with the tests' vars except `DEBUG_ROUTES`, which is off as in production.
//!
//! wrangler's local trace collector (its local explorer's observability view) is off for
//! both, unless `BENCH_LOCAL_TRACES=1`: it is a development tool, not the Worker.
#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use concierge_e2e::bench::bench_vars;
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{Worker, WorkerOptions};
use serde_json::json;

mod targets;

use targets::{
    Concierge, Floor, Relay, Target, direct_ttft, new_conversation, percentile, reply,
    workerd_cpu_ms,
};
use targets::{IDLE_ROUNDS, TOKENS};

/// How long the background work of earlier turns takes to end: the embedding queue's batch
/// window (`max_batch_timeout` in `wrangler.toml`, 5 s) and its consumer's run.
const BACKGROUND_SETTLE: Duration = Duration::from_secs(7);

/// Paired TTFT rounds (`BENCH_ROUNDS`).
fn rounds() -> usize {
    count("BENCH_ROUNDS", 60)
}

/// Sequential turns whose CPU is counted (`BENCH_CPU_TURNS`).
fn cpu_turns() -> usize {
    count("BENCH_CPU_TURNS", 40)
}

/// Conversations streaming at once (`BENCH_CONCURRENT`).
fn concurrent() -> usize {
    count("BENCH_CONCURRENT", 50)
}

/// `n`, or the env var `name` when set (quicker runs while working: `BENCH_ROUNDS=20 …`).
fn count(name: &str, n: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}
fn main() {
    let local_traces = std::env::var("BENCH_LOCAL_TRACES").is_ok_and(|v| v == "1");
    println!(
        "wrangler dev, local trace collector {}; {} paired rounds, {} turns for CPU, {} at once",
        if local_traces { "on" } else { "off" },
        rounds(),
        cpu_turns(),
        concurrent()
    );
    let upstream = ScriptedUpstream::start();
    upstream.set_default(reply());

    let worker = Worker::start(&WorkerOptions {
        vars: bench_vars(),
        local_traces,
        ..WorkerOptions::default()
    });
    let site = worker.create_site(json!({
        "name": "Bench shop",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"}
    }));
    let idle = (0..IDLE_ROUNDS)
        .map(|_| new_conversation(&worker, &site))
        .collect();
    let concierge = Concierge {
        worker,
        site,
        ready: Mutex::new(Vec::new()),
        idle,
    };
    let relay = Relay::start(&upstream, local_traces);
    let durable_floor = Floor::start(&upstream, local_traces);

    println!(
        "{:<40} {:>14} {:>14} {:>14}",
        "", "Concierge", "bare relay", "durable floor"
    );
    let targets: [&dyn Target; 3] = [&concierge, &relay, &durable_floor];
    let figures: Vec<Figures> = targets.iter().map(|t| measure(*t, &upstream)).collect();
    let row = |name: &str, f: &dyn Fn(&Figures) -> String| {
        let [ours, relay, floor] = [0, 1, 2].map(|i| f(&figures[i]));
        println!("{name:<40} {ours:>14} {relay:>14} {floor:>14}");
    };
    row("added TTFT, median (ms)", &|f| {
        format!("{:.2}", f.ttft_median)
    });
    row("added TTFT, p90 (ms)", &|f| format!("{:.2}", f.ttft_p90));
    let idle = concierge.idle_ttft(&upstream);
    println!(
        "{:<40} {:>14} {:>14} {:>14}",
        "added TTFT, idle object, median (ms)",
        format!("{idle:.2}"),
        "-",
        "-"
    );
    row("request to model asked, median (ms)", &|f| {
        format!("{:.2}", f.asked_median)
    });
    row("CPU per streamed answer (ms)", &|f| {
        format!("{:.1}", f.cpu_ms)
    });
    row("50 at once, wall (s)", &|f| {
        format!("{:.3}", f.concurrent_s)
    });
    row("50 at once, complete with every token", &|f| {
        format!("{}/{}", f.complete, concurrent())
    });
    // Let the queue consumer finish before everything stops (its CPU was counted above).
    std::thread::sleep(Duration::from_secs(1));
    let (ours, bare, durable) = (&figures[0], &figures[1], &figures[2]);
    let ttft_over = ours.ttft_median - bare.ttft_median;
    println!(
        "added TTFT (median): {ttft_over:+.1} ms over relay (target \u{2264} +{TTFT_OVER_TARGET_MS} ms): {}",
        verdict(ttft_over <= TTFT_OVER_TARGET_MS)
    );
    let cpu_ratio = ours.cpu_ms / bare.cpu_ms;
    println!(
        "CPU per streamed answer: {cpu_ratio:.2}\u{d7} relay ({:+.1} ms; target \u{2264} {CPU_RATIO_TARGET}\u{d7}): {}",
        ours.cpu_ms - bare.cpu_ms,
        verdict(cpu_ratio <= CPU_RATIO_TARGET)
    );
    let wall_ratio = ours.concurrent_s / bare.concurrent_s;
    println!(
        "50 at once, wall: {wall_ratio:.2}\u{d7} relay (target \u{2264} {CONCURRENT_RATIO_TARGET}\u{d7}): {}",
        verdict(wall_ratio <= CONCURRENT_RATIO_TARGET && ours.complete == concurrent())
    );
    println!(
        "added TTFT (p90, for information): {:+.1} ms over relay",
        ours.ttft_p90 - bare.ttft_p90
    );
    println!(
        "durable floor (for information): TTFT {:+.1} ms over relay, CPU {:.2}\u{d7}, 50 at once {:.2}\u{d7}",
        durable.ttft_median - bare.ttft_median,
        durable.cpu_ms / bare.cpu_ms,
        durable.concurrent_s / bare.concurrent_s
    );
}

/// The targets: Concierge's added time-to-first-token (median) at most this many ms over
/// the relay's, its CPU per streamed answer at most this many times the relay's, and its
/// wall time for 50 streams at once at most this many times the relay's.
const TTFT_OVER_TARGET_MS: f64 = 3.0;
const CPU_RATIO_TARGET: f64 = 2.0;
const CONCURRENT_RATIO_TARGET: f64 = 1.3;

fn verdict(met: bool) -> &'static str {
    if met { "PASS" } else { "FAIL" }
}

struct Figures {
    ttft_median: f64,
    ttft_p90: f64,
    /// Median time from sending the request to the upstream having the chat request.
    asked_median: f64,
    cpu_ms: f64,
    concurrent_s: f64,
    complete: usize,
}

fn measure(target: &dyn Target, upstream: &ScriptedUpstream) -> Figures {
    // Warm up: compile paths, fill caches.
    for _ in 0..3 {
        target.turn();
    }
    let mut added = Vec::with_capacity(rounds());
    let mut asked = Vec::with_capacity(rounds());
    for _ in 0..rounds() {
        // The round's conversation is opened first (as the widget does when the visitor
        // opens it), then the upstream is timed directly, then the turn.
        target.prepare(1);
        let direct = direct_ttft(upstream);
        let (started, through, tokens) = target.turn();
        assert_eq!(tokens, TOKENS, "every token arrives");
        added.push(through.as_secs_f64() * 1e3 - direct.as_secs_f64() * 1e3);
        // The turn's own chat request is the last one the upstream received.
        let request = upstream
            .chat_requests()
            .pop()
            .expect("the upstream was asked");
        asked.push(request.received.duration_since(started).as_secs_f64() * 1e3);
    }
    added.sort_by(f64::total_cmp);
    asked.sort_by(f64::total_cmp);

    // Background work of the turns (the queue consumer) is part of a turn's cost: wait for
    // the previous turns' work to end, then count until this run's work has ended too.
    target.prepare(cpu_turns());
    std::thread::sleep(BACKGROUND_SETTLE);
    let before = workerd_cpu_ms(&target.processes());
    for _ in 0..cpu_turns() {
        target.turn();
    }
    std::thread::sleep(BACKGROUND_SETTLE);
    let cpu = workerd_cpu_ms(&target.processes()) - before;

    target.prepare(concurrent());
    let started = Instant::now();
    let complete = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..concurrent())
            .map(|_| scope.spawn(|| target.turn().2))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().ok())
            .filter(|&t| t == TOKENS)
            .count()
    });
    Figures {
        ttft_median: percentile(&added, 0.5),
        ttft_p90: percentile(&added, 0.9),
        asked_median: percentile(&asked, 0.5),
        cpu_ms: cpu / cpu_turns() as f64,
        concurrent_s: started.elapsed().as_secs_f64(),
        complete,
    }
}
