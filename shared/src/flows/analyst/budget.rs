//! The work and memory bound of one tool call (issue 24, defect 3). The evaluator is
//! `no_std` and has no clock, so time is bounded by *work units*, counted as it goes, and
//! memory by *bytes produced*: every value a stage creates (a cloned row, a `$lookup`
//! array, an `$unwind` copy, a `$concat` string, a `$push` array) is charged **before** it
//! is built, so a blow-up stops at the limit instead of materialising.
//!
//! A work unit is roughly one small step (≈ 25 ns of the Worker's size-optimised code): a
//! row entering a stage costs [`ROW_UNITS`], a condition or expression node
//! [`NODE_UNITS`], a sort comparison [`COMPARE_UNITS`] per key, every [`BYTES_PER_UNIT`]
//! bytes built one, a `$regex` test in proportion to its text and automaton. Bytes are estimated as the Worker (wasm32) lays values
//! out: 16 bytes per JSON value slot, a string's length, one B-tree node (≈ 320 bytes) per
//! 8 object entries. `scripts/bench-pipelines.sh` prints the worst accepted pipeline's
//! time, budget bytes and measured heap beside the targets (≤ 1 s, ≤ 32 MB).

use core::fmt;
use serde_json::Value;

/// Work units one tool call may spend (decision: the benchmark measures the slowest unit
/// kind, so that this many finish within the 1 s target with margin).
pub const MAX_WORK: u64 = 10_000_000;
/// Bytes of values one tool call may produce (issue 24: ≤ 32 MB; the Worker has 128 MB).
pub const MAX_BYTES: u64 = 32 * 1024 * 1024;
/// Bytes of a JSON value's slot on wasm32 (`serde_json::Value`).
pub const SLOT_BYTES: u64 = 16;
/// Bytes of one B-tree node holding up to 11 object entries on wasm32 (allocated whole).
pub const NODE_BYTES: u64 = 320;
/// Entries per B-tree node assumed (nodes are at least half full).
const ENTRIES_PER_NODE: u64 = 8;
/// Bytes built per work unit (allocating and writing: a B-tree row of small strings costs
/// about as much per byte as a few comparisons).
pub const BYTES_PER_UNIT: u64 = 8;
/// Bytes compared or serialised per work unit.
pub const SCAN_BYTES_PER_UNIT: u64 = 32;
/// Units for a row entering a stage (looking into it, moving or dropping it).
pub const ROW_UNITS: u64 = 16;
/// Units for one expression node or query condition evaluated.
pub const NODE_UNITS: u64 = 2;
/// Units for one comparison of a sort, per sort key (keys read beforehand).
pub const COMPARE_UNITS: u64 = 1;

/// Which bound a pipeline went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// More than [`MAX_WORK`] work units (time).
    Work,
    /// More than [`MAX_BYTES`] bytes produced (memory).
    Bytes,
}

impl fmt::Display for Exceeded {
    /// The sentence the model reads as the tool error: what went over, and what to change.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Work => write!(
                f,
                "the pipeline does too much work (over {MAX_WORK} steps: each row a stage \
                 touches counts, and $lookup, $unwind, $sort and $regex count per row they \
                 read); put a $match first to keep fewer rows, $group before $lookup or \
                 $unwind, add a $limit, or use aggregate_data"
            ),
            Self::Bytes => write!(
                f,
                "the pipeline would build more than {} MB of intermediate data ($lookup \
                 arrays, $unwind copies, $push arrays, long $concat strings or rows copied \
                 by $project); put a $match first, $project only the fields you need, join \
                 on a key that is present in both data sets, add a $limit, or use \
                 aggregate_data",
                MAX_BYTES / (1024 * 1024)
            ),
        }
    }
}

/// What one tool call may still spend; charge it before doing the work or building the
/// value.
#[derive(Debug, Clone)]
pub struct Budget {
    work: u64,
    bytes: u64,
    max_work: u64,
    max_bytes: u64,
}

