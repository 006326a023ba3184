//! The core's [`Timer`] over the Workers runtime's `setTimeout` (`worker::Delay`), for tool
//! timeouts and parallel stages' per-task timeouts.

use core::time::Duration;

use concierge_core::boundary::Timer;
use worker::Delay;

/// The Worker's timer.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WorkerTimer;

impl Timer for WorkerTimer {
    async fn sleep(&self, ms: u64) {
        Delay::from(Duration::from_millis(ms)).await;
    }
}
