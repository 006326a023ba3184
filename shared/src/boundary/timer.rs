//! The timer boundary: waiting, for timeouts and tests' scripted delays.

/// Waits. The Worker implements it with `worker::Delay`; tests use
/// [`MemoryTimer`](crate::memory::MemoryTimer), whose virtual time jumps to the next
/// deadline whenever everything is waiting.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait Timer {
    /// Resolves once `ms` milliseconds have passed.
    async fn sleep(&self, ms: u64);
}
