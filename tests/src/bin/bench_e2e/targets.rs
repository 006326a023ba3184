//! What `bench_e2e` streams through (the Concierge Worker, the bare relay, the durable
//! floor) and how one turn, one direct upstream call and a target's CPU are measured.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Child;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use concierge_e2e::bench::local_dev_flags;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{
    TestSite, Worker, agent, descendants, free_port, repo_root, scratch_dir, supervise_command,
};
use serde_json::{Value, json};

pub(crate) const TOKENS: usize = 50;
/// Turns on conversations left idle since the start (the idle-object figure).
pub(crate) const IDLE_ROUNDS: usize = 15;
pub(crate) const QUESTION: &str = "Tư vấn cấu hình PC chơi game 20 triệu, card đồ họa nào hợp lý?";

pub(crate) fn reply() -> Reply {
    Reply::Tokens {
        tokens: (0..TOKENS).map(|i| format!("t{i} ")).collect(),
        first_token_after: Duration::from_millis(200),
        between: Duration::from_millis(10),
    }
}

/// What a benchmark streams through: the Concierge Worker or the bare relay.
pub(crate) trait Target: Sync {
    /// When one streamed answer was asked for, its time to the first token, and its number
    /// of tokens.
    fn turn(&self) -> (Instant, Duration, usize);
    /// Every process the target started.
    fn processes(&self) -> Vec<u32>;
    /// Get ready for `n` turns outside the measurement (the Worker's conversations).
    fn prepare(&self, _n: usize) {}
}

pub(crate) struct Concierge {
    pub(crate) worker: Worker,
    pub(crate) site: TestSite,
    /// Conversations created ahead, one per turn.
    pub(crate) ready: Mutex<Vec<String>>,
    /// Conversations created at the start and left idle, for the idle-object figure.
    pub(crate) idle: Vec<String>,
}

impl Target for Concierge {
    fn prepare(&self, n: usize) {
        let created: Vec<String> = (0..n)
            .map(|_| new_conversation(&self.worker, &self.site))
            .collect();
        self.ready.lock().expect("lock").extend(created);
    }

    fn turn(&self) -> (Instant, Duration, usize) {
        let ready = self.ready.lock().expect("lock").pop();
        let conversation = ready.unwrap_or_else(|| new_conversation(&self.worker, &self.site));
        self.turn_on(&conversation)
    }

    fn processes(&self) -> Vec<u32> {
        self.worker.process_ids()
    }
}

impl Concierge {
    /// One streamed turn on `conversation`.
    pub(crate) fn turn_on(&self, conversation: &str) -> (Instant, Duration, usize) {
        let started = Instant::now();
        let response = agent()
            .post(
                &self
                    .worker
                    .url(&format!("/conversations/{conversation}/messages")),
            )
            .set("x-api-key", &self.site.secret_key)
            .send_json(json!({"content": QUESTION}))
            .expect("send message");
        let (first, chunks, completed) = read_stream(started, response, |line| {
            if line.starts_with("data: {\"chunk\"") {
                Some(true)
            } else if line == "event: completed" {
                Some(false)
            } else {
                None
            }
        });
        assert!(completed, "the turn completed");
        (started, first, chunks)
    }

    /// Added TTFT (median, ms) of a turn on each idle conversation, paired as above.
    pub(crate) fn idle_ttft(&self, upstream: &ScriptedUpstream) -> f64 {
        let mut added: Vec<f64> = self
            .idle
            .iter()
            .map(|conversation| {
                let direct = direct_ttft(upstream);
                let (_, through, _) = self.turn_on(conversation);
                through.as_secs_f64() * 1e3 - direct.as_secs_f64() * 1e3
            })
            .collect();
        added.sort_by(f64::total_cmp);
        percentile(&added, 0.5)
    }
}

pub(crate) struct Relay {
    pub(crate) url: String,
    pub(crate) supervisor: Child,
}

/// `wrangler dev` of the Worker in `tests/bench/{dir}/` on a free port, once it listens.
fn wrangler_dev(dir: &str, local_traces: bool) -> (u16, Child) {
    let port = free_port();
    let state = scratch_dir(&format!("bench-{dir}"));
    let dir = repo_root().join("tests/bench").join(dir);
    let mut command: Vec<String> = vec![
        "env".to_string(),
        format!("X_LOCAL_OBSERVABILITY={local_traces}"),
        "wrangler".into(),
        "dev".into(),
        "--config".into(),
        dir.join("wrangler.toml").to_string_lossy().into_owned(),
    ];
    command.extend(local_dev_flags(port, &state));
    let supervisor = supervise_command(&command, &state.join("wrangler.log"));
    let deadline = Instant::now() + Duration::from_secs(90);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{} did not start", dir.display());
        std::thread::sleep(Duration::from_millis(200));
    }
    (port, supervisor)
}

