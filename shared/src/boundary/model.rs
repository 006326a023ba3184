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
}
