//! Workers AI replies as chat events: a streamed reply's `data:` events, or a whole
//! reply's `{response, tool_calls, usage}`.

use std::collections::VecDeque;

use concierge_core::chat::{ChatEvent, FinishReason, ToolCall, Usage};
use concierge_core::stream::sse::SseDecoder;
use concierge_core::stream::{ChatStreamDecoder, StreamError};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    /// Legacy shape: `{name, arguments}`.
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    /// OpenAI-style shape: `{id, type, function: {name, arguments}}`.
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// One streamed event's data, or the whole reply of a non-streamed call.
#[derive(Debug, Deserialize)]
struct WireReply {
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        None | Some(Value::Null) => "{}".into(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

impl WireReply {
    /// Text delta and tool calls; `calls` numbers synthesised call ids.
    fn events(self, calls: &mut usize, out: &mut VecDeque<Result<ChatEvent, StreamError>>) {
        match self.response {
            Some(Value::String(text)) if !text.is_empty() => {
                out.push_back(Ok(ChatEvent::TextDelta(text)));
            }
            // A structured reply may come back parsed: the caller reads its JSON text.
            Some(value @ (Value::Object(_) | Value::Array(_))) => {
                out.push_back(Ok(ChatEvent::TextDelta(value.to_string())));
            }
            _ => {}
        }
        for call in self.tool_calls.unwrap_or_default() {
            let (name, arguments) = match call.function {
                Some(f) => (f.name, f.arguments),
                None => match call.name {
                    Some(name) => (name, call.arguments),
                    None => {
                        out.push_back(Err(StreamError::Json(
                            concierge_core::stream::JsonErrorKind::Data,
                        )));
                        continue;
                    }
                },
            };
            *calls += 1;
            out.push_back(Ok(ChatEvent::ToolCall(ToolCall {
                id: call
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{calls}")),
                name,
                arguments: arguments_text(arguments),
            })));
        }
    }
}

fn usage(wire: Option<&WireUsage>) -> Option<Usage> {
    wire.map(|u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
    })
}

/// The events of a non-streamed reply (`{response, tool_calls, usage}`), finish last.
pub(crate) fn reply_events(reply: Value) -> Result<Vec<ChatEvent>, String> {
    let reply: WireReply =
        serde_json::from_value(reply).map_err(|e| format!("Workers AI reply: {e}"))?;
    let usage = usage(reply.usage.as_ref());
    let mut queue = VecDeque::new();
    reply.events(&mut 0, &mut queue);
    let mut events = Vec::with_capacity(queue.len() + 1);
    let mut tool_calls = false;
    for event in queue {
        let event = event.map_err(|e| format!("Workers AI reply: {e}"))?;
        tool_calls |= matches!(event, ChatEvent::ToolCall(_));
        events.push(event);
    }
    let reason = if tool_calls {
        FinishReason::ToolCalls
    } else {
        FinishReason::Stop
    };
    events.push(ChatEvent::Finish { reason, usage });
    Ok(events)
}

/// Decodes a streamed Workers AI reply: `data: {"response": "…"}` events (an event may also
/// carry `usage` or whole `tool_calls`), ended by `data: [DONE]`. A stream that ends
/// without `[DONE]` was cut ([`StreamError::UnexpectedEof`]).
#[derive(Debug, Default)]
pub(crate) struct WorkersAiStreamDecoder {
    sse: SseDecoder,
    queue: VecDeque<Result<ChatEvent, StreamError>>,
    usage: Option<Usage>,
    calls: usize,
    ended: bool,
    finished_input: bool,
}

impl WorkersAiStreamDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn decode(&mut self, data: &str) {
        if self.ended {
            self.queue.push_back(Err(StreamError::AfterEnd));
            return;
        }
        if data.trim() == "[DONE]" {
            self.ended = true;
            let reason = if self.calls > 0 {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            };
            self.queue.push_back(Ok(ChatEvent::Finish {
                reason,
                usage: self.usage,
            }));
            return;
        }
        match serde_json::from_str::<WireReply>(data) {
            Ok(reply) => {
                if let Some(u) = usage(reply.usage.as_ref()) {
                    self.usage = Some(u);
                }
                reply.events(&mut self.calls, &mut self.queue);
            }
            Err(e) => self.queue.push_back(Err(StreamError::from(e))),
        }
    }
}

impl ChatStreamDecoder for WorkersAiStreamDecoder {
    fn feed(&mut self, bytes: &[u8]) {
        self.sse.feed(bytes);
    }

    fn finish(&mut self) {
        self.sse.finish();
        self.finished_input = true;
    }

    fn next_event(&mut self) -> Option<Result<ChatEvent, StreamError>> {
        while self.queue.is_empty() {
            let data = match self.sse.next_event() {
                Some(Ok(event)) => event.data.to_string(),
                Some(Err(error)) => {
                    self.queue.push_back(Err(StreamError::Sse(error)));
                    continue;
                }
                None => {
                    if self.finished_input && !self.ended {
                        self.ended = true;
                        self.queue.push_back(Err(StreamError::UnexpectedEof));
                        continue;
                    }
                    return None;
                }
            };
            self.decode(&data);
        }
        self.queue.pop_front()
    }
}
