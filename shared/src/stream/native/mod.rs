//! Concierge's native event stream: the contract the widget and API clients rely on.
//!
//! Each event is one SSE frame with an `id:` — its sequence number in this message's
//! stream, from 0 — so a client can resume with `Last-Event-ID`:
//!
//! | event | SSE `event:` | `data:` |
//! |---|---|---|
//! | text token | *(none: type `message`)* | `{"chunk":"<text>"}` |
//! | [`Started`] | `started` | `{"conversation_id","message_id","request_id"}` (each optional) |
//! | [`ToolStart`] | `tool_start` | `{"call_id","name","input"}` |
//! | [`ToolEnd`] | `tool_end` | `{"call_id","name","ok","output"}` |
//! | [`Progress`] | `progress` | `{"message","percentage","stage"}` |
//! | payload | `payload` | any JSON value (lists, tables, charts, evidence) |
//! | [`Completed`] | `completed` | `{"message_id","kind","intent","confidence","usage"}` |
//! | [`Failed`] | `failed` | `{"error":{"code","message"}}` |
//!
//! A client that reads only `data:` lines and keeps those with a `chunk` key gets the text,
//! as in the seed's `data: {"chunk": "..."}` format. Optional fields are omitted when absent (a
//! non-finite `percentage` or `confidence` is written as `null` and read back as absent). Every
//! stream ends with exactly one `completed` or `failed`: [`NativeEncoder`] refuses events
//! after it and its [`TurnEncoder::close`] writes a `failed` if none was sent. A turn's
//! [`TurnEvent`](crate::turn::TurnEvent)s are encoded through [`TurnEncoder`] (see
//! [`from_turn`] for how each maps to a native event).
//!
//! ```
//! use concierge_core::stream::native::{Completed, NativeEncoder, NativeEvent};
//!
//! let mut encoder = NativeEncoder::new();
//! let mut out = String::new();
//! encoder.chunk("Xin chào", &mut out)?;
//! encoder.encode_native(&NativeEvent::Completed(Completed::new("m1", "answer")), &mut out)?;
//! assert_eq!(
//!     out,
//!     "id: 0\ndata: {\"chunk\":\"Xin chào\"}\n\n\
//!      event: completed\nid: 1\ndata: {\"message_id\":\"m1\",\"kind\":\"answer\"}\n\n"
//! );
//! assert!(encoder.chunk("late", &mut out).is_err());
//! # Ok::<(), concierge_core::stream::EncodeError>(())
//! ```
//!
//! The decoder is in `decode`, the mapping of turn events in `turn`.

use alloc::borrow::Cow;
use alloc::string::String;

use serde::{Deserialize, Serialize};

use super::sse::{push_u64, write_frame};
use super::wire::finite_f32;
use super::{EncodeError, TurnEncoder};
use crate::chat::Usage;

mod decode;
mod turn;

pub use decode::{NativeFrame, NativeStreamDecoder};
pub use turn::from_turn;

/// One event of a native stream.
#[derive(Debug, Clone, PartialEq)]
pub enum NativeEvent {
    /// The turn started.
    Started(Started),
    /// A piece of the assistant's text.
    Chunk(String),
    /// A tool call started.
    ToolStart(ToolStart),
    /// A tool call ended.
    ToolEnd(ToolEnd),
    /// A progress report of a long-running plan.
    Progress(Progress),
    /// Structured content for the widget to render (a list, table, chart, evidence, …).
    Payload(serde_json::Value),
    /// Terminal: the turn succeeded and its answer is stored.
    Completed(Completed),
    /// Terminal: the turn failed.
    Failed(Failed),
}

impl NativeEvent {
    /// The SSE event type (`None` for text chunks, which are unnamed).
    pub fn name(&self) -> Option<&'static str> {
        Some(match self {
            Self::Chunk(_) => return None,
            Self::Started(_) => "started",
            Self::ToolStart(_) => "tool_start",
            Self::ToolEnd(_) => "tool_end",
            Self::Progress(_) => "progress",
            Self::Payload(_) => "payload",
            Self::Completed(_) => "completed",
            Self::Failed(_) => "failed",
        })
    }

    /// Whether this event ends the stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Completed(_) | Self::Failed(_))
    }
}

/// Data of `started`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Started {
    /// The conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The assistant message being produced, when its id is assigned up front.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The request, for support and logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Data of `tool_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolStart {
    /// Tool call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// The call's arguments (omitted when `null`).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub input: serde_json::Value,
}

/// Data of `tool_end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolEnd {
    /// Tool call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Whether the tool succeeded.
    pub ok: bool,
    /// What the tool returned, or its error (omitted when `null`).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub output: serde_json::Value,
}

/// Data of `progress`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Progress {
    /// What is happening, for the visitor.
    pub message: String,
    /// Overall progress, 0 to 100.
    #[serde(
        default,
        deserialize_with = "finite_f32",
        skip_serializing_if = "Option::is_none"
    )]
    pub percentage: Option<f32>,
    /// Machine-readable stage, e.g. `plan_ready`, `executing_task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
}

