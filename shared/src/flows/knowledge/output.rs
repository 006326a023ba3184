//! Node 5's pieces: the `---END` splitter (nothing after the delimiter is streamed), the
//! tail's `REASONING`/`FOLLOW_UP`, the progress percentages, and the trace entries
//! (seed 003 §5, §9.2).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use crate::engine::TextFilter;

const DELIMITER: &str = "---END";

/// Splits a streamed answer at `---END`: what to stream, and the tail kept back.
#[derive(Debug, Default)]
pub struct EndSplitter {
    held: String,
    ended: bool,
    /// The text streamed so far.
    pub streamed: String,
    /// What came after the delimiter.
    pub tail: String,
}

impl EndSplitter {
    /// Feeds a delta; returns the text to stream now (possibly empty).
    pub fn feed(&mut self, delta: &str) -> String {
        if self.ended {
            self.tail.push_str(delta);
            return String::new();
        }
        self.held.push_str(delta);
        if let Some(at) = self.held.find(DELIMITER) {
            let before = self.held[..at]
                .trim_end_matches(['\n', '\r', ' '])
                .to_string();
            self.tail = self.held[at + DELIMITER.len()..].into();
            self.held.clear();
            self.ended = true;
            return self.emit(before);
        }
        // Hold back a suffix that could start the delimiter (and line breaks before it).
        let mut keep = 0;
        for n in 1..=DELIMITER.len().min(self.held.len()) {
            let start = self.held.len() - n;
            if self.held.is_char_boundary(start) && DELIMITER.starts_with(&self.held[start..]) {
                keep = n;
            }
        }
        let mut cut = self.held.len() - keep;
        while cut > 0 && matches!(self.held.as_bytes()[cut - 1], b'\n' | b'\r') {
            cut -= 1;
        }
        let out: String = self.held[..cut].into();
        self.held.drain(..cut);
        self.emit(out)
    }

    fn emit(&mut self, out: String) -> String {
        self.streamed.push_str(&out);
        out
    }

    /// The end of the stream: whatever was held back and is not the delimiter.
    pub fn finish(&mut self) -> String {
        if self.ended {
            return String::new();
        }
        let out = core::mem::take(&mut self.held);
        self.emit(out)
    }
}

impl TextFilter for EndSplitter {
    fn push(&mut self, delta: &str) -> String {
        self.feed(delta)
    }

    fn finish(&mut self) -> String {
        EndSplitter::finish(self)
    }
}

/// `REASONING: "<json string>"` and `FOLLOW_UP: [..]` from the tail (either may be
/// missing).
pub fn parse_tail(tail: &str) -> (Option<String>, Option<Vec<String>>) {
    let mut reasoning = None;
    let mut follow_ups = None;
    for line in tail.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("REASONING:") {
            let rest = rest.trim();
            reasoning = serde_json::from_str::<String>(rest)
                .ok()
                .or_else(|| (!rest.is_empty()).then(|| rest.trim_matches('"').into()));
        } else if let Some(rest) = line.strip_prefix("FOLLOW_UP:") {
            follow_ups = serde_json::from_str::<Vec<String>>(rest.trim()).ok();
        }
    }
    (reasoning, follow_ups)
}

/// `round1(75 + 20·done/total)`: 81.7, 88.3, 95 for three tasks.
pub fn task_percentage(done: usize, total: usize) -> f32 {
    if total == 0 {
        return 95.0;
    }
    let value = 75.0 + 20.0 * done as f64 / total as f64;
    ((value * 10.0 + 0.5) as i64) as f32 / 10.0
}

/// A `Router` trace entry; `plan_fallback`: the direct plan stood in for the router's.
pub fn router_entry(
    started_at: &str,
    ended_at: &str,
    decision: &str,
    plan_fallback: bool,
) -> Value {
    json!({"order": 1, "node_id": "Router", "type": "router", "agent": null, "tool": null,
           "status": "done", "started_at": started_at, "ended_at": ended_at,
           "metadata": {"decision": decision, "plan_fallback": plan_fallback}})
}

/// A `PermissionCheck` trace entry.
pub fn permission_entry(at: &str, scopes: &[String]) -> Value {
    json!({"order": 2, "node_id": "PermissionCheck", "type": "permission", "agent": null,
           "tool": null, "status": "done", "started_at": at, "ended_at": at,
           "details": {"scope": scopes}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_after_the_delimiter_is_streamed_however_it_is_split() {
        let text =
            "Công ty có 4 giá trị.\n---END\nREASONING: \"Ưu tiên HR\"\nFOLLOW_UP: [\"a\",\"b\"]";
        for size in 1..text.len() {
            let mut splitter = EndSplitter::default();
            let mut out = String::new();
            let bytes = text.as_bytes();
            let mut start = 0;
            while start < bytes.len() {
                let mut end = (start + size).min(bytes.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                out.push_str(&splitter.feed(&text[start..end]));
                start = end;
            }
            out.push_str(&splitter.finish());
            assert_eq!(out, "Công ty có 4 giá trị.", "split {size}");
            let (reasoning, follow) = parse_tail(&splitter.tail);
            assert_eq!(reasoning.as_deref(), Some("Ưu tiên HR"));
            assert_eq!(follow, Some(alloc::vec!["a".into(), "b".into()]));
        }
    }

    #[test]
    fn seed_percentages() {
        assert_eq!([1, 2, 3].map(|i| task_percentage(i, 3)), [81.7, 88.3, 95.0]);
    }
}
