//! Streams held per client (issue 39's abuse benchmark): one client opens `n` live streams
//! (`GET /conversations/{id}/events`) of one conversation and keeps them open; how many the
//! Worker accepted, and how it refused the others.
//!
//! Self-contained (only `ureq` and `serde_json`), so the abuse benchmark can include it
//! (`mod bench_streams;` or `#[path]`); `tests/src/bin/bench_streams.rs` runs it on its own.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What [`streams_held_per_client`] saw.
#[derive(Debug, Clone, Default)]
pub struct StreamsHeld {
    /// Streams asked for.
    pub asked: usize,
    /// Streams opened (200, `text/event-stream`) and held open to the end of the run.
    pub accepted: usize,
    /// Streams refused, by status and error code (`429 too_many_streams`).
    pub refused: Vec<(u16, String)>,
    /// How long opening all of them took.
    pub elapsed: Duration,
}

impl StreamsHeld {
    /// As one JSON line.
    pub fn json(&self) -> Value {
        let mut codes = std::collections::BTreeMap::<String, usize>::new();
        for (status, code) in &self.refused {
            *codes.entry(format!("{status} {code}")).or_default() += 1;
        }
        json!({
            "bench": "streams_held_per_client",
            "asked": self.asked,
            "accepted": self.accepted,
            "refused": self.refused.len(),
            "refusals": codes,
            "elapsed_ms": self.elapsed.as_millis() as u64,
        })
    }
}

/// Opens `n` live streams of conversation `conversation` at `base_url` (`http://host:port`)
/// with the API headers `headers`, one after another from this one client, holding each
/// accepted one open until all were asked; then closes them.
pub fn streams_held_per_client(
    base_url: &str,
    conversation: &str,
    headers: &[(&str, &str)],
    n: usize,
) -> StreamsHeld {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(5))
        .build();
    let url = format!("{base_url}/conversations/{conversation}/events");
    let started = Instant::now();
    let mut held = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..n {
        let mut request = agent.get(&url);
        for (name, value) in headers {
            request = request.set(name, value);
        }
        match request.call() {
            Ok(response) if response.content_type().starts_with("text/event-stream") => {
                // Kept open (unread beyond what arrived) until the run ends.
                held.push(response.into_reader());
            }
            Ok(response) => refused.push((response.status(), String::from("not_a_stream"))),
            Err(ureq::Error::Status(status, response)) => {
                let body = response.into_string().unwrap_or_default();
                let code = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| v["error"]["code"].as_str().map(String::from))
                    .unwrap_or_default();
                refused.push((status, code));
            }
            Err(error) => refused.push((0, error.to_string())),
        }
    }
    let result = StreamsHeld {
        asked: n,
        accepted: held.len(),
        refused,
        elapsed: started.elapsed(),
    };
    drop(held);
    result
}
