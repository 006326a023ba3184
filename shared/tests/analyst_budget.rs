//! Issue 24, defect 3: `execute_aggregation` has a work and memory bound. Every pipeline of
//! the corpus (`corpus/analyst_pipelines.json`: the seed's questions, heavy-but-valid
//! pipelines and the bypass classes — `$lookup` fan-out, `$lookup` on missing/null keys,
//! `$concat` growth, `$push`, `$unwind`, repeated `$lookup`, deep and wide expressions,
//! `$regex` pathologies, sorts of huge intermediate sets) over the demo data either
//! answers — the same rows as the unbounded reference evaluator — or is refused with a
//! sentence the model can act on; and the heap it takes, measured by a counting allocator,
//! stays under a ceiling. Time is not asserted here (no timed tests): the benchmark
//! `scripts/bench-pipelines.sh` prints it.
#![allow(clippy::unwrap_used)]
// The one unsafe part: a counting global allocator wrapping `System` (measurement only).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows};
use concierge_core::flows::analyst::cap::{MAX_RESULT_CHARS, cap_result};
use concierge_core::flows::analyst::eval::evaluate;
use concierge_core::flows::analyst::pipeline::{MAX_LIMIT, Owned, validate};
use concierge_core::flows::analyst::tools::{DataTools, RowSource};
use concierge_core::graph::block_on;
use serde_json::{Value, json};

include!("corpus/analyst_demo.rs");

/// Counts live and peak heap bytes of the whole test binary.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);

/// Live bytes past which allocations fail (the test aborts instead of swapping the machine).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LIVE.load(Ordering::Relaxed) + layout.size() > LIMIT.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
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
        if LIVE.load(Ordering::Relaxed) + new_size > LIMIT.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
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
    TOTAL.fetch_add(size, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measurement at a time (the counters are global).
static LOCK: Mutex<()> = Mutex::new(());

/// `f`'s result, the peak heap above what was live before it, and the bytes it allocated.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let total = TOTAL.load(Ordering::Relaxed);
    LIMIT.store(before + 4 * PEAK_CEILING, Ordering::Relaxed);
    let out = f();
    LIMIT.store(usize::MAX, Ordering::Relaxed);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    (out, peak, TOTAL.load(Ordering::Relaxed) - total)
}

/// Native heap a tool call may take at its peak: the budget is 32 MB as the Worker
/// (wasm32) lays values out; 64-bit values are about twice as large.
const PEAK_CEILING: usize = 80 * 1024 * 1024;
/// Bytes a tool call may allocate in all (a proxy for its work).
const TOTAL_CEILING: usize = 600 * 1024 * 1024;

struct Rows(Vec<(String, Vec<Value>)>);

impl RowSource for Rows {
    fn load<'a>(&'a self, id: &'a str) -> DataFuture<'a, DataRows> {
        Box::pin(async move {
            Ok(DataRows {
                rows: self
                    .0
                    .iter()
                    .find(|(i, _)| i == id)
                    .map(|(_, r)| r.clone())
                    .unwrap_or_default(),
                over_cap: false,
            })
        })
    }
}

fn connection(id: &str, name: &str, rows: &[Value]) -> DataConnection {
    let fields = rows
        .first()
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| DataField {
                    name: k.clone(),
                    kind: if v.is_number() { "number" } else { "string" }.into(),
                    examples: vec![],
                })
                .collect()
        })
        .unwrap_or_default();
    DataConnection {
        id: id.into(),
        user_id: "shop-owner".into(),
        name: name.into(),
        description: String::new(),
        row_count: rows.len() as u64,
        fields,
    }
}

fn corpus() -> Vec<(String, String, Value)> {
    let list: Vec<Value> =
        serde_json::from_str(include_str!("corpus/analyst_pipelines.json")).unwrap();
    list.into_iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["connection"].as_str().unwrap().to_string(),
                c["pipeline"].clone(),
            )
        })
        .collect()
}

/// The refusals a model can act on: the validator's, or the budget's (which say what to
/// change).
fn actionable(message: &str) -> bool {
    let budget = message.contains("$match") && message.contains("$limit");
    let validator = [
        "not allowed",
        "at most",
        "more than",
        "deeper than",
        "too complex",
        "not available",
        "is blocked",
    ]
    .iter()
    .any(|s| message.contains(s));
    budget || validator
}

