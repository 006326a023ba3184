//! Concierge's own OpenAI-compatible chat API (`POST /v1/chat/completions`): the request
//! body the official OpenAI clients send, validated and mapped onto a turn, and the
//! non-streamed `chat.completion` answer. (The streamed answer is
//! [`OpenAiChunkEncoder`](crate::stream::openai_out::OpenAiChunkEncoder).)
//!
//! Each site has one assistant, exposed as one model whose id is [`assistant_id`].
//!
//! How a request becomes a turn ([`ChatCompletionBody::validate`]):
//! - without `chat_id` the turn is **stateless**: the `user` and `assistant` messages are
//!   the history and the last one, the user's, is answered; nothing is stored;
//! - with `chat_id` (an extra body field) the turn continues that **stored** conversation
//!   and only the last `user` message is sent to it (the conversation remembers the rest);
//!   `chat_id: "new"` opens a new stored conversation first;
//! - `system` and `developer` messages are dropped: the site's persona and rules decide how
//!   its assistant answers, not the caller;
//! - content is a string or an array of `text` parts (joined); other parts (images, audio,
//!   files), `tool` messages and assistant messages with no text are refused, since the
//!   assistant runs its own tools;
//! - sampling fields (`temperature`, `max_tokens`, `tools`, …) are accepted and ignored: the
//!   site's settings apply.
//!
//! ```
//! use concierge_core::openai_api::{ChatCompletionBody, ChatTarget};
//!
//! let body: ChatCompletionBody = serde_json::from_str(r#"{"model":"concierge-s1",
//!     "messages":[{"role":"system","content":"be brief"},{"role":"user","content":"Hi"}]}"#)?;
//! let request = body.validate().expect("valid");
//! assert!(!request.stream);
//! assert!(matches!(request.target, ChatTarget::Stateless(ref m) if m.len() == 1));
//! # Ok::<(), serde_json::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::Deserialize;

use crate::chat::Role;
use crate::turn::valid_idempotency_key;

mod completion;

pub use completion::{ChatCompletion, CompletionChoice, CompletionMessage, CompletionUsage};

/// The `chat_id` that opens a new stored conversation.
pub const NEW_CHAT: &str = "new";

/// The id of a site's assistant, as `/v1/models` lists it and `model` names it.
pub fn assistant_id(site_id: &str) -> String {
    format!("concierge-{site_id}")
}

/// A `POST /v1/chat/completions` body as clients send it (unknown fields are ignored).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ChatCompletionBody {
    /// The assistant's id ([`assistant_id`]).
    #[serde(default)]
    pub model: Option<String>,
    /// The messages, oldest first.
    #[serde(default)]
    pub messages: Option<Vec<BodyMessage>>,
    /// Stream the answer as `chat.completion.chunk`s.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default)]
    pub stream_options: Option<BodyStreamOptions>,
    /// The stored conversation to continue (Concierge's extension; [`NEW_CHAT`] opens one).
    #[serde(default)]
    pub chat_id: Option<String>,
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct BodyStreamOptions {
    /// Send a usage chunk before `[DONE]`.
    #[serde(default)]
    pub include_usage: Option<bool>,
}

/// One message of the body.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct BodyMessage {
    /// `system`, `developer`, `user`, `assistant` (or `tool`, refused).
    #[serde(default)]
    pub role: Option<String>,
    /// A string, an array of content parts, or `null`.
    #[serde(default)]
    pub content: Option<BodyContent>,
}

/// A message's content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum BodyContent {
    /// Plain text.
    Text(String),
    /// Content parts.
    Parts(Vec<BodyPart>),
}

/// One content part.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct BodyPart {
    /// `text` is supported; any other type is refused.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The text of a `text` part.
    #[serde(default)]
    pub text: Option<String>,
}

/// A validated request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The model the caller named (to compare with the site's [`assistant_id`]).
    pub model: String,
    /// Whether to stream.
    pub stream: bool,
    /// Whether a streamed answer ends with a usage chunk.
    pub include_usage: bool,
    /// Which turn to run.
    pub target: ChatTarget,
}

