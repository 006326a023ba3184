//! Cold-start benchmark: what a new isolate costs before its first answers. Run on demand:
//! `make bench-cold-start` (needs `make build` first).
//!
//! Each run starts a fresh `wrangler dev` (a new workerd process, so a new isolate that
//! has to load and compile the Worker) and times, from the moment the process is spawned:
//! - its first response to `GET /health` (polled from spawn until answered), and that
//!   request's own duration (the time the new isolate took to answer it);
//! - right after, its first streamed turn: the time to the first token, from sending the
//!   message (the scripted upstream sends its first token 200 ms after it is asked, as in
//!   `make bench-e2e`), and the same for a second, warm turn; and, for reference, the
//!   upstream's own time to first token asked directly.
//!
//! The Concierge Worker (`edge/build/`, as `wrangler deploy` uploads it) and the bare relay
//! Worker of `make bench-e2e` (`tests/bench/relay/`) are measured the same way, runs
//! alternating, and the medians printed. The Concierge runs share one local state prepared
//! ahead (migrations, a site, one conversation per run), so a run's first turn is the new
//! isolate's second request, after `/health`.
#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use concierge_e2e::bench::{bench_vars, local_dev_flags};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{agent, free_port, repo_root, scratch_dir, supervise_command};
use serde_json::{Value, json};

