//! Load and isolation at many sites (issue 40): `make bench-load`, the real Worker under
//! `wrangler dev --local` (debug routes and the local trace collector off, the binding
//! counters on), a scripted upstream (first token 200 ms, 5 tokens 10 ms apart) and the
//! Vectorize double.
//!
//! 1. Seeds 10,000 sites of the five templates (`seed.rs`: prototypes and a sample through
//!    the operator API, the rest copied by generated SQL and read back through the API).
//! 2. A counted pass: one visit at a time per template and surface, the binding counters
//!    read once the Worker's work has settled (queued work included): storage calls per
//!    conversation created and per turn, and D1's own milliseconds (`meta.duration`).
//! 3. A step test (unless `BENCH_LOAD_RATE` is given) finds where the Worker saturates; the
//!    offered rate is 30% of the last step that held.
//! 4. Open-loop phases at that rate, visits arriving by Poisson on sites drawn by Zipf (s=1):
//!    warm-up; steady; storage noise (a 200,000-row data-set upload every minute, console
//!    stats on three large sites every 10 s); CPU-only noise (stateless streams on one site,
//!    burning the workerd CPU the storage noise added, nothing stored); the same rate on the
//!    top 10 sites only (the breadth ratio).
//! 5. Correctness: every visitor message (each carries a nonce) stored exactly once in its
//!    own conversation, no other conversation's message in a history, no 5xx, 429 only from
//!    the configured limiters.
//!
//! A run is valid only if the achieved rate is at least 98% of the offered, the driver's
//! schedule lag p99 is under 50 ms and the driver (with the upstream, in this process) used
//! under 15% of a core; otherwise it prints INVALID instead of the timed figures.
//!
//! `BENCH_LOAD_QUICK=1` (in `make test`): a short run asserting the counted per-turn budget
//! of the shop template and the correctness gates, no timings.
#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

mod seed;
mod visit;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use concierge_e2e::bench::bench_vars;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{VectorizeDouble, Worker, WorkerOptions, agent, into_parts};
use serde_json::Value;

use seed::{Site, TEMPLATES};
use visit::{Client, Outcome, Surface, wait_until};

/// The scripted upstream's timing: first token after 200 ms, then 5 tokens 10 ms apart.
const FIRST_TOKEN: Duration = Duration::from_millis(200);

fn reply() -> Reply {
    Reply::Tokens {
        tokens: ["Dạ,", " shop", " có", " ạ", "."]
            .iter()
            .map(ToString::to_string)
            .collect(),
        first_token_after: FIRST_TOKEN,
        between: Duration::from_millis(10),
    }
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The run's settings (env vars, quick defaults under `BENCH_LOAD_QUICK=1`).
#[derive(Debug, Clone)]
struct Config {
    quick: bool,
    sites: usize,
    api_per_template: usize,
    /// Offered turns per second; `None`: found by the step test.
    rate: Option<f64>,
    step_seconds: f64,
    phases: Vec<(Phase, f64)>,
    noise_rows: usize,
    think: (f64, f64),
    /// Turns per surface in the counted pass (each set waits out two queue windows).
    counted_turns: usize,
}

impl Config {
    fn from_env() -> Self {
        let quick = std::env::var("BENCH_LOAD_QUICK").is_ok_and(|v| v == "1");
        let q = |full: f64, short: f64| if quick { short } else { full };
        let phases = vec![
            (Phase::Warmup, env_f64("BENCH_LOAD_WARMUP_S", q(180.0, 5.0))),
            (
                Phase::Steady,
                env_f64("BENCH_LOAD_STEADY_S", q(900.0, 15.0)),
            ),
            (
                Phase::StorageNoise,
                env_f64("BENCH_LOAD_STORAGE_NOISE_S", q(300.0, 10.0)),
            ),
            (
                Phase::CpuNoise,
                env_f64("BENCH_LOAD_CPU_NOISE_S", q(300.0, 5.0)),
            ),
            (
                Phase::TenSites,
                env_f64("BENCH_LOAD_TEN_SITES_S", q(300.0, 0.0)),
            ),
        ];
        Config {
            quick,
            sites: env_f64("BENCH_LOAD_SITES", 10_000.0) as usize,
            api_per_template: env_f64("BENCH_LOAD_API_SITES", q(100.0, 10.0)) as usize / 5,
            rate: std::env::var("BENCH_LOAD_RATE")
                .ok()
                .and_then(|v| v.parse().ok())
                .or(quick.then_some(1.0)),
            step_seconds: env_f64("BENCH_LOAD_STEP_S", 20.0),
            phases,
            noise_rows: env_f64("BENCH_LOAD_NOISE_ROWS", q(200_000.0, 20_000.0)) as usize,
            think: if quick { (1.0, 3.0) } else { (2.0, 10.0) },
            counted_turns: if quick { 1 } else { 2 },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Phase {
    Step,
    Warmup,
    Steady,
    StorageNoise,
    CpuNoise,
    TenSites,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Step => "step test",
            Phase::Warmup => "warm-up",
            Phase::Steady => "steady",
            Phase::StorageNoise => "storage noise",
            Phase::CpuNoise => "CPU-only noise",
            Phase::TenSites => "10 sites",
        }
    }
}

/// SplitMix64: the driver's own random numbers (seeded, so runs draw the same sequence).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Exponential with this mean (Poisson inter-arrival times).
    fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }
}

/// Zipf (s = 1) over ranks 0..n: the cumulative weights, searched.
#[derive(Debug)]
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize) -> Self {
        let mut acc = 0.0;
        let cdf: Vec<f64> = (1..=n)
            .map(|k| {
                acc += 1.0 / k as f64;
                acc
            })
            .collect();
        Zipf(cdf.iter().map(|c| c / acc).collect())
    }
    fn draw(&self, u: f64) -> usize {
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
    }
}

/// One request the driver made under load.
#[derive(Debug, Clone)]
struct Record {
    phase: Phase,
    surface: Surface,
    template: &'static str,
    site: usize,
    /// A turn (else the conversation's creation).
    turn: bool,
    out: Outcome,
}

/// One visit: its site, surface, conversation and the nonces of the turns it sent (with
/// whether each was accepted: 200/202).
#[derive(Debug, Clone)]
struct Visit {
    site: usize,
    surface: Surface,
    conversation: Option<String>,
    nonces: Vec<(String, bool)>,
}

