//! OpenAI-compatible chat-completion streams (OpenAI, llama.cpp `llama-server`, vLLM, …).
//!
//! - [`OpenAiStreamDecoder`] turns a streamed `/v1/chat/completions` response body (SSE of
//!   [`ChatCompletionChunk`]s, ended by `data: [DONE]`) into [`ChatEvent`]s: text deltas,
//!   tool calls assembled from their fragments ([`ToolCallAssembler`]), one finish with
//!   the reason and, when `stream_options.include_usage` was set, the usage of the final
//!   chunk with empty `choices`; an error object sent in-stream becomes
//!   [`ChatEvent::Error`] and ends the stream.
//! - [`ChatRequestBuilder`] and [`EmbeddingsRequest`] build request bodies from the domain
//!   types; [`EmbeddingsResponse`] reads `/v1/embeddings` answers.
//!
//! Only choice 0 is decoded (Concierge never asks for `n` > 1).

mod assemble;
mod chunk;
mod request;

use alloc::collections::VecDeque;
use alloc::string::{String, ToString};

pub use assemble::ToolCallAssembler;
pub use chunk::{
    ApiError, ChatCompletionChunk, ChunkChoice, ChunkDelta, CompletionUsage, FunctionChunk,
    ToolCallChunk,
};
pub use request::{
    ChatCompletionRequest, ChatRequestBuilder, EmbeddingData, EmbeddingsRequest,
    EmbeddingsResponse, EmbeddingsUsage, RequestFunction, RequestMessage, RequestTool,
    RequestToolCall, StreamOptions, ToolChoice, choice_schema,
};

use super::sse::SseDecoder;
use super::{ChatStreamDecoder, StreamError};
use crate::chat::{ChatEvent, FinishReason, UpstreamError, Usage};

/// Maps an OpenAI `finish_reason` to the domain's.
pub fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "eos" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

impl From<CompletionUsage> for Usage {
    fn from(u: CompletionUsage) -> Self {
        Self {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        }
    }
}

impl From<&ApiError<'_>> for UpstreamError {
    fn from(e: &ApiError<'_>) -> Self {
        let code = match &e.code {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => e.kind.as_deref().map(ToString::to_string),
        };
        Self {
            code,
            message: e.message.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Streaming,
    /// `[DONE]` (or an in-stream error) was seen.
    Ended {
        by_error: bool,
    },
}

/// A push-style decoder of an OpenAI-compatible streamed chat completion.
///
/// See the [module docs](self) for what it produces; the [`ChatStreamDecoder`] docs for how
/// to drive it. If the input ends after a `finish_reason` but without `[DONE]`, the finish is
/// still reported; if it ends before any `finish_reason`, [`StreamError::UnexpectedEof`] is.
#[derive(Debug, Clone)]
pub struct OpenAiStreamDecoder {
    sse: SseDecoder,
    state: Decoding,
}

/// Everything but the SSE framing, so that it can be updated while an event borrows the
/// SSE decoder.
#[derive(Debug, Clone)]
struct Decoding {
    queue: VecDeque<Result<ChatEvent, StreamError>>,
    calls: ToolCallAssembler,
    saw_tool_calls: bool,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    state: State,
    finished_input: bool,
}

impl Default for OpenAiStreamDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiStreamDecoder {
    /// A decoder with the default SSE limits.
    pub fn new() -> Self {
        Self::with_sse(SseDecoder::new())
    }

    /// A decoder reading through the given (e.g. differently limited) SSE decoder.
    pub fn with_sse(sse: SseDecoder) -> Self {
        let state = Decoding {
            queue: VecDeque::new(),
            calls: ToolCallAssembler::new(),
            saw_tool_calls: false,
            finish: None,
            usage: None,
            state: State::Streaming,
            finished_input: false,
        };
        Self { sse, state }
    }
}

impl Decoding {
    /// Decodes one SSE `data` payload; `event` is the SSE event type.
    fn on_data(&mut self, event: &str, data: &str) {
        if data == "[DONE]" {
            match self.state {
                State::Streaming => self.end(),
                State::Ended { by_error: true } => {}
                State::Ended { by_error: false } => {
                    self.queue.push_back(Err(StreamError::AfterEnd))
                }
            }
            return;
        }
        let parsed = serde_json::from_str::<ChatCompletionChunk<'_>>(data);
        if self.state != State::Streaming {
            let err = parsed.err().map_or(StreamError::AfterEnd, Into::into);
            return self.queue.push_back(Err(err));
        }
        let error = match &parsed {
            Ok(ChatCompletionChunk {
                error: Some(error), ..
            }) => Some(error.into()),
            // Some servers name the event instead of wrapping the object in `error`.
            _ if event == "error" => Some(UpstreamError {
                code: None,
                message: data.to_string(),
            }),
            _ => None,
        };
        if let Some(error) = error {
            self.state = State::Ended { by_error: true };
            return self.queue.push_back(Ok(ChatEvent::Error(error)));
        }
        let chunk = match parsed {
            Ok(chunk) => chunk,
            Err(err) => return self.queue.push_back(Err(err.into())),
        };
        for choice in chunk.choices.iter().filter(|c| c.index == 0) {
            let delta = &choice.delta;
            if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
                self.queue
                    .push_back(Ok(ChatEvent::TextDelta(String::from(text))));
            }
            for piece in delta.tool_calls.iter().flatten() {
                self.calls.push(piece);
            }
            if let Some(reason) = choice.finish_reason.as_deref() {
                self.finish = Some(finish_reason(reason));
                self.flush_calls();
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
    }

    fn flush_calls(&mut self) {
        for call in self.calls.take() {
            self.saw_tool_calls = true;
            self.queue.push_back(Ok(ChatEvent::ToolCall(call)));
        }
    }

    /// Ends the stream normally: pending tool calls, then the finish.
    fn end(&mut self) {
        self.flush_calls();
        let reason = self.finish.unwrap_or(if self.saw_tool_calls {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        });
        self.queue.push_back(Ok(ChatEvent::Finish {
            reason,
            usage: self.usage,
        }));
        self.state = State::Ended { by_error: false };
    }

    /// At end of input: a finish without `[DONE]` still counts; no finish at all is an error.
    fn end_of_input(&mut self) {
        if self.finished_input && self.state == State::Streaming {
            if self.finish.is_some() {
                self.end();
            } else {
                self.state = State::Ended { by_error: true };
                self.queue.push_back(Err(StreamError::UnexpectedEof));
            }
        }
    }
}

impl ChatStreamDecoder for OpenAiStreamDecoder {
    fn feed(&mut self, bytes: &[u8]) {
        self.sse.feed(bytes);
    }

    fn finish(&mut self) {
        self.sse.finish();
        self.state.finished_input = true;
    }

    fn next_event(&mut self) -> Option<Result<ChatEvent, StreamError>> {
        while self.state.queue.is_empty() {
            match self.sse.next_event() {
                Some(Ok(ev)) => self.state.on_data(ev.event, ev.data),
                Some(Err(err)) => self.state.queue.push_back(Err(err.into())),
                None => {
                    self.state.end_of_input();
                    break;
                }
            }
        }
        self.state.queue.pop_front()
    }
}
