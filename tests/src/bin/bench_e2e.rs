//! End-to-end benchmark of one streamed turn through the Worker under `wrangler dev`,
//! against a scripted upstream with fixed timing (first token after 200 ms, then 50 tokens
//! 10 ms apart). Run on demand: `make bench-e2e` (needs `make build` first).
//!
//! Prints:
//! - added time-to-first-token over calling the upstream directly, paired per round
//!   (median and p90 of `ROUNDS` rounds);
//! - the Worker's CPU time per streamed answer, read from the workerd processes'
//!   `/proc/<pid>/stat` (user + system) around a run of sequential turns;
//! - the wall time of 50 conversations streaming at once, and whether every token arrived.
#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, WorkerOptions, agent, test_vars};
use serde_json::{Value, json};

const ROUNDS: usize = 60;
const CPU_TURNS: usize = 40;
const CONCURRENT: usize = 50;
const TOKENS: usize = 50;
const QUESTION: &str = "Tư vấn cấu hình PC chơi game 20 triệu, card đồ họa nào hợp lý?";

fn reply() -> Reply {
    Reply::Tokens {
        tokens: (0..TOKENS).map(|i| format!("t{i} ")).collect(),
        first_token_after: Duration::from_millis(200),
        between: Duration::from_millis(10),
    }
}

fn main() {
    // wrangler's local trace collector records every call for its local explorer view; it
    // is a development tool, not the Worker, so it is off unless BENCH_LOCAL_TRACES=1.
    let local_traces = std::env::var("BENCH_LOCAL_TRACES").is_ok_and(|v| v == "1");
    println!(
        "wrangler dev, local trace collector {}",
        if local_traces { "on" } else { "off" }
    );
    let worker = Worker::start(&WorkerOptions {
        vars: test_vars(),
        local_traces,
        ..WorkerOptions::default()
    });
    let upstream = ScriptedUpstream::start();
    upstream.set_default(reply());
    let site = worker.create_site(json!({
        "name": "Bench shop",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"}
    }));

    // Warm up: compile paths, fill caches.
    for _ in 0..3 {
        let conversation = new_conversation(&worker, &site);
        turn(&worker, &site, &conversation);
    }

    let mut added = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let direct = direct_ttft(&upstream);
        let conversation = new_conversation(&worker, &site);
        let (through, tokens) = turn(&worker, &site, &conversation);
        assert_eq!(tokens, TOKENS, "every token arrives");
        added.push(through.as_secs_f64() * 1e3 - direct.as_secs_f64() * 1e3);
    }
    added.sort_by(f64::total_cmp);
    println!(
        "added time-to-first-token over the upstream alone ({ROUNDS} paired rounds): median {:.2} ms, p90 {:.2} ms",
        percentile(&added, 0.5),
        percentile(&added, 0.9)
    );

    let conversations: Vec<String> = (0..CPU_TURNS)
        .map(|_| new_conversation(&worker, &site))
        .collect();
    let before = workerd_cpu_ms(&worker);
    for conversation in &conversations {
        turn(&worker, &site, conversation);
    }
    let cpu = workerd_cpu_ms(&worker) - before;
    println!(
        "Worker CPU per streamed answer ({CPU_TURNS} turns, all workerd processes): {:.1} ms",
        cpu / CPU_TURNS as f64
    );

    let conversations: Vec<String> = (0..CONCURRENT)
        .map(|_| new_conversation(&worker, &site))
        .collect();
    let started = Instant::now();
    let handles: Vec<_> = conversations
        .into_iter()
        .map(|conversation| {
            let (base, key) = (worker.base_url.clone(), site.secret_key.clone());
            std::thread::spawn(move || turn_at(&base, &key, &conversation).1)
        })
        .collect();
    let complete = handles
        .into_iter()
        .filter_map(|h| h.join().ok())
        .filter(|&t| t == TOKENS)
        .count();
    println!(
        "{CONCURRENT} conversations streaming at once: wall {:.3} s, {complete}/{CONCURRENT} complete with every token",
        started.elapsed().as_secs_f64()
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn new_conversation(worker: &Worker, site: &TestSite) -> String {
    let response = agent()
        .post(&worker.url("/conversations"))
        .set("x-api-key", &site.secret_key)
        .send_json(json!({}))
        .expect("create conversation");
    let body: Value = response.into_json().expect("JSON");
    body["conversation_id"]
        .as_str()
        .expect("conversation id")
        .to_string()
}

fn turn(worker: &Worker, site: &TestSite, conversation: &str) -> (Duration, usize) {
    turn_at(&worker.base_url, &site.secret_key, conversation)
}

/// Time to the first text chunk, and the number of chunks, of one streamed turn.
fn turn_at(base: &str, key: &str, conversation: &str) -> (Duration, usize) {
    let started = Instant::now();
    let response = agent()
        .post(&format!("{base}/conversations/{conversation}/messages"))
        .set("x-api-key", key)
        .send_json(json!({"content": QUESTION}))
        .expect("send message");
    let mut first = None;
    let mut chunks = 0;
    let mut completed = false;
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line.expect("read stream");
        if line.starts_with("data: {\"chunk\"") {
            first.get_or_insert_with(|| started.elapsed());
            chunks += 1;
        } else if line == "event: completed" {
            completed = true;
        }
    }
    assert!(completed, "the turn completed");
    (first.unwrap_or_default(), chunks)
}

fn direct_ttft(upstream: &ScriptedUpstream) -> Duration {
    let started = Instant::now();
    let response = agent()
        .post(&format!("{}/v1/chat/completions", upstream.base_url))
        .send_json(json!({"model": "scripted", "stream": true, "messages": [{"role": "user", "content": QUESTION}]}))
        .expect("upstream answers");
    let mut first = None;
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line.expect("read upstream");
        if line.contains("\"content\"") {
            first.get_or_insert_with(|| started.elapsed());
        }
    }
    first.expect("upstream streamed")
}

/// User + system CPU of this Worker's workerd processes, in milliseconds.
fn workerd_cpu_ms(worker: &Worker) -> f64 {
    let ticks = 100.0; // USER_HZ on Linux.
    let mut total = 0.0;
    for pid in worker.process_ids() {
        let path = std::path::PathBuf::from(format!("/proc/{pid}"));
        let Ok(cmdline) = std::fs::read_to_string(path.join("cmdline")) else {
            continue;
        };
        if !cmdline.contains("workerd") {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command: utime is field 14, stime 15 (1-based).
        let after = stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        let fields: Vec<&str> = after.split_whitespace().collect();
        let utime: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        let stime: f64 = fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        total += (utime + stime) / ticks * 1000.0;
    }
    total
}
