//! Ollama's native API: `/api/chat` NDJSON streams and `/api/embed`.
//!
//! - [`OllamaStreamDecoder`] turns a streamed `/api/chat` body (one JSON object per line)
//!   into [`ChatEvent`]s: `message.content` pieces become text deltas, `message.tool_calls`
//!   (which arrive whole, with object arguments) become tool calls, the `done` line becomes
//!   the finish with `done_reason` and the token counts, and an `{"error": "..."}` line
//!   becomes [`ChatEvent::Error`] and ends the stream.
//! - [`OllamaChatRequest`] and [`EmbedRequest`] build request bodies; [`EmbedResponse`]
//!   reads `/api/embed` answers.
//!
//! Ollama reports `done_reason: "stop"` after tool calls; the decoder reports
//! [`FinishReason::ToolCalls`] then, as OpenAI-compatible servers do.

mod request;

use alloc::borrow::Cow;
use alloc::collections::VecDeque;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub use request::{
    Arguments, EmbedRequest, EmbedResponse, OllamaChatRequest, OllamaFunctionCall, OllamaMessage,
    OllamaOptions, OllamaToolCallOut,
};

use super::lines::{DEFAULT_MAX_LINE, LineBuffer};
use super::sse::push_u64;
use super::wire::opt_cow;
use super::{ChatStreamDecoder, StreamError};
use crate::chat::{ChatEvent, FinishReason, ToolCall, UpstreamError, Usage};

/// One line of a streamed `/api/chat` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatResponseLine<'a> {
    /// Model name.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<Cow<'a, str>>,
    /// RFC 3339 time of this line.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<Cow<'a, str>>,
    /// What this line adds to the answer.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub message: Option<ResponseMessage<'a>>,
    /// True on the last line.
    #[serde(default)]
    pub done: bool,
    /// Why generation stopped (`stop`, `length`, `load`, `unload`), on the last line.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub done_reason: Option<Cow<'a, str>>,
    /// Total time in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_duration: Option<u64>,
    /// Model load time in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_duration: Option<u64>,
    /// Prompt tokens evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_count: Option<u32>,
    /// Prompt evaluation time in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_duration: Option<u64>,
    /// Tokens generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_count: Option<u32>,
    /// Generation time in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_duration: Option<u64>,
    /// An error reported instead of a chunk.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub error: Option<Cow<'a, str>>,
}

impl ChatResponseLine<'_> {
    /// The token counts, when the line has any.
    pub fn usage(&self) -> Option<Usage> {
        (self.prompt_eval_count.is_some() || self.eval_count.is_some()).then(|| Usage {
            prompt_tokens: self.prompt_eval_count.unwrap_or(0),
            completion_tokens: self.eval_count.unwrap_or(0),
        })
    }
}

/// The `message` of a response line.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResponseMessage<'a> {
    /// Always `assistant`.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub role: Option<Cow<'a, str>>,
    /// A piece of the answer.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub content: Option<Cow<'a, str>>,
    /// A piece of the model's reasoning (thinking models).
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub thinking: Option<Cow<'a, str>>,
    /// Complete tool calls.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ResponseToolCall<'a>>>,
}

/// A complete tool call in a response line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResponseToolCall<'a> {
    /// Call id (recent Ollama versions).
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<Cow<'a, str>>,
    /// The function called.
    #[serde(borrow)]
    pub function: ResponseFunction<'a>,
}

impl PartialEq for ResponseToolCall<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.function == other.function
    }
}

/// Name and arguments of a called function.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResponseFunction<'a> {
    /// Position of the call in the message (recent Ollama versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Function name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// Arguments: a JSON object, kept as its exact text.
    #[serde(borrow)]
    pub arguments: &'a RawValue,
}

impl PartialEq for ResponseFunction<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
            && self.name == other.name
            && self.arguments.get() == other.arguments.get()
    }
}

/// Maps an Ollama `done_reason` to the domain's.
pub fn finish_reason(reason: Option<&str>, called_tools: bool) -> FinishReason {
    match reason {
        None | Some("stop") if called_tools => FinishReason::ToolCalls,
        None | Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some(_) => FinishReason::Other,
    }
}

/// A push-style decoder of a streamed Ollama `/api/chat` response.
///
/// See the [module docs](self) for what it produces and [`ChatStreamDecoder`] for how to
/// drive it. Blank lines are skipped; input ending before the `done` line is reported as
/// [`StreamError::UnexpectedEof`].
#[derive(Debug, Clone)]
pub struct OllamaStreamDecoder {
    lines: LineBuffer,
    queue: VecDeque<Result<ChatEvent, StreamError>>,
    calls: u32,
    ended: bool,
}

impl Default for OllamaStreamDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl OllamaStreamDecoder {
    /// A decoder accepting lines up to 1 MiB.
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A decoder accepting lines up to `max_line` bytes.
    pub fn with_max_line(max_line: usize) -> Self {
        Self {
            lines: LineBuffer::new(false, max_line),
            queue: VecDeque::new(),
            calls: 0,
            ended: false,
        }
    }
}

/// Decodes one line into `queue`; returns whether the stream ended with it.
fn decode_line(
    line: &[u8],
    calls: &mut u32,
    queue: &mut VecDeque<Result<ChatEvent, StreamError>>,
) -> bool {
    let parsed = core::str::from_utf8(line)
        .map_err(|_| StreamError::InvalidUtf8)
        .and_then(|text| Ok(serde_json::from_str::<ChatResponseLine<'_>>(text)?));
    let line = match parsed {
        Ok(line) => line,
        Err(err) => {
            queue.push_back(Err(err));
            return false;
        }
    };
    if let Some(message) = line.error {
        let error = UpstreamError {
            code: None,
            message: message.into_owned(),
        };
        queue.push_back(Ok(ChatEvent::Error(error)));
        return true;
    }
    if let Some(message) = &line.message {
        if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
            queue.push_back(Ok(ChatEvent::TextDelta(text.to_string())));
        }
        for call in message.tool_calls.iter().flatten() {
            let id = match call.id.as_deref().filter(|id| !id.is_empty()) {
                Some(id) => id.to_string(),
                None => {
                    let mut id = String::from("call_");
                    push_u64(&mut id, u64::from(*calls));
                    id
                }
            };
            *calls += 1;
            let name = call.function.name.to_string();
            let arguments = call.function.arguments.get().to_string();
            queue.push_back(Ok(ChatEvent::ToolCall(ToolCall {
                id,
                name,
                arguments,
            })));
        }
    }
    if !line.done {
        return false;
    }
    let reason = finish_reason(line.done_reason.as_deref(), *calls > 0);
    queue.push_back(Ok(ChatEvent::Finish {
        reason,
        usage: line.usage(),
    }));
    true
}

impl ChatStreamDecoder for OllamaStreamDecoder {
    fn feed(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    fn finish(&mut self) {
        self.lines.finish();
    }

    fn next_event(&mut self) -> Option<Result<ChatEvent, StreamError>> {
        while self.queue.is_empty() {
            match self.lines.next_line() {
                Some(Err(_)) => self.queue.push_back(Err(StreamError::LineTooLong)),
                Some(Ok(line)) if line.trim_ascii().is_empty() => {}
                Some(Ok(_)) if self.ended => self.queue.push_back(Err(StreamError::AfterEnd)),
                Some(Ok(line)) => self.ended = decode_line(line, &mut self.calls, &mut self.queue),
                None => {
                    if self.lines.is_finished() && !self.ended {
                        self.ended = true;
                        self.queue.push_back(Err(StreamError::UnexpectedEof));
                    }
                    break;
                }
            }
        }
        self.queue.pop_front()
    }
}
