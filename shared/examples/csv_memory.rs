//! What a data-set upload costs in memory: the peak heap of parsing and typing one
//! (`parse_csv` + `prepare_table`, what `PUT /admin/data/{name}` does with a CSV body)
//! for inputs of the shapes an attacker would pick within the 32 MB body, and for the
//! 100,000-row benchmark data set. Measured with a counting allocator on this host
//! (64-bit: `String` 24 bytes, `Value` 32); the Worker's wasm32 halves the pointer-sized
//! parts. Each figure is the median of 3 runs.
//!
//! `cargo run --release -p concierge-core --example csv_memory`

#![allow(clippy::print_stdout)]
// A counting global allocator is the one way to measure the heap; it only forwards.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use concierge_core::flows::analyst::data::{parse_csv, prepare_table};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                + (new_size - layout.size());
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn upload(text: &str) -> (usize, String, u128) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let started = Instant::now();
    let outcome = match parse_csv(text).and_then(|(h, c)| prepare_table(h, c)) {
        Ok(prepared) => format!("accepted, {} rows", prepared.rows.len()),
        Err(err) => format!("refused: {}", err.chars().take(70).collect::<String>()),
    };
    let ms = started.elapsed().as_millis();
    (PEAK.load(Ordering::Relaxed) - base, outcome, ms)
}

fn main() {
    let mb = 1024 * 1024;
    let mut bench = String::from("ngay,nen_tang,san_pham,so_luong,doanh_thu\n");
    for i in 0..100_000u64 {
        bench.push_str(&format!(
            "{}/{}/2024,Shopee,Áo thun,{},{}\n",
            1 + i % 28,
            1 + (i / 28) % 12,
            1 + i % 5,
            (1 + i % 5) * 150_000
        ));
    }
    let header = |n: usize| {
        (1..=n)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut cases: Vec<(&str, String)> = vec![
        ("benchmark: 100,000 rows x 5 columns", bench),
        (
            "one 30 MB cell",
            format!("a,b\n1,\"{}\"\n", "x".repeat(30 * mb)),
        ),
        (
            "one row of 30 million empty cells",
            format!("a\n{}\n", ",".repeat(30 * mb)),
        ),
        (
            "header of 10 million one-letter columns",
            format!("{}\n", vec!["a"; 10_000_000].join(",")),
        ),
    ];
    // 200,000 rows of 80 one-digit cells: 32 MB, 16 million cells.
    let line = format!("{}\n", vec!["1"; 80].join(","));
    cases.push((
        "200,000 rows x 80 one-digit cells (16 M cells)",
        format!("{}\n{}", header(80), line.repeat(200_000)),
    ));
    // At the bounds: 1 000 000 cells, wide (5,000 rows x 200 columns) and narrow
    // (200,000 rows x 5 columns), then one row over.
    let line = format!("{}\n", vec!["1"; 200].join(","));
    cases.push((
        "5,000 rows x 200 one-digit cells (1 M cells)",
        format!("{}\n{}", header(200), line.repeat(5_000)),
    ));
    let line = format!("{}\n", ["7"; 5].join(","));
    cases.push((
        "200,000 rows x 5 one-digit cells (1 M cells)",
        format!("{}\n{}", header(5), line.repeat(200_000)),
    ));
    let line = format!("{}\n", vec!["7"; 100].join(","));
    cases.push((
        "10,001 rows x 100 one-digit cells (1 M + 100 cells)",
        format!("{}\n{}", header(100), line.repeat(10_001)),
    ));
    println!("| input | body | peak heap (median of 3) | time | outcome |");
    println!("|---|---|---|---|---|");
    for (name, text) in &cases {
        let mut runs: Vec<(usize, String, u128)> = (0..3).map(|_| upload(text)).collect();
        runs.sort_by_key(|r| r.0);
        let (peak, outcome, _) = runs[1].clone();
        let mut times: Vec<u128> = runs.iter().map(|r| r.2).collect();
        times.sort_unstable();
        println!(
            "| {name} | {:.1} MB | {:.1} MB | {} ms | {outcome} |",
            text.len() as f64 / mb as f64,
            peak as f64 / mb as f64,
            times[1]
        );
    }
}
