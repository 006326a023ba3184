//! The streaming chat model boundary.

use alloc::vec::Vec;

use crate::chat::{ChatEvent, ChatMessage, ToolSpec};
use crate::error::ChatModelError;

/// What the engine asks a chat model for: provider-neutral. The implementation adds the
/// provider's model name, endpoint and credentials, and encodes it for its wire format.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The prompt: system message first, then history, the visitor's message last.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call (empty: none).
    pub tools: Vec<ToolSpec>,
    /// Sampling temperature, when the template sets one.
    pub temperature: Option<f32>,
    /// Cap on generated tokens, when the template sets one.
    pub max_tokens: Option<u32>,
}

/// What a step asks of the model's reply beyond the request
/// ([`ChatModel::stream_constrained`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Constraint<'a> {
    /// The reply is one of these labels (non-empty): with structured output, the JSON
    /// object `{"choice": "<label>"}`.
    pub one_of: &'a [&'a str],
    /// The reply calls at least one of the request's tools (OpenAI `tool_choice:
    /// "required"`).
    pub call_tool: bool,
    /// The reply is one tool call written as the JSON object `{"name": "<tool>",
    /// "arguments": {…}}` (structured output over the request's tools, which are not
    /// offered natively): for models that ignore `call_tool`. See
    /// [`tool_call_schema`] and [`parse_tool_call`].
    pub tool_as_json: bool,
}

/// The JSON schema of one call of `tools`: `{"name": <a tool>, "arguments": <its
/// parameters>}`, every free string at most [`JSON_CALL_MAX_STRING`] characters (a small
/// model's runaway string would otherwise never close).
pub fn tool_call_schema(tools: &[crate::chat::ToolSpec]) -> serde_json::Value {
    let each: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| {
            let mut parameters = t.parameters.clone();
            bound_strings(&mut parameters);
            serde_json::json!({
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": parameters},
                "required": ["name", "arguments"],
            })
        })
        .collect();
    serde_json::json!({ "anyOf": each })
}

/// Longest free string in a call asked as JSON ([`tool_call_schema`]).
pub const JSON_CALL_MAX_STRING: u64 = 64;

fn bound_strings(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(map) => {
            let free_string = map.get("type").and_then(serde_json::Value::as_str) == Some("string")
                && !map.contains_key("enum")
                && !map.contains_key("maxLength");
            if free_string {
                map.insert("maxLength".into(), JSON_CALL_MAX_STRING.into());
            }
            map.values_mut().for_each(bound_strings);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(bound_strings),
        _ => {}
    }
}

/// A call of one of `tools` from a reply written under [`Constraint::tool_as_json`]
/// (`None`: not such an object, or not one of the tools).
pub fn parse_tool_call(
    text: &str,
    tools: &[crate::chat::ToolSpec],
    id: alloc::string::String,
) -> Option<crate::chat::ToolCall> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    let name = value.get("name")?.as_str()?;
    let arguments = value.get("arguments").filter(|a| a.is_object())?;
    tools
        .iter()
        .any(|t| t.name == name)
        .then(|| crate::chat::ToolCall {
            id,
            name: name.into(),
            arguments: alloc::string::ToString::to_string(arguments),
        })
}

/// Receives a chat model's streamed events, in order, while the model runs.
pub trait ChatSink {
    /// One event of the stream.
    fn event(&mut self, event: ChatEvent);

    /// The model has the request: its response has begun, before its first event (a
    /// model that cannot tell does not say; its first event says it).
    fn answering(&mut self) {}
}

impl<F: FnMut(ChatEvent)> ChatSink for F {
    fn event(&mut self, event: ChatEvent) {
        self(event);
    }
}

/// A streaming chat model (OpenAI-compatible, Ollama, Workers AI, or a test double).
// `async fn` in a public trait: its futures carry no `Send` bound, which is what we want —
// Workers and browsers are single-threaded.
#[allow(async_fn_in_trait)]
pub trait ChatModel {
    /// Runs `request`, pushing every decoded event into `sink` as it arrives.
    ///
    /// Returns `Ok(())` once the stream ended normally. An error the provider reports
    /// in-band may arrive either as a [`ChatEvent::Error`] or as an `Err`; a transport
    /// failure after some events were pushed returns `Err`.
    async fn stream(
        &self,
        request: &ChatRequest,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError>;

    /// Runs `request` on the provider's model named `model` instead of the configured one
    /// (a template with a model per step, e.g. `guarded`'s small guardrail model). Models
    /// that cannot switch keep the default: they run their own model.
    async fn stream_with_model(
        &self,
        model: &str,
        request: &ChatRequest,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let _ = model;
        self.stream(request, sink).await
    }

    /// Runs `request` under `constraint` (a classifier's labels, a required tool call). A
    /// provider that supports it constrains its decoding, so even a small model keeps to
    /// it; models without it keep the default: the plain request, whose reply the caller
    /// checks as usual.
    async fn stream_constrained(
        &self,
        constraint: &Constraint<'_>,
        request: &ChatRequest,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let _ = constraint;
        self.stream(request, sink).await
    }
}
