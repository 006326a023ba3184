//! Server-Sent Events: a push-style decoder and a byte-exact encoder.
//!
//! The decoder follows the WHATWG event-stream parsing rules: LF, CRLF and CR line ends,
//! multi-line `data`, `event`, `id` (ignored when it holds NUL), `retry` (digits only),
//! comments and keep-alives (`:` lines), unknown fields ignored, one leading UTF-8 BOM
//! stripped. One deliberate leniency: at [`SseDecoder::finish`] an event still pending
//! (no blank line after it) is dispatched instead of dropped, because many servers end
//! the stream right after the last `data:` line.
//!
//! ```
//! use concierge_core::stream::sse::{SseDecoder, SseFrame};
//!
//! let mut bytes = String::new();
//! SseFrame::new("{\"chunk\":\"Hi\"}").id("0").encode_into(&mut bytes)?;
//! assert_eq!(bytes, "id: 0\ndata: {\"chunk\":\"Hi\"}\n\n");
//!
//! let mut decoder = SseDecoder::new();
//! decoder.feed(bytes.as_bytes());
//! let event = decoder.next_event().expect("one event")?;
//! assert_eq!((event.event, event.data, event.id), ("message", "{\"chunk\":\"Hi\"}", Some("0")));
//! # Ok::<(), concierge_core::stream::SseError>(())
//! ```
//!
//! The encoder is in `encode`.

use alloc::string::{String, ToString};
use core::fmt;

use super::lines::{DEFAULT_MAX_LINE, LineBuffer};

mod encode;

pub use encode::{SseFrame, encode_comment};
pub(crate) use encode::{push_u64, write_frame};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why part of an event stream was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SseError {
    /// A line was not valid UTF-8; the event it belonged to is dropped.
    InvalidUtf8,
    /// A line exceeded the maximum line length; the event it belonged to is dropped.
    LineTooLong,
    /// An event's data exceeded the maximum event size; the event is dropped.
    EventTooLarge,
    /// The encoder was asked to put a line break (or NUL, in an id) into a single-line field.
    InvalidField,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidUtf8 => "line is not valid UTF-8",
            Self::LineTooLong => "line exceeds the maximum length",
            Self::EventTooLarge => "event data exceeds the maximum size",
            Self::InvalidField => "field value contains a line break or NUL",
        })
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SseError {}

/// One dispatched event, borrowed from the decoder until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The event type: the `event:` field, or `"message"` when there was none.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`.
    pub data: &'a str,
    /// The last event id in effect (the `id:` field persists across events, as in browsers).
    pub id: Option<&'a str>,
}

impl SseEvent<'_> {
    /// An owned copy of this event.
    pub fn to_owned(&self) -> OwnedSseEvent {
        OwnedSseEvent {
            event: self.event.to_string(),
            data: self.data.to_string(),
            id: self.id.map(ToString::to_string),
        }
    }
}

/// An owned [`SseEvent`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnedSseEvent {
    /// The event type (`"message"` by default).
    pub event: String,
    /// The data lines joined with `\n`.
    pub data: String,
    /// The last event id in effect.
    pub id: Option<String>,
}

/// A push-style Server-Sent Events decoder.
///
/// [`feed`](Self::feed) bytes as they arrive, then drain [`next_event`](Self::next_event)
/// until it returns `None`; call [`finish`](Self::finish) at end of input and drain again.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    lines: LineBuffer,
    bom_checked: bool,
    data: String,
    has_data: bool,
    event: String,
    /// The last event id buffer; `None` until an `id:` field was seen.
    last_id: Option<String>,
    retry: Option<u32>,
    /// Dropping the rest of the current event after an error.
    skipping_event: bool,
    /// The previous call dispatched an event: clear its buffers first.
    dispatched: bool,
    max_event: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with 1 MiB limits on line length and event data size.
    pub fn new() -> Self {
        Self::with_limits(DEFAULT_MAX_LINE, DEFAULT_MAX_LINE)
    }

    /// A decoder with the given maximum line length and event data size, in bytes.
    pub fn with_limits(max_line: usize, max_event: usize) -> Self {
        Self {
            lines: LineBuffer::new(true, max_line),
            bom_checked: false,
            data: String::new(),
            has_data: false,
            event: String::new(),
            last_id: None,
            retry: None,
            skipping_event: false,
            dispatched: false,
            max_event,
        }
    }

    /// Buffers more input.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// Marks the end of input: a final line without a line end is decoded, and an event still
    /// pending is dispatched.
    pub fn finish(&mut self) {
        self.lines.finish();
    }

    /// Whether [`finish`](Self::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.lines.is_finished()
    }

    /// The last event id seen (the value a client sends back as `Last-Event-ID`).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the server asked for with `retry:`, in milliseconds.
    pub fn retry(&self) -> Option<u32> {
        self.retry
    }

    /// The next complete event, an error for a dropped event, or `None` when more input is
    /// needed.
    pub fn next_event(&mut self) -> Option<Result<SseEvent<'_>, SseError>> {
        if self.dispatched {
            self.dispatched = false;
            self.data.clear();
            self.event.clear();
            self.has_data = false;
        }
        if !self.bom_checked {
            let pending = self.lines.pending();
            let n = pending.len().min(BOM.len());
            if pending[..n] != BOM[..n] {
                self.bom_checked = true;
            } else if n == BOM.len() {
                self.lines.consume(n);
                self.bom_checked = true;
            } else if !self.lines.is_finished() {
                return None;
            }
        }
        loop {
            let line = match self.lines.next_line() {
                None => break,
                Some(Err(_)) => {
                    self.skipping_event = true;
                    return Some(Err(SseError::LineTooLong));
                }
                Some(Ok(line)) => line,
            };
            if line.is_empty() {
                if core::mem::take(&mut self.skipping_event) || !self.has_data {
                    self.data.clear();
                    self.event.clear();
                    self.has_data = false;
                    continue;
                }
                return Some(Ok(self.dispatch()));
            }
            if self.skipping_event || line[0] == b':' {
                continue;
            }
            let Ok(line) = core::str::from_utf8(line) else {
                self.skipping_event = true;
                return Some(Err(SseError::InvalidUtf8));
            };
            let (name, value) = match memchr::memchr(b':', line.as_bytes()) {
                Some(i) => {
                    let value = &line[i + 1..];
                    (&line[..i], value.strip_prefix(' ').unwrap_or(value))
                }
                None => (line, ""),
            };
            match name {
                "data" => {
                    let extra = value.len() + usize::from(self.has_data);
                    if self.data.len() + extra > self.max_event {
                        self.skipping_event = true;
                        return Some(Err(SseError::EventTooLarge));
                    }
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "event" => {
                    self.event.clear();
                    self.event.push_str(value);
                }
                "id" if !value.contains('\0') => {
                    let id = self.last_id.get_or_insert_with(String::new);
                    id.clear();
                    id.push_str(value);
                }
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    self.retry = value.parse().ok().or(Some(u32::MAX));
                }
                _ => {}
            }
        }
        // End of input: the pending event is dispatched even without a blank line.
        if self.lines.is_finished() && self.has_data && !self.skipping_event {
            return Some(Ok(self.dispatch()));
        }
        None
    }

    fn dispatch(&mut self) -> SseEvent<'_> {
        self.dispatched = true;
        SseEvent {
            event: if self.event.is_empty() {
                "message"
            } else {
                &self.event
            },
            data: &self.data,
            id: self.last_id.as_deref(),
        }
    }
}
