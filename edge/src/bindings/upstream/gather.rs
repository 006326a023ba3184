//! How a streaming answer is read: a few chunks at a time once it streams.

/// How many bytes the next read of a streaming answer waits for: about [`GATHER_MS`] of
/// the stream at the rate it has been arriving. A model's tokens come a few ms apart, one
/// HTTP chunk each; reading them a few at a time divides the Worker's cost per token (a
/// read costs far more than its bytes), and the visitor still sees text about every 50 ms,
/// as often as the response body is written anyway
/// ([`Coalescing`](super::super::js_stream::Coalescing)).
/// The first token is read alone (no first-token delay). When the model slows down, the
/// rate follows within a read or two; should it pause mid-answer, the text of at most the
/// last ~50 ms at the old rate waits for its next tokens or its end.
#[derive(Debug, Default)]
pub(super) struct Gather {
    /// When the last read ended (ms).
    last_ms: Option<f64>,
    /// Bytes per ms, smoothed.
    rate: f64,
}

/// How long a gathered read lasts at the stream's rate: the body's write interval
/// (`js_stream`'s `FLUSH_INTERVAL_MS`).
const GATHER_MS: f64 = 50.0;
/// The most a read waits for (a bound for very fast streams).
const GATHER_MAX_BYTES: f64 = 8_192.0;

impl Gather {
    /// A read that delivered no text yet: the next one is read as it comes.
    pub(super) fn restart(&mut self) {
        self.last_ms = Some(worker::Date::now().as_millis() as f64);
    }

    /// After a read of `bytes`: the least bytes the next read waits for.
    pub(super) fn next_min(&mut self, bytes: usize) -> u32 {
        let now = worker::Date::now().as_millis() as f64;
        let Some(last) = self.last_ms.replace(now) else {
            return 1;
        };
        let sample = bytes as f64 / (now - last).max(1.0);
        self.rate = if self.rate == 0.0 {
            sample
        } else {
            (self.rate + sample) / 2.0
        };
        (self.rate * GATHER_MS).clamp(1.0, GATHER_MAX_BYTES) as u32
    }
}
