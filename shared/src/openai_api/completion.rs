//! The non-streamed answer: OpenAI's `chat.completion` object.

use serde::Serialize;

use crate::chat::Usage;
use crate::engine::TurnOutcome;

/// A non-streamed answer: OpenAI's `chat.completion` object, plus the stored conversation
/// it used (`chat_id`, absent for a stateless turn).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatCompletion<'a> {
    /// Completion id.
    pub id: &'a str,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Unix time (seconds).
    pub created: u64,
    /// The assistant's id.
    pub model: &'a str,
    /// The one choice.
    pub choices: [CompletionChoice<'a>; 1],
    /// Token counts (zeros when the turn called no model, or the model reported none).
    pub usage: CompletionUsage,
    /// The stored conversation this turn used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<&'a str>,
}

/// The choice of a [`ChatCompletion`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletionChoice<'a> {
    /// Always 0.
    pub index: u32,
    /// The assistant's message.
    pub message: CompletionMessage<'a>,
    /// Always `stop`: the assistant ran any tools itself.
    pub finish_reason: &'static str,
    /// Not provided (`null`).
    pub logprobs: Option<()>,
}

/// The assistant's message of a [`ChatCompletion`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletionMessage<'a> {
    /// Always `assistant`.
    pub role: &'static str,
    /// The reply's text.
    pub content: &'a str,
    /// Never a refusal (`null`).
    pub refusal: Option<()>,
}

/// Token counts of a [`ChatCompletion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompletionUsage {
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Generated tokens.
    pub completion_tokens: u32,
    /// Their sum.
    pub total_tokens: u32,
}

impl From<Option<Usage>> for CompletionUsage {
    fn from(usage: Option<Usage>) -> Self {
        let usage = usage.unwrap_or_default();
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.prompt_tokens.saturating_add(usage.completion_tokens),
        }
    }
}

impl<'a> ChatCompletion<'a> {
    /// The answer of a completed turn: its reply's text and usage.
    pub fn of(
        outcome: &'a TurnOutcome,
        id: &'a str,
        model: &'a str,
        created: u64,
        chat_id: Option<&'a str>,
    ) -> Self {
        Self {
            id,
            object: "chat.completion",
            created,
            model,
            choices: [CompletionChoice {
                index: 0,
                message: CompletionMessage {
                    role: "assistant",
                    content: &outcome.reply.content,
                    refusal: None,
                },
                finish_reason: "stop",
                logprobs: None,
            }],
            usage: outcome.usage.into(),
            chat_id,
        }
    }
}
