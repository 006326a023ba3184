//! The timer boundary: waiting, for timeouts and tests' scripted delays; and how the
//! clock's milliseconds are written (ISO-8601 UTC).

use alloc::string::String;

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

/// ISO-8601 UTC of Unix milliseconds (`2025-09-09T09:00:00Z`).
pub fn iso_of_ms(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    alloc::format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
