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
