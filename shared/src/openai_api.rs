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

use serde::{Deserialize, Serialize};

use crate::chat::{Role, Usage};
use crate::engine::TurnOutcome;
use crate::turn::valid_idempotency_key;

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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn body(json: &str) -> ChatCompletionBody {
        serde_json::from_str(json).expect("body JSON")
    }

    #[test]
    fn stateless_history_drops_system_messages_and_joins_text_parts() {
        let request = body(
            r#"{"model":"m","stream":true,"stream_options":{"include_usage":true},
            "temperature":0.2,"messages":[{"role":"developer","content":"x"},
            {"role":"user","content":"a"},{"role":"assistant","content":"b"},
            {"role":"user","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]}]}"#,
        )
        .validate()
        .expect("valid");
        assert!(request.stream && request.include_usage);
        assert_eq!(
            request.target,
            ChatTarget::Stateless(vec![
                (Role::User, "a".to_string()),
                (Role::Assistant, "b".to_string()),
                (Role::User, "cd".to_string()),
            ])
        );
    }

    #[test]
    fn chat_id_continues_with_the_last_user_message_only() {
        let request = body(
            r#"{"model":"m","chat_id":"c1","messages":[{"role":"user","content":"old"},
            {"role":"user","content":"new one"}]}"#,
        )
        .validate()
        .expect("valid");
        assert_eq!(
            request.target,
            ChatTarget::Continue {
                chat_id: "c1".into(),
                text: "new one".into()
            }
        );
        let new =
            body(r#"{"model":"m","chat_id":"new","messages":[{"role":"user","content":"hi"}]}"#)
                .validate()
                .expect("valid");
        assert_eq!(new.target, ChatTarget::New { text: "hi".into() });
        assert!(!new.include_usage);
    }

    #[test]
    fn malformed_requests_are_refused_with_the_field_at_fault() {
        let cases = [
            (
                r#"{"messages":[{"role":"user","content":"a"}]}"#,
                RequestError::MissingModel,
            ),
            (r#"{"model":"m"}"#, RequestError::NoMessages),
            (r#"{"model":"m","messages":[]}"#, RequestError::NoMessages),
            (
                r#"{"model":"m","messages":[{"role":"system","content":"a"}]}"#,
                RequestError::NoMessages,
            ),
            (
                r#"{"model":"m","messages":[{"role":"tool","content":"a"}]}"#,
                RequestError::Role { index: 0 },
            ),
            (
                r#"{"model":"m","messages":[{"content":"a"}]}"#,
                RequestError::Role { index: 0 },
            ),
            (
                r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}"#,
                RequestError::Content { index: 0 },
            ),
            (
                r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null}]}"#,
                RequestError::Content { index: 1 },
            ),
            (
                r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}"#,
                RequestError::LastNotUser,
            ),
            (
                r#"{"model":"m","chat_id":"a b","messages":[{"role":"user","content":"a"}]}"#,
                RequestError::ChatId,
            ),
        ];
        for (json, expected) in cases {
            assert_eq!(body(json).validate(), Err(expected), "{json}");
        }
        assert_eq!(RequestError::Role { index: 2 }.param(), "messages");
        assert!(
            RequestError::Content { index: 3 }
                .to_string()
                .starts_with("messages[3]")
        );
    }

    #[test]
    fn a_completion_carries_the_reply_and_usage_or_zeros() {
        use crate::conversation::{Language, MessageKind, StoredMessage};
        let reply = StoredMessage {
            id: "r".into(),
            seq: 2,
            role: Role::Assistant,
            kind: MessageKind::Answer,
            content: "Xin chào".into(),
            metadata: Default::default(),
            created_at: 0,
            tool_steps: Vec::new(),
        };
        let mut outcome = TurnOutcome {
            user_message_id: "u".into(),
            reply,
            intent: None,
            confidence: None,
            language: Language::Vi,
            route: Vec::new(),
            usage: None,
        };
        let json =
            serde_json::to_value(ChatCompletion::of(&outcome, "c", "m", 7, None)).expect("JSON");
        assert_eq!(json["object"], "chat.completion");
        assert_eq!(json["choices"][0]["message"]["content"], "Xin chào");
        assert_eq!(json["choices"][0]["finish_reason"], "stop");
        assert_eq!(json["usage"]["total_tokens"], 0);
        assert!(json.get("chat_id").is_none());
        outcome.usage = Some(Usage {
            prompt_tokens: 3,
            completion_tokens: 4,
        });
        let json = serde_json::to_value(ChatCompletion::of(&outcome, "c", "m", 7, Some("k")))
            .expect("JSON");
        assert_eq!(json["usage"]["total_tokens"], 7);
        assert_eq!(json["chat_id"], "k");
    }
}