/// Data of `completed`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Completed {
    /// The stored assistant message.
    pub message_id: String,
    /// The message kind: `answer`, `clarify`, `warranty`, `greeting`, `refusal`, … — or
    /// the template's own kind of reply ([`Completed::reply`]).
    pub kind: String,
    /// The turn's classified intent, where the template classifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Confidence of that classification, 0 to 1.
    #[serde(
        default,
        deserialize_with = "finite_f32",
        skip_serializing_if = "Option::is_none"
    )]
    pub confidence: Option<f32>,
    /// Tokens the model used for this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The template's envelope of the reply, where it has one (`rental`: seed 002's
    /// `{kind, timestamp, payload?}`; `kind` above is then `data`, `content` or `control`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<serde_json::Value>,
}

impl Completed {
    /// A completion of stored message `message_id` of kind `kind`.
    pub fn new(message_id: impl Into<String>, kind: impl Into<String>) -> Self {
        Self {
            message_id: message_id.into(),
            kind: kind.into(),
            ..Self::default()
        }
    }
}

/// Data of `failed`: `{"error":{"code","message"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Failed {
    /// What went wrong.
    pub error: ErrorBody,
}

/// The error of a `failed` event.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Stable machine-readable code, e.g. `upstream_unavailable`.
    pub code: String,
    /// Message safe to show the visitor.
    pub message: String,
}

impl Failed {
    /// A failure with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: ErrorBody {
                code: code.into(),
                message: message.into(),
            },
        }
    }
}

#[derive(Serialize, Deserialize)]
struct ChunkData<'a> {
    #[serde(borrow)]
    chunk: Cow<'a, str>,
}

/// The code of the failure an encoder's [`TurnEncoder::close`] writes when the turn sent
/// no terminal event.
pub const CLOSED_CODE: &str = "stream_closed";

/// The message of that failure.
pub const CLOSED_MESSAGE: &str = "The answer was interrupted.";

/// Appends one native event as an SSE frame with sequence number `seq`, without any
/// stream-level checks (for replaying stored events on resume).
pub fn encode_event(seq: u64, event: &NativeEvent, out: &mut String) {
    let data = match event {
        NativeEvent::Chunk(text) => serde_json::to_string(&ChunkData {
            chunk: Cow::Borrowed(text),
        }),
        NativeEvent::Started(data) => serde_json::to_string(data),
        NativeEvent::ToolStart(data) => serde_json::to_string(data),
        NativeEvent::ToolEnd(data) => serde_json::to_string(data),
        NativeEvent::Progress(data) => serde_json::to_string(data),
        NativeEvent::Payload(data) => serde_json::to_string(data),
        NativeEvent::Completed(data) => serde_json::to_string(data),
        NativeEvent::Failed(data) => serde_json::to_string(data),
    };
    // These types always serialise (string keys only); `null` keeps the frame well-formed.
    let data = data.unwrap_or_else(|_| String::from("null"));
    let mut id = String::new();
    push_u64(&mut id, seq);
    write_frame(out, event.name(), Some(&id), None, &data);
}

/// Encodes one message's native stream, numbering events and enforcing that exactly one
/// terminal event (`completed` or `failed`) ends it.
#[derive(Debug, Clone, Default)]
pub struct NativeEncoder {
    next_seq: u64,
    ended: bool,
    request_id: Option<String>,
}

impl NativeEncoder {
    /// An encoder whose first event gets id 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// An encoder continuing a stream whose next event gets id `next_seq`.
    pub fn resume_at(next_seq: u64) -> Self {
        Self {
            next_seq,
            ..Self::default()
        }
    }

    /// Reports `request_id` in the `started` event of a turn encoded through
    /// [`TurnEncoder`].
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// The id the next event will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Appends `event` to `out` and returns its id; after the terminal event writes nothing
    /// and returns [`EncodeError::AfterEnd`].
    pub fn encode_native(
        &mut self,
        event: &NativeEvent,
        out: &mut String,
    ) -> Result<u64, EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        let seq = self.next_seq;
        encode_event(seq, event, out);
        self.next_seq += 1;
        self.ended = event.is_terminal();
        Ok(seq)
    }

    /// Appends a text chunk; see [`encode_native`](Self::encode_native).
    pub fn chunk(&mut self, text: &str, out: &mut String) -> Result<u64, EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        let seq = self.next_seq;
        let data = serde_json::to_string(&ChunkData {
            chunk: Cow::Borrowed(text),
        })
        .unwrap_or_else(|_| String::from("null"));
        let mut id = String::new();
        push_u64(&mut id, seq);
        write_frame(out, None, Some(&id), None, &data);
        self.next_seq += 1;
        Ok(seq)
    }
}

impl TurnEncoder for NativeEncoder {
    fn encode(
        &mut self,
        event: &crate::turn::TurnEvent,
        out: &mut String,
    ) -> Result<(), EncodeError> {
        match event {
            // The hot path: no copy of the text.
            crate::turn::TurnEvent::Chunk { text } => self.chunk(text, out).map(drop),
            _ => {
                let native = from_turn(event, self.request_id.as_deref());
                self.encode_native(&native, out).map(drop)
            }
        }
    }

    /// Appends a `failed` with code [`CLOSED_CODE`] if no terminal event was written.
    fn close(&mut self, out: &mut String) -> bool {
        let failed = NativeEvent::Failed(Failed::new(CLOSED_CODE, CLOSED_MESSAGE));
        self.encode_native(&failed, out).is_ok()
    }

    fn is_ended(&self) -> bool {
        self.ended
    }
}
