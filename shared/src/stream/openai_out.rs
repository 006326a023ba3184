//! OpenAI-compatible `chat.completion.chunk` output, for Concierge's own
//! `/v1/chat/completions`, so that any OpenAI SDK client can stream an assistant's answer.
//!
//! [`OpenAiChunkEncoder`] writes `data: {chunk}\n\n` frames only (no `event:`, `id:` or
//! comment lines): text deltas (the first chunk also carries `"role":"assistant"`), then one
//! finish chunk with the stream's only `finish_reason`, the usage chunk with empty `choices`
//! when the client asked for `stream_options.include_usage`, and `data: [DONE]`.
//!
//! Through [`TurnEncoder`], a turn's text chunks become content deltas and `Completed`
//! becomes the finish (`"stop"`: the server ran any tools itself, so the client has none to
//! call) with the turn's usage. `Started`, tool calls, progress and payloads have no place
//! in this format and are left out: an OpenAI client gets the answer's text and its end.
//! [`OpenAiChunkEncoder::with_chat_id`] adds Concierge's one extension, a `chat_id` field
//! naming the stored conversation, to every frame.
//!
//! A failure (a turn's `Failed`, or [`TurnEncoder::close`] without a terminal event) is the
//! in-stream error object OpenAI itself sends, `data: {"error":{"message","type":
//! "server_error","code"}}` (the turn's visitor-safe message and its code), then
//! `data: [DONE]`; no `finish_reason` and no usage chunk are sent. The official SDKs raise an API error with
//! that message when they read it. After either end the encoder refuses further events.
//!
//! ```
//! use concierge_core::chat::FinishReason;
//! use concierge_core::stream::openai_out::OpenAiChunkEncoder;
//!
//! let mut encoder = OpenAiChunkEncoder::new("chatcmpl-1", "shop", 1_700_000_000);
//! let mut out = String::new();
//! encoder.text("Hi", &mut out)?;
//! encoder.finish(FinishReason::Stop, None, &mut out)?;
//! assert!(out.starts_with(r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"shop","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#));
//! assert!(out.ends_with("data: [DONE]\n\n"));
//! # Ok::<(), concierge_core::stream::EncodeError>(())
//! ```

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::Serialize;

use super::native::{CLOSED_CODE, CLOSED_MESSAGE};
use super::openai::{
    ApiError, ChatCompletionChunk, ChunkChoice, ChunkDelta, CompletionUsage, FunctionChunk,
    ToolCallChunk,
};
use super::sse::write_frame;
use super::{EncodeError, TurnEncoder};
use crate::chat::{FinishReason, ToolCall, Usage};
use crate::turn::TurnEvent;

/// The OpenAI spelling of a finish reason (`Other` is reported as `stop`).
pub fn finish_reason_str(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop | FinishReason::Other => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
    }
}

/// Encodes one streamed completion as OpenAI `chat.completion.chunk` SSE frames.
#[derive(Debug, Clone)]
pub struct OpenAiChunkEncoder {
    id: String,
    model: String,
    created: u64,
    include_usage: bool,
    chat_id: Option<String>,
    role_sent: bool,
    tool_calls: u32,
    ended: bool,
}

impl OpenAiChunkEncoder {
    /// An encoder for completion `id` of `model`, created at Unix time `created` (seconds).
    pub fn new(id: impl Into<String>, model: impl Into<String>, created: u64) -> Self {
        Self {
            id: id.into(),
            model: model.into(),
            created,
            include_usage: false,
            chat_id: None,
            role_sent: false,
            tool_calls: 0,
            ended: false,
        }
    }

    /// Sends the usage chunk before `[DONE]` (the client's `stream_options.include_usage`).
    pub fn include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// Adds Concierge's `chat_id` field (the stored conversation the turn used) to every
    /// chunk and to the in-stream error; OpenAI clients keep it as an extra field.
    pub fn with_chat_id(mut self, chat_id: Option<String>) -> Self {
        self.chat_id = chat_id;
        self
    }