/// The turn a request asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatTarget {
    /// No `chat_id`: the caller's history, the user's message last.
    Stateless(Vec<(Role, String)>),
    /// Continue stored conversation `chat_id` with the user's `text`.
    Continue {
        /// The conversation.
        chat_id: String,
        /// The last user message.
        text: String,
    },
    /// `chat_id: "new"`: open a stored conversation, then answer `text` in it.
    New {
        /// The last user message.
        text: String,
    },
}

/// Why a request body was refused (HTTP 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestError {
    /// `model` is missing or empty.
    MissingModel,
    /// `messages` is missing or holds no user or assistant message.
    NoMessages,
    /// Message `index` has a role other than `system`, `developer`, `user`, `assistant`.
    Role {
        /// Its position in `messages`.
        index: usize,
    },
    /// Message `index` has content other than text.
    Content {
        /// Its position in `messages`.
        index: usize,
    },
    /// The last user or assistant message is not the user's.
    LastNotUser,
    /// `chat_id` is not 1 to 128 visible ASCII characters.
    ChatId,
}

impl RequestError {
    /// The body field at fault, as OpenAI's `error.param` names it.
    pub fn param(self) -> &'static str {
        match self {
            Self::MissingModel => "model",
            Self::ChatId => "chat_id",
            Self::NoMessages | Self::Role { .. } | Self::Content { .. } | Self::LastNotUser => {
                "messages"
            }
        }
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingModel => f.write_str("`model` is required: the assistant's id."),
            Self::NoMessages => f.write_str("`messages` must hold at least one user message."),
            Self::Role { index } => write!(
                f,
                "messages[{index}]: the role must be system, developer, user or assistant \
                 (this assistant runs its own tools)."
            ),
            Self::Content { index } => write!(
                f,
                "messages[{index}]: the content must be a string or an array of text parts."
            ),
            Self::LastNotUser => f.write_str("The last message must be the user's."),
            Self::ChatId => f.write_str("`chat_id` must be 1 to 128 visible ASCII characters."),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RequestError {}

impl ChatCompletionBody {
    /// Validates the body and maps it onto a turn (see the module docs).
    pub fn validate(self) -> Result<ChatRequest, RequestError> {
        let model = self
            .model
            .filter(|m| !m.trim().is_empty())
            .ok_or(RequestError::MissingModel)?;
        let mut history = Vec::new();
        for (index, message) in self.messages.unwrap_or_default().into_iter().enumerate() {
            let role = match message.role.as_deref() {
                Some("system" | "developer") => continue,
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => return Err(RequestError::Role { index }),
            };
            let text = match message.content {
                Some(BodyContent::Text(text)) => text,
                Some(BodyContent::Parts(parts)) => {
                    let mut text = String::new();
                    for part in parts {
                        match (part.kind.as_deref(), part.text) {
                            (Some("text"), Some(piece)) => text.push_str(&piece),
                            _ => return Err(RequestError::Content { index }),
                        }
                    }
                    text
                }
                None => return Err(RequestError::Content { index }),
            };
            history.push((role, text));
        }
        match history.last() {
            None => return Err(RequestError::NoMessages),
            Some((Role::User, _)) => {}
            Some(_) => return Err(RequestError::LastNotUser),
        }
        let target = match self.chat_id {
            None => ChatTarget::Stateless(history),
            Some(chat_id) => {
                let (_, text) = history.pop().expect("a user message is last");
                if chat_id == NEW_CHAT {
                    ChatTarget::New { text }
                } else if valid_idempotency_key(&chat_id) {
                    ChatTarget::Continue { chat_id, text }
                } else {
                    return Err(RequestError::ChatId);
                }
            }
        };
        let stream = self.stream.unwrap_or(false);
        Ok(ChatRequest {
            model,
            stream,
            include_usage: stream
                && self
                    .stream_options
                    .and_then(|o| o.include_usage)
                    .unwrap_or(false),
            target,
        })
    }
}

#[cfg(test)]
mod tests;
