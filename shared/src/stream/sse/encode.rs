//! The byte-exact Server-Sent Events encoder: frames, comments, and the numbers and
//! line splits they are written with.

use alloc::string::String;

use super::SseError;

/// One event to encode. Fields are written in the order `event`, `id`, `retry`, `data`,
/// each as `name: value\n`, then a blank line; multi-line data becomes one `data:` line
/// per line (CRLF and CR in data become line breaks, which decoders rejoin with LF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseFrame<'a> {
    event: Option<&'a str>,
    id: Option<&'a str>,
    retry: Option<u32>,
    data: &'a str,
}

impl<'a> SseFrame<'a> {
    /// An unnamed event (type `message`) carrying `data`.
    pub fn new(data: &'a str) -> Self {
        Self {
            event: None,
            id: None,
            retry: None,
            data,
        }
    }

    /// Sets the event type (`event:` field).
    pub fn event(mut self, name: &'a str) -> Self {
        self.event = Some(name);
        self
    }

    /// Sets the event id (`id:` field).
    pub fn id(mut self, id: &'a str) -> Self {
        self.id = Some(id);
        self
    }

    /// Sets the reconnection time in milliseconds (`retry:` field).
    pub fn retry(mut self, millis: u32) -> Self {
        self.retry = Some(millis);
        self
    }

    /// Appends the encoded frame to `out`. Fails, writing nothing, when the event name or id
    /// contains a line break, or the id contains NUL.
    pub fn encode_into(&self, out: &mut String) -> Result<(), SseError> {
        let breaks = |s: &str| s.bytes().any(|b| b == b'\n' || b == b'\r');
        if self.event.is_some_and(breaks)
            || self.id.is_some_and(|id| breaks(id) || id.contains('\0'))
        {
            return Err(SseError::InvalidField);
        }
        write_frame(out, self.event, self.id, self.retry, self.data);
        Ok(())
    }
}

/// Appends a comment line (`: text`) and, as SSE requires, nothing else; an empty comment
/// (`:\n`) is the usual keep-alive. Line breaks in `text` start new comment lines.
pub fn encode_comment(text: &str, out: &mut String) {
    for line in split_lines(text) {
        out.push(':');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
        out.push('\n');
    }
}

/// Writes a frame whose name and id the caller guarantees to be single-line.
pub(crate) fn write_frame(
    out: &mut String,
    event: Option<&str>,
    id: Option<&str>,
    retry: Option<u32>,
    data: &str,
) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    if let Some(retry) = retry {
        out.push_str("retry: ");
        push_u64(out, u64::from(retry));
        out.push('\n');
    }
    for line in split_lines(data) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

/// Appends a decimal number without going through `core::fmt`.
pub(crate) fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// Splits on LF, CRLF and CR; an empty string is one empty line.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    core::iter::from_fn(move || {
        let s = rest?;
        match memchr::memchr2(b'\n', b'\r', s.as_bytes()) {
            None => {
                rest = None;
                Some(s)
            }
            Some(i) => {
                let skip = if s.as_bytes()[i] == b'\r' && s.as_bytes().get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = Some(&s[i + skip..]);
                Some(&s[..i])
            }
        }
    })
}
