//! A push-style line splitter shared by the SSE and NDJSON decoders.
//!
//! Bytes are appended as they arrive; complete lines are handed out as slices of the
//! internal buffer, without copying. The scan for a line end is resumed where it stopped,
//! so feeding one byte at a time stays linear.

use alloc::vec::Vec;

/// The default longest line accepted, in bytes (1 MiB).
pub(crate) const DEFAULT_MAX_LINE: usize = 1 << 20;

/// A line longer than the configured maximum was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineTooLong;

#[derive(Debug, Clone)]
pub(crate) struct LineBuffer {
    buf: Vec<u8>,
    /// Start of the first unconsumed byte.
    start: usize,
    /// Bytes in `buf[start..scanned]` are known to hold no line end.
    scanned: usize,
    /// A CR ended the previous line: a directly following LF belongs to it.
    skip_lf: bool,
    /// Dropping the rest of an over-long line.
    discarding: bool,
    /// CR alone also ends a line (SSE); otherwise only LF does, and a CR before it is cut.
    cr_ends_line: bool,
    finished: bool,
    max_line: usize,
}

impl LineBuffer {
    pub(crate) fn new(cr_ends_line: bool, max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            skip_lf: false,
            discarding: false,
            cr_ends_line,
            finished: false,
            max_line,
        }
    }

    /// Appends bytes, first dropping the consumed part of the buffer.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            if self.start == self.buf.len() {
                self.buf.clear();
            } else {
                self.buf.copy_within(self.start.., 0);
                self.buf.truncate(self.buf.len() - self.start);
            }
            self.scanned -= self.start;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Marks the end of input: the last, unterminated line becomes available.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }

    /// Whether [`finish`](Self::finish) was called.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// The buffered, unconsumed bytes.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Drops `n` pending bytes (at most the pending length).
    pub(crate) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.buf.len());
        self.scanned = self.scanned.max(self.start);
    }

    /// The next complete line without its terminator, `Err` for a dropped over-long line,
    /// or `None` when more bytes are needed.
    pub(crate) fn next_line(&mut self) -> Option<Result<&[u8], LineTooLong>> {
        loop {
            if self.skip_lf && self.start < self.buf.len() {
                self.skip_lf = false;
                if self.buf[self.start] == b'\n' {
                    self.start += 1;
                }
            }
            if self.skip_lf && !self.finished {
                return None;
            }
            let from = self.scanned.max(self.start);
            let hay = &self.buf[from..];
            let found = if self.cr_ends_line {
                memchr::memchr2(b'\n', b'\r', hay)
            } else {
                memchr::memchr(b'\n', hay)
            };
            let Some(offset) = found else {
                self.scanned = self.buf.len();
                let len = self.buf.len() - self.start;
                if self.discarding {
                    self.start = self.buf.len();
                    if self.finished {
                        self.discarding = false;
                    }
                    return None;
                }
                // Without CR line ends, a trailing CR may yet be cut off before an LF.
                let slack = usize::from(!self.cr_ends_line && !self.finished);
                if len > self.max_line + slack {
                    self.start = self.buf.len();
                    self.discarding = !self.finished;
                    return Some(Err(LineTooLong));
                }
                if self.finished && len > 0 {
                    let line = &self.buf[self.start..];
                    self.start = self.buf.len();
                    return Some(Ok(line));
                }
                return None;
            };
            let end = from + offset;
            let line_start = self.start;
            self.start = end + 1;
            self.scanned = self.start;
            if self.buf[end] == b'\r' {
                self.skip_lf = true;
            }
            if self.discarding {
                self.discarding = false;
                continue;
            }
            let mut line_end = end;
            if !self.cr_ends_line && line_end > line_start && self.buf[line_end - 1] == b'\r' {
                line_end -= 1;
            }
            if line_end - line_start > self.max_line {
                return Some(Err(LineTooLong));
            }
            return Some(Ok(&self.buf[line_start..line_end]));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lines(input: &[&[u8]], cr: bool, max: usize) -> Vec<Result<Vec<u8>, LineTooLong>> {
        let mut lb = LineBuffer::new(cr, max);
        let mut out = Vec::new();
        for chunk in input {
            lb.push(chunk);
            while let Some(line) = lb.next_line() {
                out.push(line.map(<[u8]>::to_vec));
            }
        }
        lb.finish();
        while let Some(line) = lb.next_line() {
            out.push(line.map(<[u8]>::to_vec));
        }
        out
    }

    #[test]
    fn splits_on_lf_cr_and_crlf() {
        let want: Vec<Result<Vec<u8>, LineTooLong>> = vec![
            Ok(b"a".to_vec()),
            Ok(b"b".to_vec()),
            Ok(b"c".to_vec()),
            Ok(b"d".to_vec()),
        ];
        assert_eq!(lines(&[b"a\nb\rc\r\nd"], true, 64), want);
        assert_eq!(lines(&[b"a\nb\r", b"c\r", b"\nd"], true, 64), want);
        assert_eq!(
            lines(&[b"a\r\n\r\n"], true, 64),
            vec![Ok(b"a".to_vec()), Ok(Vec::new())]
        );
    }

    #[test]
    fn ndjson_mode_cuts_cr_before_lf_only() {
        assert_eq!(
            lines(&[b"{}\r\n", b"x\ry\n"], false, 64),
            vec![Ok(b"{}".to_vec()), Ok(b"x\ry".to_vec())]
        );
    }

    #[test]
    fn over_long_lines_are_reported_once_whatever_the_split() {
        let whole = lines(&[b"ok\n0123456789\nnext\n"], true, 5);
        assert_eq!(
            whole,
            vec![Ok(b"ok".to_vec()), Err(LineTooLong), Ok(b"next".to_vec())]
        );
        let split = lines(&[b"ok\n012", b"3456", b"789", b"\nnext\n"], true, 5);
        assert_eq!(split, whole);
    }
}