impl Relay {
    pub(crate) fn start(upstream: &ScriptedUpstream, local_traces: bool) -> Relay {
        let (port, supervisor) = wrangler_dev("relay", local_traces);
        Relay {
            url: format!("http://127.0.0.1:{port}/?upstream={}", upstream.base_url),
            supervisor,
        }
    }
}

impl Target for Relay {
    fn turn(&self) -> (Instant, Duration, usize) {
        passed_on_turn(&self.url)
    }

    fn processes(&self) -> Vec<u32> {
        descendants(self.supervisor.id())
    }
}

/// The durable floor (`tests/bench/floor/`): a conversation object per conversation, the
/// visitor's message and the reply stored in its own SQLite, the upstream's stream passed
/// on as is.
pub(crate) struct Floor {
    base: String,
    upstream: String,
    supervisor: Child,
    /// Conversations whose object was started ahead, one per turn.
    ready: Mutex<Vec<String>>,
    opened: AtomicUsize,
}

impl Floor {
    pub(crate) fn start(upstream: &ScriptedUpstream, local_traces: bool) -> Floor {
        let (port, supervisor) = wrangler_dev("floor", local_traces);
        let base = format!("http://127.0.0.1:{port}");
        agent()
            .get(&format!("{base}/setup"))
            .call()
            .expect("the floor's table");
        Floor {
            base,
            upstream: upstream.base_url.clone(),
            supervisor,
            ready: Mutex::new(Vec::new()),
            opened: AtomicUsize::new(0),
        }
    }

    /// A new conversation, its object started.
    fn open(&self) -> String {
        let conversation = format!("c{}", self.opened.fetch_add(1, Ordering::Relaxed));
        agent()
            .post(&format!("{}/warm?conversation={conversation}", self.base))
            .call()
            .expect("the floor's object starts");
        conversation
    }
}

impl Target for Floor {
    fn prepare(&self, n: usize) {
        let opened: Vec<String> = (0..n).map(|_| self.open()).collect();
        self.ready.lock().expect("lock").extend(opened);
    }

    fn turn(&self) -> (Instant, Duration, usize) {
        let ready = self.ready.lock().expect("lock").pop();
        let conversation = ready.unwrap_or_else(|| self.open());
        passed_on_turn(&format!(
            "{}/?conversation={conversation}&upstream={}",
            self.base, self.upstream
        ))
    }

    fn processes(&self) -> Vec<u32> {
        descendants(self.supervisor.id())
    }
}

/// One turn through a Worker that passes the upstream's stream on as is.
fn passed_on_turn(url: &str) -> (Instant, Duration, usize) {
    let started = Instant::now();
    let response = agent()
        .post(url)
        .send_json(chat_body())
        .expect("the stream is passed on");
    let (first, chunks, done) = read_stream(started, response, |line| {
        if line.contains("\"content\"") {
            Some(true)
        } else if line == "data: [DONE]" {
            Some(false)
        } else {
            None
        }
    });
    assert!(done, "the passed-on stream ended");
    (started, first, chunks)
}

pub(crate) fn chat_body() -> Value {
    json!({"model": "scripted", "stream": true, "messages": [{"role": "user", "content": QUESTION}]})
}

/// Read an SSE response: `classify` says whether a line is a token (`Some(true)`), the end
/// (`Some(false)`) or neither. Returns the time to the first token, the token count, and
/// whether the end was seen.
pub(crate) fn read_stream(
    started: Instant,
    response: ureq::Response,
    classify: impl Fn(&str) -> Option<bool>,
) -> (Duration, usize, bool) {
    let (mut first, mut tokens, mut ended) = (None, 0, false);
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line.expect("read stream");
        match classify(&line) {
            Some(true) => {
                first.get_or_insert_with(|| started.elapsed());
                tokens += 1;
            }
            Some(false) => ended = true,
            None => {}
        }
    }
    (first.unwrap_or_default(), tokens, ended)
}

pub(crate) fn new_conversation(worker: &Worker, site: &TestSite) -> String {
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

pub(crate) fn direct_ttft(upstream: &ScriptedUpstream) -> Duration {
    let started = Instant::now();
    let response = agent()
        .post(&format!("{}/v1/chat/completions", upstream.base_url))
        .send_json(chat_body())
        .expect("upstream answers");
    let (first, _, _) = read_stream(started, response, |line| {
        line.contains("\"content\"").then_some(true)
    });
    first
}

/// User + system CPU of the workerd processes among `pids`, in milliseconds.
pub(crate) fn workerd_cpu_ms(pids: &[u32]) -> f64 {
    let ticks = 100.0; // USER_HZ on Linux.
    let mut total = 0.0;
    for pid in pids {
        let path = Path::new("/proc").join(pid.to_string());
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

/// The `p` quantile (0..1) of `sorted`, by the nearest rank.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}
