//! The response generator's text format (seed: `message ---END LIST:[] TABLE:{} CHART:{}`)
//! and what streams of it (TEMPLATES.md §2.2).
//!
//! - [`parse`]: `message` is the text before the first `---END`, trimmed; after it,
//!   `LIST:`, `TABLE:` and `CHART:` are found in any layout and one JSON value is read after
//!   each (`null`, a missing key or invalid JSON: absent). Without `---END` the whole text
//!   is the message.
//! - [`EndGate`]: forwards streamed text until `---END`, holding back a suffix that could
//!   be its beginning; nothing after the delimiter is ever forwarded.
//! - [`LabelGate`]: makes the streamed message start with the code-determined role label.

use alloc::string::{String, ToString};
use serde_json::Value;

use crate::engine::TextFilter;

/// The delimiter between the message and the structured sections.
pub const END: &str = "---END";

/// The sections after `---END`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sections {
    /// `LIST:` JSON, if present and valid.
    pub list: Option<Value>,
    /// `TABLE:` JSON.
    pub table: Option<Value>,
    /// `CHART:` JSON.
    pub chart: Option<Value>,
}

/// A parsed response: the message and the sections (`None`: no `---END`, the fallback).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The text before `---END`, trimmed.
    pub message: String,
    /// The sections, when the delimiter was there.
    pub sections: Option<Sections>,
}

/// Parses a complete response text.
pub fn parse(text: &str) -> Parsed {
    let Some(at) = text.find(END) else {
        return Parsed {
            message: text.trim().to_string(),
            sections: None,
        };
    };
    let rest = &text[at + END.len()..];
    Parsed {
        message: text[..at].trim().to_string(),
        sections: Some(Sections {
            list: section(rest, "LIST:"),
            table: section(rest, "TABLE:"),
            chart: section(rest, "CHART:"),
        }),
    }
}

/// One JSON value after `key` (`null` and invalid JSON: absent).
fn section(rest: &str, key: &str) -> Option<Value> {
    let at = rest.find(key)?;
    let after = rest[at + key.len()..].trim_start();
    let mut values = serde_json::Deserializer::from_str(after).into_iter::<Value>();
    match values.next() {
        Some(Ok(Value::Null)) | Some(Err(_)) | None => None,
        Some(Ok(value)) => Some(value),
    }
}

/// Forwards streamed text up to `---END`, never past it.
#[derive(Debug, Default)]
pub struct EndGate {
    held: String,
    closed: bool,
}

impl EndGate {
    /// Takes the next delta; returns what may be shown now. Trailing whitespace is held
    /// back too (the message is trimmed before `---END` and at its end).
    pub fn push(&mut self, delta: &str) -> String {
        if self.closed {
            return String::new();
        }
        self.held.push_str(delta);
        if let Some(at) = self.held.find(END) {
            self.closed = true;
            let out = self.held[..at].trim_end().to_string();
            self.held.clear();
            return out;
        }
        // Hold back the longest suffix that is a proper prefix of `---END`, and the
        // whitespace before it.
        let keep = (1..END.len())
            .rev()
            .find(|n| self.held.ends_with(&END[..*n]))
            .unwrap_or(0);
        let cut = self.held[..self.held.len() - keep].trim_end().len();
        let out = self.held[..cut].to_string();
        self.held.drain(..cut);
        out
    }

    /// The stream ended: returns what was held back (it was not the delimiter), without
    /// trailing whitespace.
    pub fn finish(&mut self) -> String {
        if self.closed {
            return String::new();
        }
        let held = core::mem::take(&mut self.held);
        held.trim_end().to_string()
    }
}

/// The role labels (seed).
pub const LABELS: [&str; 3] = ["[GUEST]", "[TENANT]", "[LANDLORD]"];

/// Puts the right label at the start of a complete message: a missing one is prepended, a
/// different role label is replaced, a label elsewhere is left alone. `label` `None`
/// (labels turned off) removes a leading role label instead.
pub fn enforce_label(message: &str, label: Option<&str>) -> String {
    let trimmed = message.trim_start();
    let body = LABELS
        .iter()
        .find(|l| trimmed.starts_with(*l))
        .map_or(trimmed, |l| trimmed[l.len()..].trim_start());
    match label {
        Some(label) if body.is_empty() => label.to_string(),
        Some(label) => alloc::format!("{label} {body}"),
        None => body.to_string(),
    }
}

/// Streams a message with its label enforced: holds back the start until it is clear
/// whether the model wrote a role label, then streams the rest as it comes.
#[derive(Debug)]
pub struct LabelGate {
    label: Option<String>,
    held: String,
    decided: bool,
}

impl LabelGate {
    /// A gate for `label` (`None`: labels off).
    pub fn new(label: Option<&str>) -> Self {
        Self {
            label: label.map(Into::into),
            held: String::new(),
            decided: false,
        }
    }

    /// Takes the next text; returns what may be shown now.
    pub fn push(&mut self, text: &str) -> String {
        if self.decided {
            return text.to_string();
        }
        self.held.push_str(text);
        let start = self.held.trim_start();
        let undecided = start.is_empty()
            || LABELS.iter().any(|l| {
                (l.len() > start.len() && l.starts_with(start))
                    || start
                        .strip_prefix(*l)
                        .is_some_and(|rest| rest.trim().is_empty())
            });
        if undecided {
            return String::new();
        }
        self.decide()
    }

    /// The text ended: returns what was held back, labelled.
    pub fn finish(&mut self) -> String {
        if self.decided {
            return String::new();
        }
        self.decide()
    }

    fn decide(&mut self) -> String {
        self.decided = true;
        let held = core::mem::take(&mut self.held);
        enforce_label(&held, self.label.as_deref())
    }
}

/// The response generator's gates on its way to the visitor: nothing past `---END`
/// ([`EndGate`]), the role label enforced ([`LabelGate`]), and — when the model's message
/// turns out empty — the orchestrator's draft in its place.
#[derive(Debug)]
pub struct ResponseGates {
    end: EndGate,
    labels: LabelGate,
    raw: String,
    draft: String,
}

impl ResponseGates {
    /// Gates for `label` (`None`: labels off), falling back to `draft`.
    pub fn new(label: Option<&str>, draft: &str) -> Self {
        Self {
            end: EndGate::default(),
            labels: LabelGate::new(label),
            raw: String::new(),
            draft: draft.into(),
        }
    }

    /// The model's whole text as it came (sections included).
    pub fn into_raw(self) -> String {
        self.raw
    }
}

impl TextFilter for ResponseGates {
    fn push(&mut self, delta: &str) -> String {
        self.raw.push_str(delta);
        let shown = self.end.push(delta);
        self.labels.push(&shown)
    }

    fn finish(&mut self) -> String {
        let mut rest = self.end.finish();
        if parse(&self.raw).message.is_empty() {
            // Nothing usable: the orchestrator's draft is the message (fallback).
            rest.push_str(&self.draft);
        }
        let shown = self.labels.push(&rest);
        shown + &self.labels.finish()
    }
}