    fn write(&mut self, out: &mut String, choices: Vec<ChunkChoice<'_>>, usage: Option<Usage>) {
        let chunk = ChatCompletionChunk {
            id: Some(Cow::Borrowed(&self.id)),
            object: Some(Cow::Borrowed("chat.completion.chunk")),
            created: Some(self.created),
            model: Some(Cow::Borrowed(&self.model)),
            choices,
            usage: usage.map(|u| CompletionUsage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                total_tokens: u.prompt_tokens.saturating_add(u.completion_tokens),
            }),
            ..ChatCompletionChunk::default()
        };
        write_json(
            out,
            &WithChatId {
                inner: chunk,
                chat_id: self.chat_id.as_deref(),
            },
        );
    }

    fn delta<'a>(&mut self, mut delta: ChunkDelta<'a>, finish: Option<&'a str>) -> ChunkChoice<'a> {
        if !self.role_sent {
            self.role_sent = true;
            delta.role = Some(Cow::Borrowed("assistant"));
        }
        ChunkChoice {
            index: 0,
            delta,
            finish_reason: finish.map(Cow::Borrowed),
        }
    }

    /// Appends a text delta.
    pub fn text(&mut self, text: &str, out: &mut String) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        let delta = ChunkDelta {
            content: Some(Cow::Borrowed(text)),
            ..ChunkDelta::default()
        };
        let choice = self.delta(delta, None);
        self.write(out, vec![choice], None);
        Ok(())
    }

    /// Appends a whole tool call (one chunk with its id, name and all its arguments).
    pub fn tool_call(&mut self, call: &ToolCall, out: &mut String) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        let piece = ToolCallChunk {
            index: Some(self.tool_calls),
            id: Some(Cow::Borrowed(&call.id)),
            kind: Some(Cow::Borrowed("function")),
            function: Some(FunctionChunk {
                name: Some(Cow::Borrowed(&call.name)),
                arguments: Some(Cow::Borrowed(&call.arguments)),
            }),
        };
        self.tool_calls += 1;
        let delta = ChunkDelta {
            tool_calls: Some(vec![piece]),
            ..ChunkDelta::default()
        };
        let choice = self.delta(delta, None);
        self.write(out, vec![choice], None);
        Ok(())
    }

    /// Ends the stream: the finish chunk, the usage chunk (if asked for and known), `[DONE]`.
    pub fn finish(
        &mut self,
        reason: FinishReason,
        usage: Option<Usage>,
        out: &mut String,
    ) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        self.ended = true;
        let choice = self.delta(ChunkDelta::default(), Some(finish_reason_str(reason)));
        self.write(out, vec![choice], None);
        if self.include_usage {
            self.write(out, Vec::new(), Some(usage.unwrap_or_default()));
        }
        write_frame(out, None, None, None, "[DONE]");
        Ok(())
    }

    /// Ends the stream with an in-stream error object, then `[DONE]`.
    pub fn error(
        &mut self,
        code: &str,
        message: &str,
        out: &mut String,
    ) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        self.ended = true;
        #[derive(Serialize)]
        struct Envelope<'a> {
            error: ApiError<'a>,
        }
        let error = ApiError {
            message: Cow::Borrowed(message),
            kind: Some(Cow::Borrowed("server_error")),
            param: None,
            code: Some(serde_json::Value::String(String::from(code))),
        };
        let envelope = WithChatId {
            inner: Envelope { error },
            chat_id: self.chat_id.as_deref(),
        };
        write_json(out, &envelope);
        write_frame(out, None, None, None, "[DONE]");
        Ok(())
    }
}

impl TurnEncoder for OpenAiChunkEncoder {
    fn encode(&mut self, event: &TurnEvent, out: &mut String) -> Result<(), EncodeError> {
        match event {
            TurnEvent::Chunk { text } => self.text(text, out),
            TurnEvent::Completed { usage, .. } => self.finish(FinishReason::Stop, *usage, out),
            TurnEvent::Failed { code, message } => self.error(code, message, out),
            TurnEvent::Started { .. }
            | TurnEvent::ToolStart { .. }
            | TurnEvent::ToolEnd { .. }
            | TurnEvent::Progress { .. }
            | TurnEvent::Payload { .. } => {
                if self.ended {
                    Err(EncodeError::AfterEnd)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Ends the stream with an error (code [`CLOSED_CODE`]) if it has not ended.
    fn close(&mut self, out: &mut String) -> bool {
        self.error(CLOSED_CODE, CLOSED_MESSAGE, out).is_ok()
    }

    fn is_ended(&self) -> bool {
        self.ended
    }
}

/// A payload with Concierge's `chat_id` beside its own fields (left out when `None`).
#[derive(Serialize)]
struct WithChatId<'a, T> {
    #[serde(flatten)]
    inner: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_id: Option<&'a str>,
}

/// Appends `data: <json>\n\n`.
fn write_json(out: &mut String, value: &impl Serialize) {
    // Serialising the wire types cannot fail: every map key is a string.
    let json = serde_json::to_string(value).unwrap_or_else(|_| String::from("null"));
    write_frame(out, None, None, None, &json);
}
