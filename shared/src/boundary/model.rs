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

/// What a step asks of the model's reply beyond the request ([`ModelCall::constraint`]).
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

/// One call of the model, as a step describes it: the request, and what the step asks
/// beyond it — another of the provider's models than the site's (a template with a model
/// per step, e.g. `guarded`'s small guardrail model) and a [`Constraint`] on the reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelCall<'a> {
    /// The prompt and its sampling settings.
    pub request: &'a ChatRequest,
    /// The provider's model to run instead of the configured one (`None`: the site's).
    /// Models that cannot switch run their own.
    pub model: Option<&'a str>,
    /// What the reply must be (default: nothing beyond the request). A provider that
    /// supports it constrains its decoding, so even a small model keeps to it; one that
    /// does not runs the plain request, whose reply the caller checks either way.
    pub constraint: Constraint<'a>,
}

impl<'a> ModelCall<'a> {
    /// `request` on the site's model, unconstrained.
    pub fn new(request: &'a ChatRequest) -> Self {
        Self {
            request,
            model: None,
            constraint: Constraint::default(),
        }
    }

    /// The same call on the provider's model `model` (`None`: the site's).
    #[must_use]
    pub fn on_model(self, model: Option<&'a str>) -> Self {
        Self { model, ..self }
    }

    /// The same call under `constraint`.
    #[must_use]
    pub fn constrained(self, constraint: Constraint<'a>) -> Self {
        Self { constraint, ..self }
    }
}

impl<'a> From<&'a ChatRequest> for ModelCall<'a> {
    fn from(request: &'a ChatRequest) -> Self {
        Self::new(request)
    }
}

/// A streaming chat model (OpenAI-compatible, Ollama, Workers AI, or a test double).
// `async fn` in a public trait: its futures carry no `Send` bound, which is what we want —
// Workers and browsers are single-threaded.
#[allow(async_fn_in_trait)]
pub trait ChatModel {
    /// Runs `call`, pushing every decoded event into `sink` as it arrives.
    ///
    /// Returns `Ok(())` once the stream ended normally. An error the provider reports
    /// in-band may arrive either as a [`ChatEvent::Error`] or as an `Err`; a transport
    /// failure after some events were pushed returns `Err`.
    ///
    /// One method, no defaults: a wrapper (the engine's gate) forwards everything a call
    /// says by forwarding this one.
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError>;
}