const TOKENS: usize = 50;
const QUESTION: &str = "Tư vấn cấu hình PC chơi game 20 triệu, card đồ họa nào hợp lý?";
/// How long a fresh `wrangler dev` may take to answer at all.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs per Worker (`BENCH_COLD_RUNS`).
fn runs() -> usize {
    std::env::var("BENCH_COLD_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5)
}

fn reply() -> Reply {
    Reply::Tokens {
        tokens: (0..TOKENS).map(|i| format!("t{i} ")).collect(),
        first_token_after: Duration::from_millis(200),
        between: Duration::from_millis(10),
    }
}

/// A running `wrangler dev`, stopped (its whole process group) when dropped.
struct Dev {
    port: u16,
    supervisor: Child,
    spawned: Instant,
}

impl Drop for Dev {
    fn drop(&mut self) {
        // Closing the supervisor's stdin makes it stop the wrangler process group.
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
    }
}

impl Dev {
    /// Spawn `wrangler dev` with `config` (None: the repository's `wrangler.toml` and the
    /// SQL validator Worker's, `sqlcheck/wrangler.toml`), local state in `state`, and `vars`.
    fn spawn(config: Option<&Path>, state: &Path, vars: &[(String, String)]) -> Dev {
        let port = free_port();
        let mut command: Vec<String> = vec![
            "env".into(),
            "X_LOCAL_OBSERVABILITY=false".into(),
            "wrangler".into(),
            "dev".into(),
        ];
        match config {
            Some(config) => {
                command.extend(["--config".into(), config.to_string_lossy().into_owned()]);
            }
            // Concierge: with the SQL validator Worker behind its `SQL_CHECK` binding.
            None => command.extend(concierge_e2e::dev_configs_tail(&repo_root(), true)),
        }
        command.extend(local_dev_flags(port, state));
        for (name, value) in vars {
            command.push("--var".into());
            command.push(format!("{name}:{value}"));
        }
        let log = state.join(format!("wrangler-{port}.log"));
        let spawned = Instant::now();
        let supervisor = supervise_command(&command, &log);
        Dev {
            port,
            supervisor,
            spawned,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Poll until the first `GET /health` is answered 200. Returns the time from spawn to
    /// that answer and the answered request's own duration.
    fn first_health(&self) -> (Duration, Duration) {
        let agent = ureq::AgentBuilder::new().timeout(START_TIMEOUT).build();
        loop {
            assert!(
                self.spawned.elapsed() < START_TIMEOUT,
                "wrangler dev did not answer /health within {START_TIMEOUT:?}"
            );
            if TcpStream::connect(("127.0.0.1", self.port)).is_err() {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            let asked = Instant::now();
            match agent.get(&self.url("/health")).call() {
                Ok(response) if response.status() == 200 => {
                    let _ = response.into_string();
                    return (self.spawned.elapsed(), asked.elapsed());
                }
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

/// Run `wrangler` with the project's tools (scripts/env.sh), quietly; panics on failure.
fn wrangler(args: &[&str]) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\" 2>/dev/null; exec wrangler \"$@\"")
        .arg("wrangler")
        .args(args)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("CONCIERGE_SKIP_BUILD", "1")
        .env("WRANGLER_SEND_METRICS", "false")
        .stdout(Stdio::null())
        .status()
        .expect("run wrangler");
    assert!(status.success(), "wrangler {args:?} failed");
}

/// One run's figures, in milliseconds.
#[derive(Default, Clone, Copy)]
struct Run {
    ready: f64,
    health: f64,
    first_turn: f64,
    warm_turn: f64,
    direct: f64,
}

/// What is measured: Concierge (its prepared state and conversations) or the relay.
enum Target {
    Concierge {
        state: PathBuf,
        secret_key: String,
        conversations: Vec<String>,
    },
    Relay {
        config: PathBuf,
        /// The scripted upstream's base URL.
        upstream: String,
    },
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Concierge { .. } => "Concierge",
            Target::Relay { .. } => "bare relay",
        }
    }

    fn run(&mut self, upstream: &ScriptedUpstream) -> Run {
        let dev = match self {
            Target::Concierge { state, .. } => Dev::spawn(None, state, &bench_vars()),
            Target::Relay { config, .. } => {
                Dev::spawn(Some(config), &scratch_dir("cold-relay"), &[])
            }
        };
        let (ready, health) = dev.first_health();
        let first_turn = self.ttft(&dev);
        let warm_turn = self.ttft(&dev);
        let direct = ttft(
            agent()
                .post(&format!("{}/v1/chat/completions", upstream.base_url))
                .send_json(chat_body()),
            "data: [DONE]",
        );
        Run {
            ready: ms(ready),
            health: ms(health),
            first_turn: ms(first_turn),
            warm_turn: ms(warm_turn),
            direct: ms(direct),
        }
    }

    /// One streamed turn's time to first token.
    fn ttft(&mut self, dev: &Dev) -> Duration {
        match self {
            Target::Concierge {
                secret_key,
                conversations,
                ..
            } => {
                let conversation = conversations.pop().expect("a prepared conversation");
                ttft(
                    agent()
                        .post(&dev.url(&format!("/conversations/{conversation}/messages")))
                        .set("x-api-key", secret_key)
                        .send_json(json!({"content": QUESTION})),
                    "event: completed",
                )
            }
            Target::Relay { upstream, .. } => ttft(
                agent()
                    .post(&dev.url(&format!("/?upstream={upstream}")))
                    .send_json(chat_body()),
                "data: [DONE]",
            ),
        }
    }
}

/// Time from sending `request` to the first token line (a chunk or a `content` delta),
/// reading the stream to its `end` line and checking every token arrived.
fn ttft(request: Result<ureq::Response, ureq::Error>, end: &str) -> Duration {
    let started = Instant::now();
    let response = request.expect("a streamed answer");
    let (mut first, mut tokens, mut ended) = (None, 0, false);
    let mut seen = Vec::new();
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line.expect("read stream");
        if !line.starts_with("data: {\"chunk\"") {
            seen.push(line.clone());
        }
        if line.starts_with("data: {\"chunk\"") || line.contains("\"content\"") {
            first.get_or_insert_with(|| started.elapsed());
            tokens += 1;
        } else if line == end {
            ended = true;
        }
    }
    assert!(ended, "the stream ended with {end}: {seen:?}");
    assert_eq!(tokens, TOKENS, "every token arrived");
    first.unwrap_or_default()
}

fn chat_body() -> Value {
    json!({"model": "scripted", "stream": true, "messages": [{"role": "user", "content": QUESTION}]})
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Migrations, a site on `upstream`, and `n` conversations, in a fresh local state.
fn prepare_concierge(upstream: &ScriptedUpstream, n: usize) -> Target {
    let state = scratch_dir("cold-concierge");
    let persist = state.to_string_lossy().into_owned();
    for db in ["DB", "LISTINGS"] {
        wrangler(&[
            "d1",
            "migrations",
            "apply",
            db,
            "--local",
            "--persist-to",
            &persist,
        ]);
    }
    let dev = Dev::spawn(None, &state, &bench_vars());
    dev.first_health();
    let response = agent()
        .post(&dev.url("/admin/sites"))
        .set(
            "authorization",
            &format!("Bearer {}", concierge_e2e::OPERATOR_TOKEN),
        )
        .send_json(json!({
            "name": "Cold start shop",
            "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted", "embed_model": "scripted-embed"}
        }))
        .expect("create site");
    assert_eq!(response.status(), 201, "create site");
    let site: Value = response.into_json().expect("JSON");
    let secret_key = site["secret_key"].as_str().expect("secret key").to_string();
    let conversations = (0..n)
        .map(|_| {
            let response = agent()
                .post(&dev.url("/conversations"))
                .set("x-api-key", &secret_key)
                .send_json(json!({}))
                .expect("create conversation");
            let body: Value = response.into_json().expect("JSON");
            body["conversation_id"]
                .as_str()
                .expect("conversation id")
                .to_string()
        })
        .collect();
    drop(dev);
    Target::Concierge {
        state,
        secret_key,
        conversations,
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let runs = runs();
    let wasm = repo_root().join("edge/build/index_bg.wasm");
    let size = std::fs::metadata(&wasm)
        .map(|m| m.len())
        .expect("edge/build/index_bg.wasm: run `make build` first");
    println!(
        "cold start: {runs} runs each, a fresh wrangler dev per run; Worker wasm {size} B raw"
    );
    let upstream = ScriptedUpstream::start();
    upstream.set_default(reply());
    // Two turns per run: the new isolate's first, and a warm one.
    let mut targets = [
        prepare_concierge(&upstream, 2 * runs),
        Target::Relay {
            config: repo_root().join("tests/bench/relay/wrangler.toml"),
            upstream: upstream.base_url.clone(),
        },
    ];
    let mut results: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for run in 0..runs {
        for (target, result) in targets.iter_mut().zip(results.iter_mut()) {
            let figures = target.run(&upstream);
            println!(
                "run {}: {:<10} ready {:>7.0} ms, first /health {:>6.1} ms, TTFT first turn {:>6.1} ms, warm turn {:>6.1} ms (upstream direct {:>5.1} ms)",
                run + 1,
                target.name(),
                figures.ready,
                figures.health,
                figures.first_turn,
                figures.warm_turn,
                figures.direct
            );
            result.push(figures);
        }
    }
    println!(
        "\n{:<52} {:>12} {:>12}",
        "median of runs (ms)", "Concierge", "bare relay"
    );
    let row = |name: &str, pick: fn(&Run) -> f64| {
        let mut columns = results
            .iter()
            .map(|runs| median(&mut runs.iter().map(pick).collect::<Vec<_>>()));
        let (ours, relay) = (
            columns.next().unwrap_or_default(),
            columns.next().unwrap_or_default(),
        );
        println!("{name:<52} {ours:>12.1} {relay:>12.1}");
    };
    row("spawn to first /health answered", |r| r.ready);
    row("first /health request, new isolate", |r| r.health);
    row("first streamed turn, time to first token", |r| r.first_turn);
    row("second (warm) streamed turn, time to first token", |r| {
        r.warm_turn
    });
    row("upstream asked directly, time to first token", |r| r.direct);
}
