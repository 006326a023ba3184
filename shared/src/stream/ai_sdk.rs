//! The Vercel AI SDK UI message stream, protocol v1 (AI SDK 5 and later), so that apps using
//! the AI SDK's `useChat` can talk to Concierge.
//!
//! The response carries the header [`HEADER_NAME`]`: `[`HEADER_VALUE`] and is SSE where each
//! frame is `data: <part>\n\n` and the last is `data: [DONE]\n\n`. [`AiSdkEncoder`] maps a
//! turn's [`TurnEvent`]s to parts:
//!
//! | turn event | UI message stream parts |
//! |---|---|
//! | `Started` | `start` (`messageId`: the reply's id), `start-step` |
//! | `Chunk` | `text-start` (first of a run), `text-delta` |
//! | `ToolStart` | `text-end` (if open), `tool-input-start`, `tool-input-available` |
//! | `ToolEnd` | `tool-output-available`, or `tool-output-error` when not ok |
//! | `Progress` | `data-progress` `{"message","percentage","stage"}`, transient |
//! | `Payload` | `data-payload` `{"kind","data"}` |
//! | `Completed` | `text-end` (if open), `finish-step`, `finish` with `messageMetadata`, `[DONE]` |
//! | `Failed` | `text-end` (if open), `error` with the visitor-safe message, `[DONE]` |
//!
//! `messageMetadata` is the native `completed` data (`message_id`, `kind`, `intent`,
//! `confidence`, `usage`). Parts carry only the fields AI SDK 5.0.0 defines (it validates
//! parts strictly; later versions accept more), so `finish` has no `finishReason` and `error`
//! no code. `tests/ai-sdk/parse.mjs` checks the output with the pinned `ai` package's parser.
//! `start`/`start-step` are sent before the first part if no `Started` came first.
//! Progress is transient: `useChat` hands it to `onData` but does not keep it in the message.
//!
//! ```
//! use concierge_core::conversation::MessageKind;
//! use concierge_core::stream::TurnEncoder;
//! use concierge_core::stream::ai_sdk::AiSdkEncoder;
//! use concierge_core::turn::TurnEvent;
//!
//! let mut encoder = AiSdkEncoder::new();
//! let mut out = String::new();
//! encoder.encode(&TurnEvent::Chunk { text: "Hi".into() }, &mut out)?;
//! let done = TurnEvent::Completed {
//!     message_id: "m1".into(),
//!     kind: MessageKind::Answer,
//!     intent: None,
//!     confidence: None,
//!     usage: None,
//!     reply: None,
//! };
//! encoder.encode(&done, &mut out)?;
//! assert!(!encoder.close(&mut out));
//! assert_eq!(out, concat!(
//!     "data: {\"type\":\"start\"}\n\n",
//!     "data: {\"type\":\"start-step\"}\n\n",
//!     "data: {\"type\":\"text-start\",\"id\":\"text-0\"}\n\n",
//!     "data: {\"type\":\"text-delta\",\"id\":\"text-0\",\"delta\":\"Hi\"}\n\n",
//!     "data: {\"type\":\"text-end\",\"id\":\"text-0\"}\n\n",
//!     "data: {\"type\":\"finish-step\"}\n\n",
//!     "data: {\"type\":\"finish\",\"messageMetadata\":{\"message_id\":\"m1\",\"kind\":\"answer\"}}\n\n",
//!     "data: [DONE]\n\n",
//! ));
//! # Ok::<(), concierge_core::stream::EncodeError>(())
//! ```

use alloc::string::String;

use serde::Serialize;
use serde::ser::SerializeMap;

use super::native::{CLOSED_MESSAGE, Completed, NativeEvent, from_turn};
use super::sse::{push_u64, write_frame};
use super::{EncodeError, TurnEncoder};
use crate::turn::TurnEvent;

/// The response header that marks a UI message stream.
pub const HEADER_NAME: &str = "x-vercel-ai-ui-message-stream";
/// Its value for protocol v1.
pub const HEADER_VALUE: &str = "v1";

/// One part of a UI message stream (the subset Concierge emits).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum UiPart<'a> {
    /// A new assistant message.
    Start {
        /// Its id, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<&'a str>,
    },
    /// A new step (one model call) of the message.
    StartStep,
    /// The step ended.
    FinishStep,
    /// A text part starts.
    TextStart {
        /// Part id.
        id: &'a str,
    },
    /// A piece of a text part.
    TextDelta {
        /// Part id.
        id: &'a str,
        /// The text.
        delta: &'a str,
    },
    /// A text part ends.
    TextEnd {
        /// Part id.
        id: &'a str,
    },
    /// A tool call starts.
    ToolInputStart {
        /// Call id.
        tool_call_id: &'a str,
        /// Tool name.
        tool_name: &'a str,
    },
    /// A tool call's complete input.
    ToolInputAvailable {
        /// Call id.
        tool_call_id: &'a str,
        /// Tool name.
        tool_name: &'a str,
        /// The arguments.
        input: &'a serde_json::Value,
    },
    /// A tool call's result.
    ToolOutputAvailable {
        /// Call id.
        tool_call_id: &'a str,
        /// The result.
        output: &'a serde_json::Value,
    },
    /// A tool call failed.
    ToolOutputError {
        /// Call id.
        tool_call_id: &'a str,
        /// What went wrong.
        error_text: &'a str,
    },
    /// The message failed.
    Error {
        /// What went wrong.
        error_text: &'a str,
    },
    /// The message is complete.
    Finish {
        /// Application metadata attached to the message.
        #[serde(skip_serializing_if = "Option::is_none")]
        message_metadata: Option<&'a Completed>,
    },
}

