//! The Vercel AI SDK UI message stream, protocol v1 (AI SDK 5 and later), so that apps using
//! the AI SDK's `useChat` can talk to Concierge.
//!
//! The response carries the header [`HEADER_NAME`]`: `[`HEADER_VALUE`] and is SSE where each
//! frame is `data: <part>\n\n` and the last is `data: [DONE]\n\n`. [`AiSdkEncoder`] maps
//! [`NativeEvent`]s to parts:
//!
//! | native | UI message stream parts |
//! |---|---|
//! | started | `start` (`messageId` when known), `start-step` |
//! | text chunk | `text-start` (first of a run), `text-delta` |
//! | tool_start | `text-end` (if open), `tool-input-start`, `tool-input-available` |
//! | tool_end | `tool-output-available`, or `tool-output-error` when not ok |
//! | progress | `data-progress` (transient) |
//! | payload | `data-payload` |
//! | completed | `text-end` (if open), `finish-step`, `finish` with `messageMetadata`, `[DONE]` |
//! | failed | `text-end` (if open), `error` with `errorText`, `[DONE]` |
//!
//! Parts carry only the fields the protocol defines (the AI SDK validates them strictly).
//! `start`/`start-step` are sent before the first part if no `started` came first.
//!
//! ```
//! use concierge_core::stream::ai_sdk::AiSdkEncoder;
//! use concierge_core::stream::native::{Completed, NativeEvent};
//!
//! let mut encoder = AiSdkEncoder::new();
//! let mut out = String::new();
//! encoder.encode(&NativeEvent::Chunk("Hi".into()), &mut out)?;
//! encoder.encode(&NativeEvent::Completed(Completed::new("m1", "answer")), &mut out)?;
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

use super::EncodeError;
use super::native::{CLOSED_CODE, Completed, Failed, NativeEvent};
use super::sse::{push_u64, write_frame};

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
pub struct DataPart<'a> {
    /// The name after `data-`.
    pub name: &'a str,
    /// The data.
    pub data: &'a serde_json::Value,
    /// Transient parts reach `onData` but are not added to the message.
    pub transient: bool,
}

impl Serialize for DataPart<'_> {
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

    /// Whether the stream has ended.
    pub fn is_ended(&self) -> bool {
        self.ended
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

    /// Appends the parts for `event`; after the terminal event writes nothing and returns
    /// [`EncodeError::AfterEnd`].
    pub fn encode(&mut self, event: &NativeEvent, out: &mut String) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        if let NativeEvent::Started(started) = event {
            self.start(started.message_id.as_deref(), out);
            return Ok(());
        }
        self.start(None, out);
        match event {
            NativeEvent::Started(_) => {}
            NativeEvent::Chunk(delta) => {
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
            NativeEvent::ToolStart(tool) => {
                self.end_text(out);
                let (tool_call_id, tool_name) = (tool.call_id.as_str(), tool.name.as_str());
                write_part(
                    out,
                    &UiPart::ToolInputStart {
                        tool_call_id,
                        tool_name,
                    },
                );
                let input = &tool.input;
                write_part(
                    out,
                    &UiPart::ToolInputAvailable {
                        tool_call_id,
                        tool_name,
                        input,
                    },
                );
            }
            NativeEvent::ToolEnd(tool) if tool.ok => {
                let (tool_call_id, output) = (tool.call_id.as_str(), &tool.output);
                write_part(
                    out,
                    &UiPart::ToolOutputAvailable {
                        tool_call_id,
                        output,
                    },
                );
            }
            NativeEvent::ToolEnd(tool) => {
                let text = match &tool.output {
                    serde_json::Value::String(text) => text.clone(),
                    other => serde_json::to_string(other).unwrap_or_default(),
                };
                let tool_call_id = tool.call_id.as_str();
                write_part(
                    out,
                    &UiPart::ToolOutputError {
                        tool_call_id,
                        error_text: &text,
                    },
                );
            }
            NativeEvent::Progress(progress) => {
                let data = serde_json::to_value(progress).unwrap_or_default();
                write_part(
                    out,
                    &DataPart {
                        name: "progress",
                        data: &data,
                        transient: true,
                    },
                );
            }
            NativeEvent::Payload(data) => {
                write_part(
                    out,
                    &DataPart {
                        name: "payload",
                        data,
                        transient: false,
                    },
                );
            }
            NativeEvent::Completed(done) => {
                self.end_text(out);
                write_part(out, &UiPart::FinishStep);
                write_part(
                    out,
                    &UiPart::Finish {
                        message_metadata: Some(done),
                    },
                );
                self.finish(out);
            }
            NativeEvent::Failed(Failed { error }) => {
                self.end_text(out);
                write_part(
                    out,
                    &UiPart::Error {
                        error_text: &error.message,
                    },
                );
                self.finish(out);
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut String) {
        write_frame(out, None, None, None, "[DONE]");
        self.ended = true;
    }

    /// Ends the stream with an error if it has not ended; returns whether it wrote one.
    pub fn close(&mut self, out: &mut String) -> bool {
        let failed = NativeEvent::Failed(Failed::new(CLOSED_CODE, "The answer was interrupted."));
        self.encode(&failed, out).is_ok()
    }
}

/// Appends `data: <part>\n\n`.
fn write_part(out: &mut String, part: &impl Serialize) {
    // Serialising parts cannot fail: every map key is a string.
    let json = serde_json::to_string(part).unwrap_or_else(|_| String::from("null"));
    write_frame(out, None, None, None, &json);
}