/// What the load threads share.
#[derive(Debug)]
struct Shared {
    base: String,
    sites: Vec<Site>,
    records: Mutex<Vec<Record>>,
    visits: Mutex<Vec<Visit>>,
    /// Where the phases begin (`None` outside the timed phases).
    clock: Mutex<Vec<(Instant, Phase)>>,
    stop: AtomicBool,
    visit_ids: AtomicU64,
    think: (f64, f64),
}

impl Shared {
    fn phase_at(&self, at: Instant) -> Phase {
        let clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        clock
            .iter()
            .rev()
            .find(|(start, _)| *start <= at)
            .map_or(Phase::Step, |(_, p)| *p)
    }
    fn client(&self, visit: u64) -> Client {
        Client {
            agent: agent(),
            base: self.base.clone(),
            // Every visitor its own address (10.x.y.z), as on the web.
            ip: format!(
                "10.{}.{}.{}",
                (visit >> 16) & 0xff,
                (visit >> 8) & 0xff,
                (visit & 0xff).max(1)
            ),
        }
    }
}

/// A visit: a new conversation, then a geometric number of turns (mean 3) with think time.
fn run_visit(shared: &Shared, site_index: usize, surface: Surface, arrival: Instant, seed: u64) {
    let id = shared.visit_ids.fetch_add(1, Ordering::Relaxed);
    let mut rng = Rng(seed ^ id.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let site = &shared.sites[site_index];
    let client = shared.client(id);
    let record = |turn: bool, out: &Outcome, scheduled: Instant| {
        shared
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Record {
                phase: shared.phase_at(scheduled),
                surface,
                template: site.template,
                site: site_index,
                turn,
                out: out.clone(),
            });
    };
    let mut visit = Visit {
        site: site_index,
        surface,
        conversation: None,
        nonces: Vec::new(),
    };
    let mut scheduled = arrival;
    if surface != Surface::OpenAi {
        let created = client.create(&site.keys, surface, scheduled);
        record(false, &created, scheduled);
        if created.status != 201 {
            shared
                .visits
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(visit);
            return;
        }
        visit.conversation = created.conversation;
        scheduled = Instant::now();
    }
    let questions = [
        "Shop có mẫu này không",
        "Giá bao nhiêu vậy",
        "Bảo hành mấy tháng",
        "Có giao hàng tận nơi không",
        "Cuối tuần có mở cửa không",
    ];
    for n in 0.. {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let nonce = format!("bl-{id}-{n}");
        let text = format!("{}? (mã {nonce})", questions[n % questions.len()]);
        let out = client.turn(
            &site.keys,
            surface,
            visit.conversation.as_deref(),
            &text,
            scheduled,
        );
        record(true, &out, scheduled);
        let accepted = out.status == 200 || out.status == 202;
        visit.nonces.push((nonce, accepted));
        if visit.conversation.is_none() {
            visit.conversation = out.conversation.clone();
        }
        if !accepted || visit.conversation.is_none() || rng.unit() < 1.0 / 3.0 {
            break;
        }
        let (lo, hi) = shared.think;
        scheduled = Instant::now() + Duration::from_secs_f64(lo + (hi - lo) * rng.unit());
    }
    shared
        .visits
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(visit);
}

/// Open-loop arrivals: visits at `rate / 3` per second (3 turns a visit on average) on
/// sites drawn by `zipf` among `ranks`, until `until`.
fn arrivals(
    shared: &Arc<Shared>,
    rate: f64,
    zipf: &Zipf,
    until: Instant,
    seed: u64,
    threads: &mut Vec<std::thread::JoinHandle<()>>,
) {
    let mut rng = Rng(seed);
    let mean_gap = 3.0 / rate;
    let mut next = Instant::now() + Duration::from_secs_f64(rng.exp(mean_gap));
    while next < until && !shared.stop.load(Ordering::Relaxed) {
        wait_until(next);
        let site = zipf.draw(rng.unit());
        let surface = Surface::pick(rng.unit());
        let shared = Arc::clone(shared);
        let visit_seed = rng.next();
        let at = next;
        match std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || run_visit(&shared, site, surface, at, visit_seed))
        {
            Ok(handle) => threads.push(handle),
            Err(err) => println!("could not start a visit: {err}"),
        }
        next += Duration::from_secs_f64(rng.exp(mean_gap));
        threads.retain(|h| !h.is_finished());
    }
}

// ---- Process figures -------------------------------------------------------------------

fn stat_cpu_ms(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(") ")?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10.0) // USER_HZ = 100.
}

fn workerd_pids(worker: &Worker) -> Vec<u32> {
    worker
        .process_ids()
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.contains("workerd"))
        })
        .collect()
}

fn workerd_cpu_ms(worker: &Worker) -> f64 {
    workerd_pids(worker)
        .iter()
        .filter_map(|p| stat_cpu_ms(&p.to_string()))
        .sum()
}

