//! Streaming-protocol codecs: bytes in, typed events out, and typed events back to bytes.
//!
//! Everything here is push-style and performs no I/O: a decoder is fed whatever bytes
//! arrived (any split, down to one byte at a time), buffers an incomplete line, and hands
//! out the events that are complete. "Need more bytes" is not an error; malformed input is
//! a small `Copy` error value, never a panic, and the decoder carries on after it.
//!
//! | module | direction | wire format |
//! |---|---|---|
//! | [`sse`] | both | Server-Sent Events framing (`text/event-stream`) |
//! | [`openai`] | upstream | OpenAI-compatible `chat.completion.chunk` SSE, request builders |
//! | [`ollama`] | upstream | Ollama `/api/chat` NDJSON, `/api/embed`, request builders |
//! | [`native`] | downstream | Concierge's own event stream, for the widget and API clients |
//! | [`openai_out`] | downstream | OpenAI-compatible chunks for Concierge's `/v1/chat/completions` |
//! | [`ai_sdk`] | downstream | Vercel AI SDK UI message stream v1 (`useChat`) |
//!
//! Upstream decoders implement [`ChatStreamDecoder`] and produce
//! [`ChatEvent`](crate::chat::ChatEvent)s, so no other module sees provider JSON. A turn
//! reports what happens as [`TurnEvent`]s; the three downstream encoders implement
//! [`TurnEncoder`], turn those into their wire format and enforce that a stream ends with
//! exactly one terminal event. How each event appears on each wire:
//!
//! | [`TurnEvent`] | [`native`] | [`openai_out`] | [`ai_sdk`] |
//! |---|---|---|---|
//! | `Started` | `started` | *(nothing)* | `start` (`messageId`), `start-step` |
//! | `Chunk` | `data: {"chunk"}` | `delta.content` | `text-start` (first of a run), `text-delta` |
//! | `ToolStart` | `tool_start` | *(nothing)* | `tool-input-start`, `tool-input-available` |
//! | `ToolEnd` | `tool_end` | *(nothing)* | `tool-output-available` / `tool-output-error` |
//! | `Progress` | `progress` | *(nothing)* | `data-progress` (transient) |
//! | `Payload` | `payload` `{"kind","data"}` | *(nothing)* | `data-payload` `{"kind","data"}` |
//! | `Completed` | `completed` | `finish_reason: "stop"`, usage chunk if asked, `[DONE]` | `text-end`, `finish-step`, `finish`, `[DONE]` |
//! | `Failed` | `failed` | `{"error":{…}}`, `[DONE]` | `text-end`, `error`, `[DONE]` |
//!
//! The OpenAI chunk format has no place for tool calls the server ran itself, progress or
//! structured payloads, so those are left out of it; its clients get the text and the end.
//!
//! ## Example
//! ```
//! use concierge_core::chat::{ChatEvent, FinishReason};
//! use concierge_core::stream::{ChatStreamDecoder, openai::OpenAiStreamDecoder};
//!
//! let mut decoder = OpenAiStreamDecoder::new();
//! decoder.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Xin ch");
//! assert_eq!(decoder.next_event(), None); // the line is not complete yet
//! decoder.feed("ào\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".as_bytes());
//! assert_eq!(decoder.next_event(), Some(Ok(ChatEvent::text("Xin chào"))));
//! assert_eq!(decoder.next_event(), Some(Ok(ChatEvent::finish(FinishReason::Stop))));
//! assert_eq!(decoder.next_event(), None);
//! ```

use core::fmt;

use alloc::string::String;

use crate::chat::ChatEvent;
use crate::turn::TurnEvent;

pub mod ai_sdk;
pub mod native;
pub mod ollama;
pub mod openai;
pub mod openai_out;
pub mod sse;

mod lines;
mod wire;

pub use sse::SseError;

