//! What the end-to-end benchmarks (`bench_e2e`, `bench_cold_start`) share: the Worker's
//! vars as in production, and the flags of a local `wrangler dev` of their own.

use std::path::Path;

use crate::{free_port, test_vars};

/// The tests' vars with the debug routes off, as in production (`wrangler.toml`): with
/// them on, every turn first looks for a staged test script (a KV read), which production
/// never does.
pub fn bench_vars() -> Vec<(String, String)> {
    test_vars()
        .into_iter()
        .map(|(name, value)| match name.as_str() {
            "DEBUG_ROUTES" => (name, "off".to_string()),
            _ => (name, value),
        })
        .collect()
}

/// `wrangler dev`'s flags for a local run on 127.0.0.1:`port` (an inspector on a free
/// port), its state in `state`, without the interactive session.
pub fn local_dev_flags(port: u16, state: &Path) -> Vec<String> {
    vec![
        "--local".into(),
        "--ip".into(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string(),
        "--inspector-port".into(),
        free_port().to_string(),
        "--persist-to".into(),
        state.to_string_lossy().into_owned(),
        "--show-interactive-dev-session=false".into(),
    ]
}

/// A sales data set of `rows` rows as CSV (header, then day, platform, product, quantity,
/// revenue): the upload of the load benchmark's storage noise and of the noisy-neighbour
/// test, one merchant's large data work.
pub fn sales_csv(rows: usize) -> String {
    use std::fmt::Write as _;
    let mut csv = String::from("ngay,nen_tang,san_pham,so_luong,doanh_thu\n");
    for i in 0..rows {
        let _ = writeln!(
            csv,
            "2024-{:02}-{:02},{},SP{},{},{}",
            i % 12 + 1,
            i % 28 + 1,
            ["Shopee", "Lazada", "Tiki"][i % 3],
            i % 997,
            i % 50 + 1,
            (i % 1000) * 10_000
        );
    }
    csv
}