fn workerd_rss_mb(worker: &Worker) -> f64 {
    workerd_pids(worker)
        .iter()
        .filter_map(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .sum::<f64>()
        / 1024.0
}

/// This process (driver and scripted upstream): CPU ms so far.
fn driver_cpu_ms() -> f64 {
    stat_cpu_ms("self").unwrap_or(0.0)
}

fn dir_bytes(path: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

// ---- Binding counters ------------------------------------------------------------------

type Counts = BTreeMap<String, f64>;

fn counters(worker: &Worker) -> Counts {
    let (status, body) = into_parts(agent().get(&worker.url("/debug/bindings")).call());
    assert_eq!(
        status, 200,
        "GET /debug/bindings (COUNT_BINDINGS=on): {body}"
    );
    let json: Value = serde_json::from_str(&body).expect("JSON");
    json.as_object()
        .expect("object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(0.0)))
        .collect()
}

fn total(counts: &Counts, is: impl Fn(&str) -> bool) -> f64 {
    // `+ 0.0`: an empty float sum is -0.0.
    counts
        .iter()
        .filter(|(k, _)| is(k))
        .map(|(_, v)| v)
        .sum::<f64>()
        + 0.0
}

fn queues_drained(counts: &Counts) -> bool {
    total(counts, |k| {
        k.contains(":queue.") && k.ends_with(".messages")
    }) == total(counts, |k| k.ends_with(":delivered"))
}

/// The counters once every queued message is delivered and nothing moved for 0.5 s.
fn settled(worker: &Worker, timeout: Duration) -> Counts {
    let deadline = Instant::now() + timeout;
    let mut last = counters(worker);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = counters(worker);
        if (now == last && queues_drained(&now)) || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

fn diff(after: &Counts, before: &Counts) -> Counts {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, v)| *v != 0.0)
        .collect()
}

/// One row of the counted pass, per request (a creation) or per turn.
#[derive(Debug, Clone, Default)]
struct Counted {
    /// D1 statements and batches on `DB` by the request, its object and (async) its
    /// background turn.
    sync_statements: f64,
    sync_batches: f64,
    /// The embedding consumer's D1 statements.
    embed_statements: f64,
    rows_read: f64,
    rows_written: f64,
    d1_ms: f64,
    kv: f64,
    do_requests: f64,
    do_storage: f64,
    /// SQL statements on conversations' records (their objects' own SQLite).
    record_sql: f64,
    queue_messages: f64,
    /// Messages the embedding consumer itself sent on (its next stage).
    embed_queue_messages: f64,
    vectorize: f64,
    /// Rate limiter calls.
    limits: f64,
    other: f64,
}

fn counted(c: &Counts, per: f64) -> Counted {
    let sync = |k: &str| {
        k.starts_with("fetch:")
            || k.starts_with("object:")
            || k.starts_with("site:")
            || k.starts_with("queue.concierge-turns:")
    };
    let d1 = |k: &str| k.contains(":d1.");
    let out = Counted {
        sync_statements: total(c, |k| sync(k) && k.ends_with("d1.DB.statements")),
        sync_batches: total(c, |k| sync(k) && k.ends_with("d1.DB.batches")),
        embed_statements: total(c, |k| {
            k.starts_with("queue.concierge-embed:") && k.ends_with("d1.DB.statements")
        }),
        rows_read: total(c, |k| d1(k) && k.ends_with(".rows_read")),
        rows_written: total(c, |k| d1(k) && k.ends_with(".rows_written")),
        d1_ms: total(c, |k| d1(k) && k.ends_with(".ms")),
        kv: total(c, |k| k.contains(":kv.")),
        do_requests: total(c, |k| k.contains(":do.") && k.ends_with(".requests")),
        do_storage: total(c, |k| k.starts_with("object:do_storage.")),
        record_sql: total(c, |k| k.starts_with("object:do_sql.")),
        queue_messages: total(c, |k| {
            sync(k) && k.contains(":queue.") && k.ends_with(".messages")
        }),
        embed_queue_messages: total(c, |k| {
            k.starts_with("queue.concierge-embed:") && k.ends_with(".messages")
        }),
        vectorize: total(c, |k| k.to_ascii_lowercase().contains("vectorize")),
        limits: total(c, |k| k.contains(":Ratelimit.")),
        other: 0.0,
    };
    let known = |k: &str| {
        d1(k)
            || k.contains(":kv.")
            || k.contains(":do.")
            || k.starts_with("object:do_storage.")
            || k.starts_with("object:do_sql.")
            || k.contains(":queue.")
            || k.ends_with(":delivered")
            || k.to_ascii_lowercase().contains("vectorize")
            || k.contains(":Ratelimit.")
    };
    let other = total(c, |k| !known(k));
    let p = |v: f64| v / per;
    Counted {
        sync_statements: p(out.sync_statements),
        sync_batches: p(out.sync_batches),
        embed_statements: p(out.embed_statements),
        rows_read: p(out.rows_read),
        rows_written: p(out.rows_written),
        d1_ms: p(out.d1_ms),
        kv: p(out.kv),
        do_requests: p(out.do_requests),
        do_storage: p(out.do_storage),
        record_sql: p(out.record_sql),
        queue_messages: p(out.queue_messages),
        embed_queue_messages: p(out.embed_queue_messages),
        vectorize: p(out.vectorize),
        limits: p(out.limits),
        other: p(other),
    }
}

/// The counted pass: per template and surface, one conversation created and two turns,
/// each measured alone on a site warmed by a first visit. Returns the rows and the budget
/// failures (the shop template against the README's table, as `storage_budget`).
fn counted_pass(
    worker: &Worker,
    shared: &Shared,
    templates: &[&'static str],
    turns: usize,
) -> (Vec<(String, String, Counted)>, Vec<String>) {
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let client = shared.client(0xFF_FFFF);
    for &template in templates {
        // The last site of the template (a copy made by SQL), warmed by one visit.
        let Some(index) = (0..shared.sites.len())
            .rev()
            .find(|&i| shared.sites[i].template == template && !shared.sites[i].by_api)
        else {
            continue;
        };
        let site = &shared.sites[index].keys;
        let warm = client.create(site, Surface::Widget, Instant::now());
        let _ = client.turn(
            site,
            Surface::Widget,
            warm.conversation.as_deref(),
            "Chào shop",
            Instant::now(),
        );
        let mut last = settled(worker, Duration::from_secs(30));
        for surface in Surface::ALL {
            let mut conversation = None;
            if surface != Surface::OpenAi {
                let created = client.create(site, surface, Instant::now());
                let after = settled(worker, Duration::from_secs(30));
                conversation = created.conversation;
                raw(template, surface, "created", &diff(&after, &last));
                rows.push((
                    template.to_string(),
                    format!("{}: conversation created", surface.name()),
                    counted(&diff(&after, &last), 1.0),
                ));
                last = after;
            }
            let before = last.clone();
            let mut statuses = Vec::new();
            let mut first_turn = None;
            for (n, text) in ["Shop có bàn phím cơ không?", "Giá bao nhiêu vậy shop?"]
                .iter()
                .take(turns)
                .enumerate()
            {
                let out = client.turn(site, surface, conversation.as_deref(), text, Instant::now());
                statuses.push(out.status);
                if conversation.is_none() {
                    conversation = out.conversation.clone();
                }
                if surface == Surface::Async && n == 0 {
                    // The background turn ends before the next is sent.
                    let _ = settled(worker, Duration::from_secs(30));
                }
                if surface == Surface::OpenAi && n == 0 {
                    // `chat_id: "new"` creates and answers: counted on its own.
                    let after = settled(worker, Duration::from_secs(30));
                    first_turn = Some(after);
                }
            }
            let after = match &first_turn {
                Some(mid) if turns == 1 => mid.clone(),
                _ => settled(worker, Duration::from_secs(30)),
            };
            raw(template, surface, "turns", &diff(&after, &before));
            if statuses.iter().any(|s| *s != 200 && *s != 202) {
                failures.push(format!(
                    "{template} {}: statuses {statuses:?}",
                    surface.name()
                ));
            }
            let label = format!("{}: turn", surface.name());
            if let Some(mid) = &first_turn {
                let new = counted(&diff(mid, &before), 1.0);
                let new_label = "OpenAI chat_id \"new\" (created + turn)".to_string();
                if template == "shop" {
                    budget_check(surface, true, &new_label, &new, &mut failures);
                }
                rows.push((template.to_string(), new_label, new));
                if turns > 1 {
                    let next = counted(&diff(&after, mid), (turns - 1) as f64);
                    if template == "shop" {
                        budget_check(surface, false, &label, &next, &mut failures);
                    }
                    rows.push((template.to_string(), label, next));
                }
            } else {
                let per_turn = counted(&diff(&after, &before), turns as f64);
                if template == "shop" {
                    budget_check(surface, false, &label, &per_turn, &mut failures);
                }
                rows.push((template.to_string(), label, per_turn));
            }
            last = after;
        }
    }
    (rows, failures)
}

/// Every counter that moved (`BENCH_LOAD_RAW=1`), to see what a figure is made of.
fn raw(template: &str, surface: Surface, what: &str, counts: &Counts) {
    if std::env::var("BENCH_LOAD_RAW").is_ok_and(|v| v == "1") {
        println!("  raw {template} {} {what}: {counts:?}", surface.name());
    }
}

/// The shop template's counted turn against the README's budget, as `storage_budget`
/// counts it: 5–7 D1 statements in 2 batches (the conversation's record sent on to the
/// shared D1; a background turn 6–8 in 2), 1 DO request (2 for a background turn), no queue
/// message (1, the background turn's job: the counted turns are a conversation's first,
/// whose messages are inside the history window and so never embedded); `chat_id:
/// \"new\"` 8–10 in 4 and 3 DO requests (created and its greeting stored in its object).
/// The object's storage operations are held to 6 on the widget and AI SDK turns; on the
/// async and OpenAI turns they are printed (the object reads its state again on some
/// turns, see the README). The
/// embedding consumer's work depends on the retrieval backend (the Vectorize double here,
/// the local index in the site's object in `storage_budget`): printed, not held.
fn budget_check(
    surface: Surface,
    new_chat: bool,
    label: &str,
    c: &Counted,
    failures: &mut Vec<String>,
) {
    // No statement on the shared D1 (issue 47) but the site's, read again once its cached
    // copy is 30 s old; DO requests are the conversation's object's and the site's (the
    // turn's rows sent on; an OpenAI turn also finds its chat in the conversation's).
    let (statements, batches, do_requests, queue) = match surface {
        Surface::Async => ((0.0, 1.0), (0.0, 0.0), 3.0, 1.0),
        // `chat_id: "new"`: the conversation's creation and its first turn.
        Surface::OpenAi if new_chat => ((0.0, 1.0), (0.0, 0.0), 5.0, 0.0),
        Surface::OpenAi => ((0.0, 1.0), (0.0, 0.0), 3.0, 0.0),
        _ => ((0.0, 1.0), (0.0, 0.0), 2.0, 0.0),
    };
    let within = |v: f64, (lo, hi): (f64, f64)| v >= lo && v <= hi;
    let storage_held = matches!(surface, Surface::Widget | Surface::AiSdk);
    let ok = within(c.sync_statements, statements)
        && within(c.sync_batches, batches)
        && c.do_requests == do_requests
        && (!storage_held || c.do_storage == 3.0)
        && c.queue_messages == queue;
    if !ok {
        failures.push(format!(
            "shop {label}: counted {c:?}; budget {statements:?} statements in {batches:?} batches, {do_requests} DO requests,{} {queue} queue messages",
            if storage_held { " 3 DO storage ops," } else { "" }
        ));
    }
}

// ---- Noise -----------------------------------------------------------------------------

/// Storage noise until `until`: a data set of `rows` rows uploaded to an analyst site
/// every minute, console stats on three large sites every 10 s.
fn storage_noise(
    shared: &Arc<Shared>,
    analyst: usize,
    large: [usize; 3],
    rows: usize,
    until: Instant,
) {
    let csv = concierge_e2e::bench::sales_csv(rows);
    let upload = {
        let shared = Arc::clone(shared);
        std::thread::spawn(move || {
            let key = shared.sites[analyst].keys.secret_key.clone();
            let mut next = Instant::now();
            while next < until {
                wait_until(next);
                let started = Instant::now();
                let (status, body) = into_parts(
                    agent()
                        .put(&format!(
                            "{}/admin/data/bench_noise?user_id=bench",
                            shared.base
                        ))
                        .set("x-api-key", &key)
                        .set("content-type", "text/csv")
                        .timeout(Duration::from_secs(300))
                        .send_string(&csv),
                );
                println!(
                    "  storage noise: {rows} rows uploaded: {status} in {:.1} s ({})",
                    started.elapsed().as_secs_f64(),
                    body.chars().take(160).collect::<String>()
                );
                next += Duration::from_secs(60);
            }
        })
    };
    let mut next = Instant::now();
    while next < until {
        wait_until(next);
        for &site in &large {
            let key = &shared.sites[site].keys.secret_key;
            let (status, _) = into_parts(
                agent()
                    .get(&format!("{}/admin/stats?days=30", shared.base))
                    .set("x-api-key", key)
                    .call(),
            );
            if status != 200 {
                println!("  storage noise: console stats answered {status}");
            }
        }
        next += Duration::from_secs(10);
    }
    let _ = upload.join();
}

/// CPU-only noise until `until`: stateless streams (nothing stored) on one site, as many as
/// keep workerd's CPU rate at `target_ms_per_s` (the steady rate plus what the storage noise
/// added), at most 8 at once.
fn cpu_noise(
    shared: &Arc<Shared>,
    worker: &Worker,
    site: usize,
    target_ms_per_s: f64,
    until: Instant,
) -> usize {
    let start = Instant::now();
    let start_cpu = workerd_cpu_ms(worker);
    let in_flight = Arc::new(AtomicU64::new(0));
    let mut sent = 0;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        let elapsed = start.elapsed().as_secs_f64();
        let burnt = workerd_cpu_ms(worker) - start_cpu;
        if burnt < target_ms_per_s * elapsed && in_flight.load(Ordering::Relaxed) < 8 {
            in_flight.fetch_add(1, Ordering::Relaxed);
            sent += 1;
            let shared = Arc::clone(shared);
            let in_flight = Arc::clone(&in_flight);
            std::thread::spawn(move || {
                let client = shared.client(0xFF_FF00 + sent as u64 % 200);
                let out = client.stateless(&shared.sites[site].keys, Instant::now());
                if out.status != 200 {
                    println!("  CPU-only noise: stateless stream answered {}", out.status);
                }
                in_flight.fetch_sub(1, Ordering::Relaxed);
            });
        }
    }
    sent
}

// ---- Figures ---------------------------------------------------------------------------

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index.min(values.len() - 1)]
}