#[test]
fn every_corpus_pipeline_answers_within_bounds_or_is_refused() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let orders = demo_orders(1200);
    let salaries = demo_salaries(15);
    let source = Rows(vec![
        ("c1".into(), orders.clone()),
        ("c2".into(), salaries.clone()),
    ]);
    let connections = vec![
        connection("c1", "don_hang", &orders),
        connection("c2", "luong_nhan_vien", &salaries),
    ];
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
    let tools = DataTools {
        connections: &connections,
        source: &source,
    };
    let corpus = corpus();
    assert!(corpus.len() >= 40, "{} pipelines", corpus.len());
    let (mut answered, mut refused) = (0, 0);
    for (name, conn, pipeline) in corpus {
        let args = json!({"connection_name": conn, "pipeline": pipeline});
        let (out, peak, total) = measure(|| block_on(tools.run("execute_aggregation", args)));
        let outcome = out.as_ref().map_or_else(
            |e| e.message().chars().take(40).collect(),
            |r| format!("{} rows", r["row_count"]),
        );
        eprintln!(
            "{name:<60} {outcome:<42} peak {:>4} MB, allocated {:>4} MB",
            peak >> 20,
            total >> 20
        );
        assert!(
            peak <= PEAK_CEILING,
            "{name}: peak heap {} MB over {} MB",
            peak >> 20,
            PEAK_CEILING >> 20
        );
        assert!(
            total <= TOTAL_CEILING,
            "{name}: allocated {} MB over {} MB",
            total >> 20,
            TOTAL_CEILING >> 20
        );
        match out {
            Ok(result) => {
                answered += 1;
                // The bound never changes an answer: the reference evaluator agrees.
                let checked = validate(&pipeline, &owned).unwrap();
                let lookup = |id: &str| {
                    if id == "c1" {
                        orders.clone()
                    } else {
                        salaries.clone()
                    }
                };
                let source_rows = if conn == "don_hang" {
                    orders.clone()
                } else {
                    salaries.clone()
                };
                let mut want = evaluate(&checked.stages, source_rows, &lookup).unwrap();
                want.truncate(MAX_LIMIT as usize);
                assert_eq!(result["rows"], Value::Array(want), "{name}");
            }
            Err(e) => {
                refused += 1;
                assert!(actionable(e.message()), "{name}: {}", e.message());
            }
        }
    }
    // Both outcomes occur: the corpus is neither all toy nor all refused.
    assert!(
        answered >= 20 && refused >= 10,
        "{answered} answered, {refused} refused"
    );
}

#[test]
fn the_bypass_classes_are_refused_with_what_to_change() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let orders = demo_orders(1200);
    let source = Rows(vec![("c1".into(), orders.clone())]);
    let connections = vec![connection("c1", "don_hang", &orders)];
    let tools = DataTools {
        connections: &connections,
        source: &source,
    };
    let refused = [
        "lookup: missing key + unwind",
        "lookup: twenty stages rewriting one alias",
        "lookup: chain of five on a missing key",
        "concat: 4x chain, 11 stages, one row",
        "concat: 4x chain, 13 stages, one row",
        "group: push every row's joined array",
        "sort: huge intermediate set",
    ];
    for (name, conn, pipeline) in corpus() {
        if !refused.contains(&name.as_str()) {
            continue;
        }
        let args = json!({"connection_name": conn, "pipeline": pipeline});
        let (out, peak, _) = measure(|| block_on(tools.run("execute_aggregation", args)));
        let message = out.err().map(|e| e.message().to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("the pipeline")
                    && m.contains("$match first")
                    && m.contains("$limit")),
            "{name}: {message:?} (peak {} MB)",
            peak >> 20
        );
    }
}

#[test]
fn capping_a_huge_result_does_not_copy_it_whole() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let huge = json!({"rows": [{"s": "x".repeat(20 << 20)}], "row_count": 1});
    let (capped, peak, _) = measure(|| cap_result(huge, MAX_RESULT_CHARS));
    assert!(capped.to_string().chars().count() <= MAX_RESULT_CHARS);
    assert!(peak < 1 << 20, "capping took {} KB", peak >> 10);
}

#[test]
fn a_call_reading_more_than_two_capped_data_sets_is_refused_before_loading() {
    let orders = demo_orders(10);
    let source = Rows(vec![
        ("c1".into(), orders.clone()),
        ("c2".into(), orders.clone()),
    ]);
    let mut big = connection("c1", "don_hang", &orders);
    big.row_count = 50_000;
    let mut other = connection("c2", "don_hang_2", &orders);
    other.row_count = 50_000;
    let connections = vec![big, other];
    let tools = DataTools {
        connections: &connections,
        source: &source,
    };
    let join = |from: &str| {
        json!({"$lookup": {"from": from, "localField": "san_pham", "foreignField": "san_pham",
                           "as": "j"}})
    };
    // Its own rows and one other capped data set: allowed.
    let ok = block_on(tools.run(
        "execute_aggregation",
        json!({"connection_name": "don_hang", "pipeline": [join("don_hang_2"), join("don_hang_2")]}),
    ));
    assert!(ok.is_ok(), "{:?}", ok.err());
    // A third load (a self-join plus another data set) is not.
    let err = block_on(tools.run(
        "execute_aggregation",
        json!({"connection_name": "don_hang", "pipeline": [join("don_hang"), join("don_hang_2")]}),
    ))
    .unwrap_err();
    assert!(
        err.message().contains("rows per call") && err.message().contains("aggregate_data"),
        "{}",
        err.message()
    );
}