impl Default for Budget {
    /// The per-tool-call budget ([`MAX_WORK`], [`MAX_BYTES`]).
    fn default() -> Self {
        Self::new(MAX_WORK, MAX_BYTES)
    }
}

impl Budget {
    /// A budget of `max_work` units and `max_bytes` bytes.
    pub const fn new(max_work: u64, max_bytes: u64) -> Self {
        Self {
            work: 0,
            bytes: 0,
            max_work,
            max_bytes,
        }
    }

    /// No bound (the reference semantics in tests, and helpers such as [`super::eval::matches`]).
    pub const fn unlimited() -> Self {
        Self::new(u64::MAX, u64::MAX)
    }

    /// Spends `units` of work.
    #[inline]
    pub fn work(&mut self, units: u64) -> Result<(), Exceeded> {
        self.work = self.work.saturating_add(units);
        if self.work > self.max_work {
            Err(Exceeded::Work)
        } else {
            Ok(())
        }
    }

    /// Spends `bytes` of memory (and the work of writing them).
    #[inline]
    pub fn bytes(&mut self, bytes: u64) -> Result<(), Exceeded> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes {
            return Err(Exceeded::Bytes);
        }
        self.work(bytes / BYTES_PER_UNIT)
    }

    /// Spends the work of comparing or serialising `bytes` bytes (a key's text).
    #[inline]
    pub fn scan(&mut self, bytes: u64) -> Result<(), Exceeded> {
        self.work(bytes / SCAN_BYTES_PER_UNIT)
    }

    /// Spends the work of a row entering a stage.
    #[inline]
    pub fn row(&mut self) -> Result<(), Exceeded> {
        self.work(ROW_UNITS)
    }

    /// Spends the work of one expression node or query condition.
    #[inline]
    pub fn node(&mut self) -> Result<(), Exceeded> {
        self.work(NODE_UNITS)
    }

    /// Charges a copy of `value` (its estimated size) and returns the copy.
    pub fn clone_of(&mut self, value: &Value) -> Result<Value, Exceeded> {
        self.bytes(size(value))?;
        Ok(value.clone())
    }

    /// Work units spent so far.
    pub fn work_used(&self) -> u64 {
        self.work
    }

    /// Bytes produced so far.
    pub fn bytes_used(&self) -> u64 {
        self.bytes
    }
}

/// The estimated bytes of `value` including its own slot (wasm32 layout; see module docs).
pub fn size(value: &Value) -> u64 {
    SLOT_BYTES + heap(value)
}

/// The estimated heap bytes `value` owns beyond its slot.
pub fn heap(value: &Value) -> u64 {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(s) => s.len() as u64,
        Value::Array(items) => items.iter().map(size).sum(),
        Value::Object(map) => {
            object_bytes(map.len())
                + map
                    .iter()
                    .map(|(k, v)| k.len() as u64 + heap(v))
                    .sum::<u64>()
        }
    }
}

/// The estimated bytes of an object's B-tree with `entries` entries (keys' text and
/// values' own heap not included).
pub fn object_bytes(entries: usize) -> u64 {
    (entries as u64).div_ceil(ENTRIES_PER_NODE) * NODE_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn charges_stop_at_the_limit() {
        let mut b = Budget::new(10, 100);
        assert_eq!(b.work(10), Ok(()));
        assert_eq!(b.work(1), Err(Exceeded::Work));
        let mut b = Budget::new(1_000, 100);
        assert_eq!(b.bytes(100), Ok(()));
        assert_eq!(b.bytes(1), Err(Exceeded::Bytes));
    }

    #[test]
    fn sizes_grow_with_content() {
        assert_eq!(size(&json!(null)), SLOT_BYTES);
        assert_eq!(size(&json!("abcd")), SLOT_BYTES + 4);
        assert_eq!(size(&json!([1, 2])), SLOT_BYTES * 3);
        assert_eq!(size(&json!({"ab": 1})), SLOT_BYTES + NODE_BYTES + 2);
        assert_eq!(size(&json!({})), SLOT_BYTES);
    }
}