/// The upstream's own time to first token, called directly (median of 10).
fn direct_ttft(upstream: &ScriptedUpstream) -> f64 {
    let mut times: Vec<f64> = (0..10)
        .map(|_| {
            let started = Instant::now();
            let response = agent()
                .post(&format!("{}/v1/chat/completions", upstream.base_url))
                .send_json(serde_json::json!({"model": "scripted", "stream": true,
                    "messages": [{"role": "user", "content": "x"}]}))
                .expect("the upstream answers");
            let mut reader = std::io::BufReader::new(response.into_reader());
            let mut line = String::new();
            loop {
                line.clear();
                if std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) == 0
                    || line.contains("\"content\"")
                {
                    break;
                }
            }
            let t = started.elapsed().as_secs_f64() * 1e3;
            let _ = std::io::Read::read_to_end(&mut reader, &mut Vec::new());
            t
        })
        .collect();
    percentile(&mut times, 0.5)
}

/// A phase's load figures.
#[derive(Debug, Clone, Default)]
struct PhaseFigures {
    wall_s: f64,
    scheduled: usize,
    answered: usize,
    lag_p99_ms: f64,
    workerd_cpu_ms: f64,
    driver_cpu_ms: f64,
    turns: usize,
}

fn phase_figures(records: &[Record], phase: Phase) -> PhaseFigures {
    let of: Vec<&Record> = records.iter().filter(|r| r.phase == phase).collect();
    let mut lags: Vec<f64> = of.iter().map(|r| r.out.lag.as_secs_f64() * 1e3).collect();
    PhaseFigures {
        scheduled: of.len(),
        answered: of.iter().filter(|r| r.out.status != 0).count(),
        lag_p99_ms: percentile(&mut lags, 0.99),
        turns: of.iter().filter(|r| r.turn && r.out.complete).count(),
        ..PhaseFigures::default()
    }
}

