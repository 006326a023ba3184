//! The provider-neutral chat model vocabulary.
//!
//! Provider decoders (OpenAI-compatible SSE, Ollama NDJSON) turn their wire JSON into
//! [`ChatEvent`]s; nothing outside the codecs ever sees provider JSON. Request-side
//! types ([`ChatMessage`], [`ToolSpec`]) are what the agent engine builds prompts into.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

/// Who authored a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model.
    System,
    /// The visitor or API caller.
    User,
    /// The model.
    Assistant,
    /// The result of a tool call, fed back to the model.
    Tool,
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Author of the message.
    pub role: Role,
    /// Text content (may be empty for an assistant message that only calls tools).
    pub content: String,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A message with plain text content.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// The result of tool call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}

/// A complete tool call: arguments are the full JSON text the model produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned call id (synthesised when the provider sends none).
    pub id: String,
    /// Name of the tool to call.
    pub name: String,
    /// Arguments as JSON text (an object, if the model behaved).
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// Natural end of the answer.
    Stop,
    /// Hit the token limit.
    Length,
    /// Stopped to call tools.
    ToolCalls,
    /// Filtered by the provider.
    ContentFilter,
    /// Anything else the provider reported.
    Other,
}

/// Token counts reported by the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u32,
    /// Tokens generated.
    pub completion_tokens: u32,
}

/// One event of a streamed chat completion, whatever the provider.
///
/// Serialised externally tagged in snake case (`{"text_delta":"Hi"}`,
/// `{"finish":{"reason":"stop","usage":null}}`), e.g. for logs and test fixtures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatEvent {
    /// A piece of answer text.
    TextDelta(String),
    /// A tool call, complete with its arguments.
    ToolCall(ToolCall),
    /// The model finished.
    Finish {
        /// Why it stopped.
        reason: FinishReason,
        /// Token counts, when the provider sent them.
        usage: Option<Usage>,
    },
    /// The provider reported an error inside the stream.
    Error(UpstreamError),
}

impl ChatEvent {
    /// A text delta.
    pub fn text(text: impl Into<String>) -> Self {
        Self::TextDelta(text.into())
    }

    /// A finish without usage.
    pub fn finish(reason: FinishReason) -> Self {
        Self::Finish {
            reason,
            usage: None,
        }
    }

    /// The text of a [`ChatEvent::TextDelta`], if this is one.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::TextDelta(t) => Some(t),
            _ => None,
        }
    }
}

/// An error the upstream reported in-band.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamError {
    /// Provider error code or type, when given.
    pub code: Option<String>,
    /// Human-readable message from the provider.
    pub message: String,
}

impl core::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "upstream error {code}: {}", self.message),
            None => write!(f, "upstream error: {}", self.message),
        }
    }
}
