//! The model step every template shares when it needs the model's whole text before it
//! goes on (a classifier, a planner, a guardrail, a generated statement): one call,
//! nothing streamed to the visitor.

use alloc::string::String;

use crate::boundary::{ChatModel, ModelCall};
use crate::chat::ChatEvent;
use crate::error::{ChatModelError, ChatModelErrorKind};

/// Runs `call` on `model` and collects its text. An error the provider reports in-band
/// (the first one, if several) fails the call like a transport error: a step that needs
/// the whole text cannot use part of it.
pub async fn complete<M: ChatModel + ?Sized>(
    model: &M,
    call: &ModelCall<'_>,
) -> Result<String, ChatModelError> {
    let mut text = String::new();
    let mut failure = None;
    let mut on_event = |event: ChatEvent| match event {
        ChatEvent::TextDelta(delta) => text.push_str(&delta),
        ChatEvent::Error(error) if failure.is_none() => failure = Some(error.message),
        _ => {}
    };
    model.stream(call, &mut on_event).await?;
    match failure {
        Some(message) => Err(ChatModelError::new(ChatModelErrorKind::Upstream, message)),
        None => Ok(text),
    }
}