/// Added TTFT (ms over the upstream's own) of streamed turns matching `keep`.
fn added_ttft(records: &[Record], direct: f64, keep: impl Fn(&Record) -> bool) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.turn && r.surface != Surface::Async && r.out.complete && keep(r))
        .map(|r| r.out.first.as_secs_f64() * 1e3 - direct)
        .collect()
}

// ---- Correctness -----------------------------------------------------------------------

/// Every visit's history read back: its accepted nonces once each among its visitor
/// messages, no nonce of another visit anywhere. Returns (checked, failures).
fn check_histories(shared: &Shared, visits: &[Visit]) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let owner: HashMap<&str, usize> = visits
        .iter()
        .enumerate()
        .flat_map(|(i, v)| v.nonces.iter().map(move |(n, _)| (n.as_str(), i)))
        .collect();
    let mut checked = 0;
    for (i, visit) in visits.iter().enumerate() {
        let Some(conversation) = &visit.conversation else {
            continue;
        };
        let site = &shared.sites[visit.site].keys;
        let (status, body) = into_parts(
            agent()
                .get(&format!(
                    "{}/conversations/{conversation}/history",
                    shared.base
                ))
                .set("x-api-key", &site.secret_key)
                .call(),
        );
        checked += 1;
        if status != 200 {
            failures.push(format!(
                "history of {conversation} ({}): {status} {body}",
                visit.surface.name()
            ));
            continue;
        }
        let json: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let messages = json["messages"].as_array().cloned().unwrap_or_default();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for m in &messages {
            let content = m["content"].as_str().unwrap_or("");
            for piece in content.split("(mã ").skip(1) {
                let nonce = piece.split(')').next().unwrap_or("");
                match owner.get(nonce) {
                    Some(&o) if o == i => {
                        if m["role"] == "user" {
                            *seen.entry(nonce.to_string()).or_default() += 1;
                        }
                    }
                    Some(&o) => failures.push(format!(
                        "{conversation} (site {}) holds {nonce} of visit {o} on site {}",
                        site.id, shared.sites[visits[o].site].keys.id
                    )),
                    None => failures.push(format!("{conversation} holds an unknown nonce {nonce}")),
                }
            }
        }
        for (nonce, accepted) in &visit.nonces {
            let n = seen.get(nonce).copied().unwrap_or(0);
            if (*accepted && n != 1) || n > 1 {
                failures.push(format!(
                    "{nonce} ({} on {}) stored {n} times in {conversation}",
                    visit.surface.name(),
                    site.id
                ));
            }
        }
    }
    (checked, failures)
}

/// Every chat request the upstream received: the nonces in it belong to visits of one site.
/// Returns (prompts read, failures).
fn check_prompts(
    shared: &Shared,
    visits: &[Visit],
    upstream: &ScriptedUpstream,
) -> (usize, Vec<String>) {
    let site_of: HashMap<&str, usize> = visits
        .iter()
        .flat_map(|v| v.nonces.iter().map(move |(n, _)| (n.as_str(), v.site)))
        .collect();
    let mut failures = Vec::new();
    let requests = upstream.chat_requests();
    for request in &requests {
        let text = request.body["messages"].to_string();
        let sites: std::collections::BTreeSet<usize> = text
            .split("(mã ")
            .skip(1)
            .filter_map(|piece| site_of.get(piece.split(')').next().unwrap_or("")))
            .copied()
            .collect();
        if sites.len() > 1 {
            let ids: Vec<&str> = sites
                .iter()
                .map(|&s| shared.sites[s].keys.id.as_str())
                .collect();
            failures.push(format!("one prompt holds messages of sites {ids:?}"));
        }
    }
    (requests.len(), failures)
}