/// A push-style decoder of one upstream chat-completion stream into [`ChatEvent`]s.
///
/// Feed bytes as they arrive, drain [`next_event`](Self::next_event) until it returns
/// `None`, and call [`finish`](Self::finish) once at end of input, then drain again. The
/// events produced do not depend on how the input was split into chunks.
pub trait ChatStreamDecoder {
    /// Buffers `bytes`; complete lines become events that [`next_event`](Self::next_event)
    /// hands out.
    fn feed(&mut self, bytes: &[u8]);

    /// Marks the end of input: a final unterminated line is decoded and, if the stream ended
    /// before the provider said it was done, [`StreamError::UnexpectedEof`] is reported.
    fn finish(&mut self);

    /// The next decoded event, a decoding error (the decoder carries on after it), or `None`
    /// when more bytes are needed.
    fn next_event(&mut self) -> Option<Result<ChatEvent, StreamError>>;
}

/// Turns a turn's [`TurnEvent`]s into one wire format, as text to send.
///
/// Every stream an encoder writes ends with exactly one terminal event: after `Completed` or
/// `Failed` it writes nothing more, and [`close`](Self::close), called once the turn is over,
/// writes a failure (code [`native::CLOSED_CODE`]) if the turn never sent a terminal event.
/// Encoders only append to `out`; they never clear it.
pub trait TurnEncoder {
    /// Appends the wire form of `event` (possibly nothing, when the format cannot carry
    /// it); after the terminal event writes nothing and returns [`EncodeError::AfterEnd`].
    fn encode(&mut self, event: &TurnEvent, out: &mut String) -> Result<(), EncodeError>;

    /// Ends the stream: if no terminal event was written, appends a failure and returns
    /// true; otherwise writes nothing and returns false.
    fn close(&mut self, out: &mut String) -> bool;

    /// Whether the terminal event has been written.
    fn is_ended(&self) -> bool;
}

/// Why a stream payload could not be decoded. Small and `Copy`; the decoder that reported it
/// skips the offending line or event and carries on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamError {
    /// The Server-Sent Events framing was malformed.
    Sse(SseError),
    /// A line was not valid UTF-8.
    InvalidUtf8,
    /// A line exceeded the decoder's maximum line length and was dropped.
    LineTooLong,
    /// A payload was not valid JSON, or not of the expected shape.
    Json(JsonErrorKind),
    /// The input ended before the stream's own end marker (`[DONE]`, `"done": true`, or a
    /// terminal event): the upstream connection was probably cut.
    UnexpectedEof,
    /// An event arrived after the stream's terminal event.
    AfterEnd,
}

/// Why an encoder refused an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EncodeError {
    /// The stream already ended with its terminal event; nothing was written.
    AfterEnd,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AfterEnd => f.write_str("the stream already ended"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EncodeError {}

/// The kind of a JSON decoding failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonErrorKind {
    /// Not syntactically valid JSON.
    Syntax,
    /// Valid JSON, but not of the expected shape (missing field, wrong type).
    Data,
    /// The JSON text ended early.
    Eof,
}

impl From<serde_json::Error> for StreamError {
    fn from(err: serde_json::Error) -> Self {
        use serde_json::error::Category;
        Self::Json(match err.classify() {
            Category::Data => JsonErrorKind::Data,
            Category::Eof => JsonErrorKind::Eof,
            Category::Syntax | Category::Io => JsonErrorKind::Syntax,
        })
    }
}

impl From<SseError> for StreamError {
    fn from(err: SseError) -> Self {
        Self::Sse(err)
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sse(err) => write!(f, "malformed event stream: {err}"),
            Self::InvalidUtf8 => f.write_str("stream line is not valid UTF-8"),
            Self::LineTooLong => f.write_str("stream line exceeds the maximum length"),
            Self::Json(JsonErrorKind::Syntax) => f.write_str("stream payload is not valid JSON"),
            Self::Json(JsonErrorKind::Data) => {
                f.write_str("stream payload does not have the expected shape")
            }
            Self::Json(JsonErrorKind::Eof) => f.write_str("stream payload JSON ends early"),
            Self::UnexpectedEof => f.write_str("stream ended before its end marker"),
            Self::AfterEnd => f.write_str("event after the end of the stream"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for StreamError {}
