//! The push decoder of a native stream (for the widget and tests).

use alloc::string::ToString;

use super::super::StreamError;
use super::super::sse::SseDecoder;
use super::{ChunkData, NativeEvent};

/// One decoded native event with its sequence number (`None` if the frame had no numeric id).
#[derive(Debug, Clone, PartialEq)]
pub struct NativeFrame {
    /// The event's `id:`.
    pub seq: Option<u64>,
    /// The event.
    pub event: NativeEvent,
}

/// A push-style decoder of a native stream, for the widget and tests.
///
/// Unknown event types are skipped (forward compatibility). Events after the terminal one
/// are reported as [`StreamError::AfterEnd`]; input ending without a terminal event as
/// [`StreamError::UnexpectedEof`].
#[derive(Debug, Clone, Default)]
pub struct NativeStreamDecoder {
    sse: SseDecoder,
    ended: bool,
    eof_reported: bool,
}

impl NativeStreamDecoder {
    /// A decoder with the default SSE limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Buffers more input.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.sse.feed(bytes);
    }

    /// Marks the end of input.
    pub fn finish(&mut self) {
        self.sse.finish();
    }

    /// The id of the last event seen, to send back as `Last-Event-ID` when resuming.
    pub fn last_event_id(&self) -> Option<&str> {
        self.sse.last_event_id()
    }

    /// The next event, a decoding error (decoding carries on after it), or `None` when more
    /// input is needed.
    pub fn next_event(&mut self) -> Option<Result<NativeFrame, StreamError>> {
        loop {
            let ev = match self.sse.next_event() {
                Some(Ok(ev)) => ev,
                Some(Err(err)) => return Some(Err(err.into())),
                None => {
                    let eof = self.sse.is_finished() && !self.ended && !self.eof_reported;
                    self.eof_reported |= eof;
                    return eof.then_some(Err(StreamError::UnexpectedEof));
                }
            };
            let seq = ev.id.and_then(|id| id.parse().ok());
            let event = match parse_event(ev.event, ev.data) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(err) => return Some(Err(err)),
            };
            if self.ended {
                return Some(Err(StreamError::AfterEnd));
            }
            self.ended = event.is_terminal();
            return Some(Ok(NativeFrame { seq, event }));
        }
    }
}

/// Decodes one SSE event; `Ok(None)` for unknown event types.
fn parse_event(name: &str, data: &str) -> Result<Option<NativeEvent>, StreamError> {
    Ok(Some(match name {
        "message" => NativeEvent::Chunk(
            serde_json::from_str::<ChunkData<'_>>(data)?
                .chunk
                .to_string(),
        ),
        "started" => NativeEvent::Started(serde_json::from_str(data)?),
        "tool_start" => NativeEvent::ToolStart(serde_json::from_str(data)?),
        "tool_end" => NativeEvent::ToolEnd(serde_json::from_str(data)?),
        "progress" => NativeEvent::Progress(serde_json::from_str(data)?),
        "payload" => NativeEvent::Payload(serde_json::from_str(data)?),
        "completed" => NativeEvent::Completed(serde_json::from_str(data)?),
        "failed" => NativeEvent::Failed(serde_json::from_str(data)?),
        _ => return Ok(None),
    }))
}