/// A custom `data-<name>` part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataPart<'a, T: ?Sized = serde_json::Value> {
    /// The name after `data-`.
    pub name: &'a str,
    /// The data.
    pub data: &'a T,
    /// Transient parts reach `onData` but are not added to the message.
    pub transient: bool,
}

impl<T: Serialize + ?Sized> Serialize for DataPart<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let mut kind = String::from("data-");
        kind.push_str(self.name);
        map.serialize_entry("type", &kind)?;
        map.serialize_entry("data", self.data)?;
        if self.transient {
            map.serialize_entry("transient", &true)?;
        }
        map.end()
    }
}

/// Encodes one assistant message as a UI message stream; see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct AiSdkEncoder {
    started: bool,
    /// Id of the open text part.
    text: Option<String>,
    texts: u64,
    ended: bool,
}

impl AiSdkEncoder {
    /// A fresh encoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn start(&mut self, message_id: Option<&str>, out: &mut String) {
        if !self.started {
            self.started = true;
            write_part(out, &UiPart::Start { message_id });
            write_part(out, &UiPart::StartStep);
        }
    }

    fn end_text(&mut self, out: &mut String) {
        if let Some(id) = self.text.take() {
            write_part(out, &UiPart::TextEnd { id: &id });
        }
    }

    fn finish(&mut self, out: &mut String) {
        write_frame(out, None, None, None, "[DONE]");
        self.ended = true;
    }

    fn fail(&mut self, error_text: &str, out: &mut String) {
        self.end_text(out);
        write_part(out, &UiPart::Error { error_text });
        self.finish(out);
    }
}

impl TurnEncoder for AiSdkEncoder {
    fn encode(&mut self, event: &TurnEvent, out: &mut String) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        if let TurnEvent::Started { message_id, .. } = event {
            self.start(Some(message_id), out);
            return Ok(());
        }
        self.start(None, out);
        match event {
            TurnEvent::Started { .. } => {}
            TurnEvent::Chunk { text: delta } => {
                if self.text.is_none() {
                    let mut id = String::from("text-");
                    push_u64(&mut id, self.texts);
                    self.texts += 1;
                    write_part(out, &UiPart::TextStart { id: &id });
                    self.text = Some(id);
                }
                let id = self.text.as_deref().unwrap_or_default();
                write_part(out, &UiPart::TextDelta { id, delta });
            }
            TurnEvent::ToolStart {
                call_id: tool_call_id,
                name: tool_name,
                input,
            } => {
                self.end_text(out);
                write_part(
                    out,
                    &UiPart::ToolInputStart {
                        tool_call_id,
                        tool_name,
                    },
                );
                write_part(
                    out,
                    &UiPart::ToolInputAvailable {
                        tool_call_id,
                        tool_name,
                        input,
                    },
                );
            }
            TurnEvent::ToolEnd {
                call_id: tool_call_id,
                ok: true,
                output,
                ..
            } => write_part(
                out,
                &UiPart::ToolOutputAvailable {
                    tool_call_id,
                    output,
                },
            ),
            TurnEvent::ToolEnd {
                call_id: tool_call_id,
                output,
                ..
            } => {
                let text = match output {
                    serde_json::Value::String(text) => text.clone(),
                    other => serde_json::to_string(other).unwrap_or_default(),
                };
                write_part(
                    out,
                    &UiPart::ToolOutputError {
                        tool_call_id,
                        error_text: &text,
                    },
                );
            }
            TurnEvent::Progress { .. } | TurnEvent::Payload { .. } => {
                match from_turn(event, None) {
                    // Serialised from the typed struct, so `percentage` reads as written.
                    NativeEvent::Progress(data) => write_part(
                        out,
                        &DataPart {
                            name: "progress",
                            data: &data,
                            transient: true,
                        },
                    ),
                    NativeEvent::Payload(data) => write_part(
                        out,
                        &DataPart {
                            name: "payload",
                            data: &data,
                            transient: false,
                        },
                    ),
                    _ => {}
                }
            }
            TurnEvent::Completed { .. } => {
                self.end_text(out);
                write_part(out, &UiPart::FinishStep);
                let metadata = match from_turn(event, None) {
                    NativeEvent::Completed(done) => Some(done),
                    _ => None,
                };
                let message_metadata = metadata.as_ref();
                write_part(out, &UiPart::Finish { message_metadata });
                self.finish(out);
            }
            TurnEvent::Failed { message, .. } => self.fail(message, out),
        }
        Ok(())
    }

    /// Ends the stream with an `error` part if it has not ended.
    fn close(&mut self, out: &mut String) -> bool {
        if self.ended {
            return false;
        }
        self.start(None, out);
        self.fail(CLOSED_MESSAGE, out);
        true
    }

    fn is_ended(&self) -> bool {
        self.ended
    }
}

/// Appends `data: <part>\n\n`.
fn write_part(out: &mut String, part: &impl Serialize) {
    // Serialising parts cannot fail: every map key is a string.
    let json = serde_json::to_string(part).unwrap_or_else(|_| String::from("null"));
    write_frame(out, None, None, None, &json);
}
