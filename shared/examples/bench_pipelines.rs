//! Issue 24, defect 3's benchmark: every pipeline of `tests/corpus/analyst_pipelines.json`
//! (the seed's questions, heavy-but-valid pipelines, the bypass classes) run as
//! `execute_aggregation` runs it (validate, evaluate within the per-call budget, cap the
//! result) over the demo data (1,200 orders) and over 50,000 orders (the row cap). Prints
//! each pipeline's median time of 3, its work units, the bytes the budget charged (wasm32
//! estimate) and the native heap it took at its peak (a counting allocator), then the worst
//! accepted and the worst refused pipeline beside the targets (≤ 1 s, ≤ 32 MB).
//!
//! Run: `sh scripts/bench-pipelines.sh` (release profile: `concierge-core` is built as the
//! Worker builds it, size-optimised).
#![allow(clippy::print_stdout, clippy::unwrap_used)]
// The one unsafe part: a counting global allocator wrapping `System` (measurement only).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use concierge_core::flows::analyst::budget::{Budget, MAX_BYTES, MAX_WORK};
use concierge_core::flows::analyst::cap::{MAX_RESULT_CHARS, cap_result};
use concierge_core::flows::analyst::eval::evaluate_within;
use concierge_core::flows::analyst::pipeline::{Owned, validate};
use serde_json::{Value, json};

include!("../tests/corpus/analyst_demo.rs");

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grow(new_size);
        }
        p
    }
}

fn grow(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One run's figures.
struct Run {
    outcome: String,
    accepted: bool,
    time: Duration,
    work: u64,
    bytes: u64,
    peak: usize,
}

fn run_once(pipeline: &Value, rows: &[Value], foreign: &[(String, Vec<Value>)]) -> Run {
    let owned = [
        Owned {
            id: "c1",
            name: "don_hang",
        },
        Owned {
            id: "c2",
            name: "luong_nhan_vien",
        },
    ];
    let input = rows.to_vec();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let mut budget = Budget::default();
    let start = Instant::now();
    let lookup = |id: &str| -> &[Value] {
        foreign
            .iter()
            .find(|(j, _)| j == id)
            .map_or(&[], |(_, r)| r.as_slice())
    };
    let (outcome, accepted) = match validate(pipeline, &owned) {
        Err(e) => (format!("refused by the validator: {e}"), false),
        Ok(checked) => match evaluate_within(&checked.stages, input, &lookup, &mut budget) {
            Ok(rows) => {
                let n = rows.len();
                let capped = cap_result(json!({ "rows": rows }), MAX_RESULT_CHARS);
                drop(capped);
                (format!("{n} rows"), true)
            }
            Err(e) => {
                let kind = if e.contains("too much work") {
                    "work"
                } else if e.contains("MB of intermediate") {
                    "bytes"
                } else {
                    "other"
                };
                (format!("refused ({kind})"), false)
            }
        },
    };
    let time = start.elapsed();
    Run {
        outcome,
        accepted,
        time,
        work: budget.work_used(),
        bytes: budget.bytes_used(),
        peak: PEAK.load(Ordering::Relaxed).saturating_sub(before),
    }
}

fn median_of_3(pipeline: &Value, rows: &[Value], foreign: &[(String, Vec<Value>)]) -> Run {
    let mut runs: Vec<Run> = (0..3).map(|_| run_once(pipeline, rows, foreign)).collect();
    runs.sort_by_key(|r| r.time);
    runs.swap_remove(1)
}

fn mb(bytes: f64) -> f64 {
    bytes / (1024.0 * 1024.0)
}

fn bench(label: &str, orders: usize, corpus: &[Value]) {
    let rows = demo_orders(orders);
    let salaries = demo_salaries(15);
    let foreign = vec![
        ("c1".to_string(), rows.clone()),
        ("c2".into(), salaries.clone()),
    ];
    println!("\n## {label}: {orders} orders, 15 salaries");
    println!(
        "{:<58} {:>26} {:>9} {:>11} {:>9} {:>9}",
        "pipeline", "outcome", "ms", "work", "budget MB", "heap MB"
    );
    let mut worst_ok: Option<(String, Run)> = None;
    let mut worst_refused: Option<(String, Run)> = None;
    let (mut max_ok_bytes, mut max_ok_peak) = (0u64, 0usize);
    let mut slowest_unit: (f64, String) = (0.0, String::new());
    for entry in corpus {
        let name = entry["name"].as_str().unwrap_or_default();
        let data = if entry["connection"] == "luong_nhan_vien" {
            &salaries
        } else {
            &rows
        };
        let run = median_of_3(&entry["pipeline"], data, &foreign);
        println!(
            "{:<58} {:>26} {:>9.1} {:>11} {:>9.1} {:>9.1}",
            name.chars().take(58).collect::<String>(),
            run.outcome.chars().take(26).collect::<String>(),
            run.time.as_secs_f64() * 1000.0,
            run.work,
            mb(run.bytes as f64),
            mb(run.peak as f64)
        );
        // Per unit, among runs whose work dominates their fixed cost (loading and dropping
        // the rows).
        let per_unit = run.time.as_nanos() as f64 / run.work.max(1) as f64;
        if run.work >= MAX_WORK / 4 && per_unit > slowest_unit.0 {
            slowest_unit = (per_unit, name.to_string());
        }
        let slot = if run.accepted {
            max_ok_bytes = max_ok_bytes.max(run.bytes);
            max_ok_peak = max_ok_peak.max(run.peak);
            &mut worst_ok
        } else {
            &mut worst_refused
        };
        if slot.as_ref().is_none_or(|(_, w)| run.time > w.time) {
            *slot = Some((name.to_string(), run));
        }
    }
    let target = "target ≤ 1 s, ≤ 32 MB";
    if let Some((name, w)) = worst_ok {
        println!(
            "worst accepted pipeline: {:.1} ms ({name}); most bytes produced by an accepted \
             pipeline: {:.1} MB budget estimate (wasm32), {:.1} MB native heap peak — {target}",
            w.time.as_secs_f64() * 1000.0,
            mb(max_ok_bytes as f64),
            mb(max_ok_peak as f64)
        );
    }
    if let Some((name, w)) = worst_refused {
        println!(
            "slowest refusal: {:.1} ms ({name}), {:.1} MB native heap peak",
            w.time.as_secs_f64() * 1000.0,
            mb(w.peak as f64)
        );
    }
    if !slowest_unit.1.is_empty() {
        println!(
            "slowest work unit of a run doing ≥ {} units: {:.1} ns ({}) → all {MAX_WORK} units \
             ≈ {:.0} ms",
            MAX_WORK / 4,
            slowest_unit.0,
            slowest_unit.1,
            slowest_unit.0 * MAX_WORK as f64 / 1e6
        );
    }
}

fn main() {
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        let load: String = load.split(' ').take(3).collect::<Vec<_>>().join(" ");
        println!("load average while running: {load}");
    }
    let corpus: Vec<Value> =
        serde_json::from_str(include_str!("../tests/corpus/analyst_pipelines.json")).unwrap();
    println!(
        "# execute_aggregation under the per-call budget ({MAX_WORK} work units, {} MB); {} pipelines",
        MAX_BYTES >> 20,
        corpus.len()
    );
    bench("demo data", 1200, &corpus);
    bench("the row cap", 50_000, &corpus);
}