fn main() {
    let config = Config::from_env();
    let run_started = Instant::now();
    println!(
        "bench-load{}: {} sites; wrangler dev --local, debug routes and local traces off, binding counters on",
        if config.quick { " (QUICK)" } else { "" },
        config.sites
    );
    let upstream = ScriptedUpstream::start();
    upstream.set_default(reply());
    // Kept in the short mode only (a long run would hold every prompt): the prompts are
    // checked for another site's messages.
    upstream.record_requests(config.quick);
    let mut vars = bench_vars();
    vars.push(("COUNT_BINDINGS".into(), "on".into()));
    let worker = Worker::start(&WorkerOptions {
        vars,
        vectorize_double: Some(VectorizeDouble::default()),
        ..WorkerOptions::default()
    });
    let sites = seed::seed(
        &worker,
        &upstream.base_url,
        config.sites,
        config.api_per_template,
    );
    let shared = Arc::new(Shared {
        base: worker.base_url.clone(),
        sites,
        records: Mutex::new(Vec::new()),
        visits: Mutex::new(Vec::new()),
        clock: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        visit_ids: AtomicU64::new(1),
        think: config.think,
    });
    let direct = direct_ttft(&upstream);
    println!("upstream called directly: first token after {direct:.1} ms (median of 10)");

    // Counted pass.
    let templates: Vec<&'static str> = if config.quick {
        vec!["shop"]
    } else {
        TEMPLATES.iter().map(|(t, _)| *t).collect()
    };
    let (rows, budget_failures) = counted_pass(&worker, &shared, &templates, config.counted_turns);
    println!(
        "\nStorage calls counted at the bindings (one at a time, queued work included; per request or per turn):"
    );
    println!(
        "{:<10} {:<40} {:>8} {:>7} {:>8} {:>8} {:>8} {:>6} {:>4} {:>5} {:>6} {:>5} {:>5} {:>7} {:>7} {:>6}",
        "template",
        "surface",
        "D1 stmts",
        "batches",
        "rows rd",
        "rows wr",
        "D1 ms",
        "KV",
        "DO rq",
        "DO st",
        "rec sql",
        "queue",
        "limits",
        "emb D1",
        "emb que",
        "vector"
    );
    for (template, label, c) in &rows {
        println!(
            "{template:<10} {label:<40} {:>8.1} {:>7.1} {:>8.1} {:>8.1} {:>8.2} {:>6.1} {:>4.1} {:>5.1} {:>6.1} {:>5.1} {:>5.1} {:>7.1} {:>7.1} {:>6.1}{}",
            c.sync_statements,
            c.sync_batches,
            c.rows_read,
            c.rows_written,
            c.d1_ms,
            c.kv,
            c.do_requests,
            c.do_storage,
            c.record_sql,
            c.queue_messages,
            c.limits,
            c.embed_statements,
            c.embed_queue_messages,
            c.vectorize,
            if c.other > 0.0 {
                format!("  (+{:.1} other calls)", c.other)
            } else {
                String::new()
            }
        );
    }
    println!(
        "(D1 stmts, batches, DO, queue, limits: the request's own work (the Worker, its conversation object, for async the turn consumer); \
         rec sql: statements on the conversations' own records (their objects' SQLite, in-process). \
         rows and D1 ms: every D1 call, D1's own meta (local SQLite: D1 ms is a lower bound). \
         emb D1, emb que: the embedding consumer's D1 statements and the messages it sends on; vector: Vectorize (double) calls.)"
    );
    if std::env::var("BENCH_LOAD_COUNTED_ONLY").is_ok_and(|v| v == "1") {
        return;
    }

    // Step test, then the rate.
    let n = shared.sites.len();
    let zipf = Zipf::new(n);
    let rate = match config.rate {
        Some(rate) => rate,
        None => step_test(&shared, &worker, &zipf, config.step_seconds, direct),
    };
    println!(
        "\noffered rate: {rate:.2} turns/s (visits of 3 turns on average, Poisson arrivals, Zipf s=1 over {n} sites)"
    );

    // The timed phases.
    let mut figures: BTreeMap<Phase, PhaseFigures> = BTreeMap::new();
    let mut rss: Vec<(f64, Phase, f64)> = Vec::new();
    let sampler_stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Vec::<(f64, f64)>::new()));
    let mut threads = Vec::new();
    let runs_from = Instant::now();
    let sampler = {
        let stop = Arc::clone(&sampler_stop);
        let samples = Arc::clone(&samples);
        let pids = workerd_pids(&worker);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let mb: f64 = pids
                    .iter()
                    .filter_map(|pid| {
                        let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
                        let l = s.lines().find(|l| l.starts_with("VmRSS:"))?;
                        l.split_whitespace().nth(1)?.parse::<f64>().ok()
                    })
                    .sum::<f64>()
                    / 1024.0;
                samples
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((runs_from.elapsed().as_secs_f64(), mb));
                std::thread::sleep(Duration::from_secs(2));
            }
        })
    };
    let d1_dir = worker.state_dir().join("v3/d1");
    // Both kinds of object: a conversation's record, and its site's copy (issue 47).
    let do_dir = worker.state_dir().join("v3/do");
    // Messages and conversations stored: the rows the records inserted, counted (each
    // site's object keeps a copy; the shared D1 holds none since issue 47).
    let count_stored = |w: &Worker| -> (f64, f64) {
        let counts = counters(w);
        let n = |k: &str| counts.get(k).copied().unwrap_or(0.0);
        (
            n("object:do_sql.insert.messages"),
            n("object:do_sql.insert.conversations"),
        )
    };
    let mut disk_before = (0u64, 0u64, (0.0, 0.0));
    let mut disk_after = disk_before;
    let mut noise_extra_ms_per_s = 0.0;
    let mut steady_cpu_rate = 0.0;
    let large = [0, 1, 2];
    let analyst = (0..n)
        .find(|&i| shared.sites[i].template == "analyst")
        .unwrap_or(0);
    let cpu_site = (0..n)
        .rev()
        .find(|&i| shared.sites[i].template == "shop")
        .unwrap_or(0);
    let ten = Zipf::new(10.min(n));
    for (phase, seconds) in config.phases.clone() {
        if seconds <= 0.0 {
            continue;
        }
        if phase == Phase::Steady {
            disk_before = (
                dir_bytes(&d1_dir),
                dir_bytes(&do_dir),
                count_stored(&worker),
            );
        }
        let start = Instant::now();
        let until = start + Duration::from_secs_f64(seconds);
        shared
            .clock
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((start, phase));
        let (cpu0, drv0) = (workerd_cpu_ms(&worker), driver_cpu_ms());
        println!("phase {} ({seconds:.0} s)", phase.name());
        let zipf = if phase == Phase::TenSites {
            &ten
        } else {
            &zipf
        };
        std::thread::scope(|scope| {
            match phase {
                Phase::StorageNoise => {
                    let shared = Arc::clone(&shared);
                    let rows = config.noise_rows;
                    scope.spawn(move || storage_noise(&shared, analyst, large, rows, until));
                }
                Phase::CpuNoise => {
                    let shared = Arc::clone(&shared);
                    let worker = &worker;
                    let target = steady_cpu_rate + noise_extra_ms_per_s;
                    scope.spawn(move || {
                        let sent = cpu_noise(&shared, worker, cpu_site, target, until);
                        println!("  CPU-only noise: {sent} stateless streams on one site (target workerd {target:.0} ms CPU/s)");
                    });
                }
                _ => {}
            }
            arrivals(
                &shared,
                rate,
                zipf,
                until,
                0x5EED ^ phase as u64,
                &mut threads,
            );
            wait_until(until);
        });
        let wall = start.elapsed().as_secs_f64();
        let cpu = workerd_cpu_ms(&worker) - cpu0;
        let drv = driver_cpu_ms() - drv0;
        if phase == Phase::Steady {
            steady_cpu_rate = cpu / wall;
            disk_after = (
                dir_bytes(&d1_dir),
                dir_bytes(&do_dir),
                count_stored(&worker),
            );
        }
        if phase == Phase::StorageNoise {
            noise_extra_ms_per_s = (cpu / wall - steady_cpu_rate).max(0.0);
        }
        figures.insert(
            phase,
            PhaseFigures {
                wall_s: wall,
                workerd_cpu_ms: cpu,
                driver_cpu_ms: drv,
                ..PhaseFigures::default()
            },
        );
        rss.push((
            runs_from.elapsed().as_secs_f64(),
            phase,
            workerd_rss_mb(&worker),
        ));
    }
    shared.stop.store(true, Ordering::Relaxed);
    for handle in threads {
        let _ = handle.join();
    }
    sampler_stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    // Background turns and embeddings end before the histories are read.
    let _ = settled(&worker, Duration::from_secs(120));

    let records = shared
        .records
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let visits = shared
        .visits
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let (checked, mut gate_failures) = check_histories(&shared, &visits);
    if config.quick {
        let (prompts, foreign) = check_prompts(&shared, &visits, &upstream);
        println!(
            "{prompts} prompts sent upstream read: {} with another site's message",
            foreign.len()
        );
        gate_failures.extend(foreign);
    }
    let server_errors = records.iter().filter(|r| r.out.status >= 500).count();
    let transport = records.iter().filter(|r| r.out.status == 0).count();
    let limited: Vec<&Record> = records.iter().filter(|r| r.out.status == 429).collect();
    let foreign_429 = limited
        .iter()
        .filter(|r| r.out.error_code != "rate_limited")
        .count();
    let other_4xx: BTreeMap<String, usize> = records
        .iter()
        .filter(|r| (400..500).contains(&r.out.status) && r.out.status != 429)
        .fold(BTreeMap::new(), |mut m, r| {
            *m.entry(format!("{} {}", r.out.status, r.out.error_code))
                .or_default() += 1;
            m
        });
    let failed_streams = records
        .iter()
        .filter(|r| r.out.status == 200 && !r.out.complete)
        .count();
    if server_errors > 0 {
        gate_failures.push(format!("{server_errors} answers were 5xx"));
    }
    if transport > 0 {
        gate_failures.push(format!("{transport} requests got no answer"));
    }
    if foreign_429 > 0 {
        gate_failures.push(format!(
            "{foreign_429} 429s not from the configured limiters"
        ));
    }
    if failed_streams > 0 {
        // Which ones, and how they ended (the failed event's code, or none at all).
        let how: BTreeMap<String, usize> = records
            .iter()
            .filter(|r| r.out.status == 200 && !r.out.complete)
            .fold(BTreeMap::new(), |mut m, r| {
                let code = if r.out.error_code.is_empty() {
                    "cut short"
                } else {
                    r.out.error_code.as_str()
                };
                *m.entry(format!(
                    "{} {} {}, {}",
                    r.template,
                    r.surface.name(),
                    r.phase.name(),
                    code
                ))
                .or_default() += 1;
                m
            });
        gate_failures.push(format!(
            "{failed_streams} streams ended without their terminal event: {how:?}"
        ));
    }
    if !other_4xx.is_empty() {
        gate_failures.push(format!("4xx answers: {other_4xx:?}"));
    }
    println!(
        "\nCorrectness: {} visits, {} requests; {checked} histories read back; {} 429 (rate_limited); {server_errors} 5xx",
        visits.len(),
        records.len(),
        limited.len()
    );
    for f in gate_failures.iter().take(20) {
        println!("  FAIL {f}");
    }
    let gates_ok = gate_failures.is_empty();
    println!(
        "correctness gates: {}",
        if gates_ok { "PASS" } else { "FAIL" }
    );
    for f in &budget_failures {
        println!("  FAIL {f}");
    }
    println!(
        "counted pass (every request answered; the shop template within its budget): {}",
        if budget_failures.is_empty() {
            "PASS"
        } else {
            "FAIL"
        }
    );

    // Validity.
    let timed: Vec<Phase> = figures.keys().copied().collect();
    let mut valid = true;
    let mut phase_rows = Vec::new();
    for phase in &timed {
        let mut f = phase_figures(&records, *phase);
        let base = &figures[phase];
        f.wall_s = base.wall_s;
        f.workerd_cpu_ms = base.workerd_cpu_ms;
        f.driver_cpu_ms = base.driver_cpu_ms;
        let achieved = f.answered as f64 / f.scheduled.max(1) as f64;
        let driver_core = f.driver_cpu_ms / 1e3 / f.wall_s;
        let ok = achieved >= 0.98 && f.lag_p99_ms < 50.0 && driver_core < 0.15;
        valid &= ok;
        println!(
            "phase {:<15} {:>6} requests scheduled, {:>5.1}% answered, schedule lag p99 {:>6.1} ms, driver+upstream {:>5.1}% of a core, workerd {:>6.1} ms CPU/s, {}",
            phase.name(),
            f.scheduled,
            achieved * 100.0,
            f.lag_p99_ms,
            driver_core * 100.0,
            f.workerd_cpu_ms / f.wall_s,
            if ok { "valid" } else { "INVALID" }
        );
        phase_rows.push((*phase, f));
    }
    let samples = samples.lock().unwrap_or_else(|e| e.into_inner()).clone();
    print!("workerd RSS over time (MB):");
    let step = (samples.len() / 12).max(1);
    for (t, mb) in samples.iter().step_by(step) {
        print!(" {t:.0}s={mb:.0}");
    }
    println!();
    for (t, phase, mb) in &rss {
        println!("  end of {} at {t:.0} s: {mb:.0} MB", phase.name());
    }
    let (d1a, doa, (ma, ca)) = disk_before;
    let (d1b, dob, (mb, cb)) = disk_after;
    if mb > ma && cb > ca {
        let bytes = (d1b + dob).saturating_sub(d1a + doa) as f64;
        println!(
            "on disk (the local D1 files and the objects' files, WAL included, steady phase): {:.0} B per message, {:.0} B per conversation ({} messages, {} conversations added; D1 {:+} B, objects {:+} B)",
            bytes / (mb - ma),
            bytes / (cb - ca),
            mb - ma,
            cb - ca,
            d1b as i64 - d1a as i64,
            dob as i64 - doa as i64
        );
    }

    if config.quick {
        println!("\nQUICK mode: timings are not figures; gates only.");
    } else if !valid {
        println!(
            "\nINVALID run: the driver did not hold its schedule (see the phases above); no timed figures are printed."
        );
    } else {
        timed_report(&records, &phase_rows, direct);
    }
    println!("total {:.0} s", run_started.elapsed().as_secs_f64());
    if !(gates_ok && budget_failures.is_empty()) {
        std::process::exit(1);
    }
}

