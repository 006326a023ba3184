//! Stand-in for `concierge_core::stream::sse` until the core's codecs land: the same
//! push-style API (`feed`, `finish`, `next_event`), so swapping is one `use` line in
//! `crate::chat`. Implements the framing the Worker sends: LF/CRLF/CR line ends,
//! comments, `event:`, multi-line `data:`, `id:`.

/// One dispatched event, borrowed from the decoder until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SseEvent<'a> {
    /// The `event:` field, or `"message"`.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`.
    pub data: &'a str,
}

/// Why part of a stream was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SseError {
    /// A line was not valid UTF-8; it is skipped.
    InvalidUtf8,
}

/// A push-style Server-Sent Events decoder.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    pos: usize,
    data: String,
    has_data: bool,
    event: String,
    finished: bool,
    dispatched: bool,
}

impl SseDecoder {
    /// A new decoder.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Buffer more input.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.buf.drain(..self.pos);
        self.pos = 0;
        self.buf.extend_from_slice(bytes);
    }

    /// Mark the end of input.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }

    /// The next complete event, or `None` when more input is needed.
    pub(crate) fn next_event(&mut self) -> Option<Result<SseEvent<'_>, SseError>> {
        if core::mem::take(&mut self.dispatched) {
            self.data.clear();
            self.event.clear();
            self.has_data = false;
        }
        loop {
            let rest = &self.buf[self.pos..];
            let (len, used) = match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) if rest[i] == b'\n' => (i, i + 1),
                Some(i) if i + 1 < rest.len() => (i, i + 1 + usize::from(rest[i + 1] == b'\n')),
                // A CR at the end of the buffer: wait to see whether LF follows.
                Some(i) if self.finished => (i, i + 1),
                None if self.finished && !rest.is_empty() => (rest.len(), rest.len()),
                _ => {
                    if self.finished && self.has_data {
                        self.dispatched = true;
                        return Some(Ok(self.current()));
                    }
                    return None;
                }
            };
            let line = core::str::from_utf8(&rest[..len]).map(str::to_owned);
            self.pos += used;
            let Ok(line) = line else {
                return Some(Err(SseError::InvalidUtf8));
            };
            if line.is_empty() {
                if self.has_data {
                    self.dispatched = true;
                    return Some(Ok(self.current()));
                }
                self.event.clear();
                continue;
            }
            let (name, value) = match line.split_once(':') {
                Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            match name {
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "event" => value.clone_into(&mut self.event),
                _ => {}
            }
        }
    }

    fn current(&self) -> SseEvent<'_> {
        let event = if self.event.is_empty() {
            "message"
        } else {
            &self.event
        };
        SseEvent {
            event,
            data: &self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        let mut drain = |d: &mut SseDecoder| {
            while let Some(Ok(ev)) = d.next_event() {
                out.push((ev.event.to_string(), ev.data.to_string()));
            }
        };
        for chunk in chunks {
            decoder.feed(chunk);
            drain(&mut decoder);
        }
        decoder.finish();
        drain(&mut decoder);
        out
    }

    const STREAM: &[u8] = b": hi\r\nid: 0\r\nevent: started\r\ndata: {}\r\n\r\nid: 1\ndata: {\"chunk\":\"Xin ch\xc3\xa0o\"}\n\nid: 2\rdata: a\rdata: b\r\revent: completed\ndata: {\"kind\":\"answer\"}";

    #[test]
    fn decodes_events_whatever_the_chunking() {
        let expected = vec![
            ("started".to_string(), "{}".to_string()),
            (
                "message".to_string(),
                "{\"chunk\":\"Xin chào\"}".to_string(),
            ),
            ("message".to_string(), "a\nb".to_string()),
            ("completed".to_string(), "{\"kind\":\"answer\"}".to_string()),
        ];
        assert_eq!(decode(&[STREAM]), expected);
        for split in 0..STREAM.len() {
            let (a, b) = STREAM.split_at(split);
            assert_eq!(decode(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = STREAM.chunks(1).collect();
        assert_eq!(decode(&bytes), expected);
    }
}
