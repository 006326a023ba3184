//! In-memory ids, clock, embedding queue and logger.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::boundary::{Clock, EmbedQueue, Ids, LogRecord, Logger};
use crate::conversation::EmbedJob;

/// Ids `{prefix}1`, `{prefix}2`, …
#[derive(Debug)]
pub struct SequentialIds {
    prefix: String,
    next: Cell<u64>,
}

impl SequentialIds {
    /// Ids starting at `{prefix}1`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.into(),
            next: Cell::new(1),
        }
    }
}

impl Default for SequentialIds {
    fn default() -> Self {
        Self::new("id")
    }
}

impl Ids for SequentialIds {
    fn new_id(&self) -> String {
        let n = self.next.get();
        self.next.set(n + 1);
        format!("{}{n}", self.prefix)
    }
}

/// A clock that starts at a given time and advances by a fixed step on every reading.
#[derive(Debug)]
pub struct SteppingClock {
    now: Cell<u64>,
    step: u64,
}

impl SteppingClock {
    /// Starts at `start_ms`, advancing `step_ms` per reading.
    pub fn new(start_ms: u64, step_ms: u64) -> Self {
        Self {
            now: Cell::new(start_ms),
            step: step_ms,
        }
    }
}

impl Default for SteppingClock {
    /// 2026-01-01T00:00:00Z, one second per reading.
    fn default() -> Self {
        Self::new(1_767_225_600_000, 1000)
    }
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> u64 {
        let now = self.now.get();
        self.now.set(now + self.step);
        now
    }
}

/// An embedding queue that keeps the jobs.
#[derive(Debug, Default)]
pub struct RecordingQueue {
    jobs: RefCell<Vec<EmbedJob>>,
}

impl RecordingQueue {
    /// The jobs queued so far.
    pub fn jobs(&self) -> Vec<EmbedJob> {
        self.jobs.borrow().clone()
    }

    /// Takes the queued jobs.
    pub fn drain(&self) -> Vec<EmbedJob> {
        core::mem::take(&mut *self.jobs.borrow_mut())
    }
}

impl EmbedQueue for RecordingQueue {
    fn enqueue(&self, job: EmbedJob) {
        self.jobs.borrow_mut().push(job);
    }
}

/// A logger that keeps each record as its JSON line.
#[derive(Debug, Default)]
pub struct RecordingLogger {
    lines: RefCell<Vec<String>>,
}

impl RecordingLogger {
    /// The lines logged so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.borrow().clone()
    }
}

impl Logger for RecordingLogger {
    fn log(&self, record: &LogRecord<'_>) {
        self.lines.borrow_mut().push(record.to_json_line());
    }
}