fn timed_report(records: &[Record], phases: &[(Phase, PhaseFigures)], direct: f64) {
    println!(
        "\nAdded time to first token (ms over the upstream's own, from the scheduled send time), steady phase:"
    );
    println!(
        "{:<10} {:<16} {:>6} {:>8} {:>8} {:>8}",
        "template", "surface", "turns", "p50", "p95", "p99"
    );
    for (template, _) in TEMPLATES {
        for surface in [Surface::Widget, Surface::AiSdk, Surface::OpenAi] {
            let mut v = added_ttft(records, direct, |r| {
                r.phase == Phase::Steady && r.template == template && r.surface == surface
            });
            if v.is_empty() {
                continue;
            }
            let len = v.len();
            println!(
                "{template:<10} {:<16} {len:>6} {:>8.1} {:>8.1} {:>8.1}",
                surface.name(),
                percentile(&mut v, 0.5),
                percentile(&mut v, 0.95),
                percentile(&mut v, 0.99)
            );
        }
    }
    // Quiet sites: outside the top 10 (and so not the noise sites).
    // Shop sites answer with one model call a turn; all templates mix one to three.
    for (what, shop_only) in [("quiet shop sites", true), ("all quiet sites", false)] {
        let quiet = |phase: Phase| {
            let mut v = added_ttft(records, direct, |r| {
                r.phase == phase && r.site >= 10 && (!shop_only || r.template == "shop")
            });
            percentile(&mut v, 0.99)
        };
        let (c, d) = (quiet(Phase::StorageNoise), quiet(Phase::CpuNoise));
        println!(
            "isolation delta, {what}: p99 under storage noise {c:.1} ms − under CPU-only noise {d:.1} ms = {:+.1} ms",
            c - d
        );
    }
    let per_turn = |phase: Phase| {
        phases
            .iter()
            .find(|(p, _)| *p == phase)
            .map(|(_, f)| f.workerd_cpu_ms / f.turns.max(1) as f64)
    };
    if let (Some(wide), Some(narrow)) = (per_turn(Phase::Steady), per_turn(Phase::TenSites)) {
        println!(
            "workerd CPU per turn: {wide:.1} ms over all sites (steady), {narrow:.1} ms on 10 sites: breadth ratio {:.2}×",
            wide / narrow
        );
    }
}

/// Offered rates doubling from 1 turn/s, `seconds` each: the last step whose requests were
/// answered (≥ 98%) with the schedule held (lag p99 < 50 ms) and the shop widget turns'
/// added TTFT median at most twice the first step's plus 20 ms is where the Worker still
/// keeps up; the benchmark runs at 30% of it.
fn step_test(shared: &Arc<Shared>, worker: &Worker, zipf: &Zipf, seconds: f64, direct: f64) -> f64 {
    println!("\nstep test ({seconds:.0} s a step):");
    let mut held = 1.0;
    let mut first_p50 = None;
    let mut threads = Vec::new();
    for (i, rate) in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0].into_iter().enumerate() {
        shared
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let cpu0 = workerd_cpu_ms(worker);
        let start = Instant::now();
        arrivals(
            shared,
            rate,
            zipf,
            start + Duration::from_secs_f64(seconds),
            0x57E9 + i as u64,
            &mut threads,
        );
        shared.stop.store(true, Ordering::Relaxed);
        for handle in threads.drain(..) {
            let _ = handle.join();
        }
        shared.stop.store(false, Ordering::Relaxed);
        let records =
            std::mem::take(&mut *shared.records.lock().unwrap_or_else(|e| e.into_inner()));
        let answered = records.iter().filter(|r| r.out.status != 0).count() as f64
            / records.len().max(1) as f64;
        let mut lags: Vec<f64> = records
            .iter()
            .map(|r| r.out.lag.as_secs_f64() * 1e3)
            .collect();
        // Shop widget turns only: the templates' own model calls differ (one call or three).
        let mut ttft = added_ttft(&records, direct, |r| {
            r.template == "shop" && r.surface == Surface::Widget
        });
        let p50 = percentile(&mut ttft, 0.5);
        let lag = percentile(&mut lags, 0.99);
        let cpu = (workerd_cpu_ms(worker) - cpu0) / start.elapsed().as_secs_f64();
        if first_p50.is_none() && !p50.is_nan() {
            first_p50 = Some(p50);
        }
        let base = first_p50.unwrap_or(f64::NAN);
        // Without a sample (NaN) a step is not slow.
        let slow = p50 > 2.0 * base + 20.0;
        let ok = answered >= 0.98 && lag < 50.0 && !slow;
        println!(
            "  {rate:>4.0} turns/s: {} requests, {:.1}% answered, shop widget added TTFT p50 {p50:.1} ms, lag p99 {lag:.1} ms, workerd {cpu:.0} ms CPU/s: {}",
            records.len(),
            answered * 100.0,
            if ok { "holds" } else { "saturated" }
        );
        if !ok {
            break;
        }
        held = rate;
    }
    // The step test's visits are not part of the correctness check.
    shared
        .visits
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    0.3 * held
}
