//! The crate's error type and the errors boundary implementations report.
//!
//! Boundary traits return small, data-carrying errors ([`ServiceError`] for stores,
//! indexes and records, [`ChatModelError`] for the chat model). The engine wraps them in
//! [`Error`], which also says *which* boundary failed, and maps every error onto a stable
//! public [`Error::code`] and a visitor-safe [`Error::public_message`] for the turn's
//! `failed` event. Internal details stay in the error for logs and never reach visitors.

use alloc::string::String;
use core::fmt;

use crate::graph::GraphError;

/// What kind of failure a storage-like boundary (store, index, embedder, records) hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceErrorKind {
    /// The backend could not be reached or timed out.
    Unavailable,
    /// A write conflicted with existing data (e.g. a message sequence number already taken).
    Conflict,
    /// The backend rejected the request as malformed.
    Invalid,
    /// Anything else.
    Other,
}

/// A failure reported by a store, vector index, embedder or record lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// What went wrong, coarsely.
    pub kind: ServiceErrorKind,
    /// Detail for logs (never shown to visitors).
    pub detail: String,
}

impl ServiceError {
    /// An error of `kind` with a detail for logs.
    pub fn new(kind: ServiceErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

/// What kind of failure the chat model hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatModelErrorKind {
    /// The endpoint could not be reached, or the connection broke mid-stream.
    Unreachable,
    /// The endpoint answered with this non-success HTTP status.
    Status(u16),
    /// The provider reported an error inside the stream.
    Upstream,
    /// The stream could not be decoded.
    Decode,
}

/// A failure of the chat model boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatModelError {
    /// What went wrong, coarsely.
    pub kind: ChatModelErrorKind,
    /// Detail for logs (never shown to visitors).
    pub detail: String,
}

impl ChatModelError {
    /// An error of `kind` with a detail for logs.
    pub fn new(kind: ChatModelErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for ChatModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

/// Why a visitor's message was refused before anything was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidMessage {
    /// Empty or whitespace only.
    Empty,
    /// Longer than the template allows.
    TooLong {
        /// The limit, in characters.
        max_chars: usize,
    },
    /// Its idempotency key is not 1 to
    /// [`MAX_IDEMPOTENCY_KEY_CHARS`](crate::turn::MAX_IDEMPOTENCY_KEY_CHARS) visible ASCII
    /// characters.
    IdempotencyKey,
    /// A stateless turn's history does not end with the visitor's message, or holds a
    /// message that is neither the visitor's nor the assistant's.
    History,
}

/// What an [`Error`] means to the caller, by kind: the Worker maps each class to one HTTP
/// status ([`Error::class`]), never by matching codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The caller's input was refused (HTTP 400).
    Invalid,
    /// The conversation does not exist for this caller (HTTP 404).
    NotFound,
    /// A concurrent write won (HTTP 409).
    Conflict,
    /// Well-formed, but contradicts what was stored (HTTP 422).
    Unprocessable,
    /// The chat model failed or answered nothing (HTTP 502).
    Upstream,
    /// A backend (store, index, records) or the engine failed (HTTP 503).
    Unavailable,
    /// The caller is over its rate limit (HTTP 429).
    RateLimited,
}

/// Everything that can make a turn or a conversation creation fail.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The visitor's message was refused; nothing was stored.
    InvalidMessage(InvalidMessage),
    /// No such conversation for this site.
    ConversationNotFound,
    /// The idempotency key was already used in this conversation for a different message;
    /// nothing was stored.
    IdempotencyKeyReused,
    /// A regenerate named an answer that is not the conversation's last turn's (or the
    /// conversation has no visitor's message): nothing was changed.
    NotLastTurn,
    /// A regenerate found the conversation's last turn still being answered: nothing was
    /// changed.
    TurnInProgress,
    /// A person holds the conversation (handoff): the assistant does not answer it again
    /// (a regenerate); nothing was changed.
    HeldByPerson,
    /// A regenerate found the conversation's last answer to be a fixed text that is not
    /// the assistant's to answer again (a handoff notice, a person's reply): nothing was
    /// changed.
    FixedAnswer,
    /// The caller's admission check (its rate limit) refused the turn; nothing was stored.
    RateLimited,
    /// The conversation store failed.
    Store(ServiceError),
    /// The embedder failed.
    Embedder(ServiceError),
    /// The vector index failed.
    VectorIndex(ServiceError),
    /// A record lookup (e.g. warranty records) failed.
    Records(ServiceError),
    /// Web search failed (the provider could not be reached or refused).
    Search(ServiceError),
    /// The chat model failed (before or during streaming).
    ChatModel(ChatModelError),
    /// The chat model finished without producing any text.
    EmptyAnswer,
    /// The agent graph was mis-wired or looped too long.
    Graph(GraphError),
}

impl Error {
    /// What this error means to the caller.
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::InvalidMessage(_) => ErrorClass::Invalid,
            Self::ConversationNotFound => ErrorClass::NotFound,
            Self::IdempotencyKeyReused => ErrorClass::Unprocessable,
            Self::NotLastTurn | Self::TurnInProgress | Self::HeldByPerson | Self::FixedAnswer => {
                ErrorClass::Conflict
            }
            Self::RateLimited => ErrorClass::RateLimited,
            Self::Store(ServiceError {
                kind: ServiceErrorKind::Conflict,
                ..
            }) => ErrorClass::Conflict,
            Self::ChatModel(_) | Self::EmptyAnswer => ErrorClass::Upstream,
            Self::Store(_)
            | Self::Embedder(_)
            | Self::VectorIndex(_)
            | Self::Records(_)
            | Self::Search(_)
            | Self::Graph(_) => ErrorClass::Unavailable,
        }
    }

    /// A stable, public error code for the turn's `failed` event and for logs.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidMessage(InvalidMessage::Empty) => "empty_message",
            Self::InvalidMessage(InvalidMessage::TooLong { .. }) => "message_too_long",
            Self::InvalidMessage(InvalidMessage::IdempotencyKey) => "invalid_idempotency_key",
            Self::InvalidMessage(InvalidMessage::History) => "invalid_history",
            Self::ConversationNotFound => "conversation_not_found",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::NotLastTurn => "not_last_turn",
            Self::TurnInProgress => "turn_in_progress",
            Self::HeldByPerson => "held_by_person",
            Self::FixedAnswer => "fixed_answer",
            Self::RateLimited => "rate_limited",
            Self::Store(ServiceError {
                kind: ServiceErrorKind::Conflict,
                ..
            }) => "conflict",
            Self::Store(_) => "store_unavailable",
            Self::Embedder(_) | Self::VectorIndex(_) => "retrieval_unavailable",
            Self::Records(_) => "records_unavailable",
            Self::Search(_) => "search_unavailable",
            Self::ChatModel(_) => "model_failed",
            Self::EmptyAnswer => "empty_answer",
            Self::Graph(_) => "internal",
        }
    }

    /// A short message that is safe to show a visitor (no internal details).
    pub fn public_message(&self) -> &'static str {
        match self {
            Self::InvalidMessage(InvalidMessage::Empty) => "The message is empty.",
            Self::InvalidMessage(InvalidMessage::TooLong { .. }) => "The message is too long.",
            Self::InvalidMessage(InvalidMessage::IdempotencyKey) => {
                "The idempotency key must be 1 to 128 visible ASCII characters."
            }
            Self::InvalidMessage(InvalidMessage::History) => {
                "The messages must be the visitor's and the assistant's, ending with the visitor's."
            }
            Self::ConversationNotFound => "No such conversation.",
            Self::IdempotencyKeyReused => {
                "This idempotency key was already used for a different message."
            }
            Self::NotLastTurn => "Only the conversation's last answer can be regenerated.",
            Self::TurnInProgress => "The last message is still being answered.",
            Self::HeldByPerson => "A person is answering this conversation.",
            Self::FixedAnswer => {
                "The last message is a notice or a person's reply, not an answer of the assistant's: it cannot be regenerated."
            }
            Self::RateLimited => "Too many requests; try again shortly.",
            Self::ChatModel(_) | Self::EmptyAnswer => {
                "The assistant could not answer right now. Please try again."
            }
            Self::Store(_)
            | Self::Embedder(_)
            | Self::VectorIndex(_)
            | Self::Records(_)
            | Self::Search(_)
            | Self::Graph(_) => "Something went wrong. Please try again.",
        }
    }

    /// Whether trying the turn again later may succeed: the chat model, the store or a
    /// record lookup failed, or the model answered nothing. A refused message, a missing
    /// conversation, a superseded attempt (a store conflict) or a mis-wired graph will not
    /// get better by retrying.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Store(error) => error.kind != ServiceErrorKind::Conflict,
            Self::ChatModel(_)
            | Self::EmptyAnswer
            | Self::RateLimited
            | Self::Records(_)
            | Self::Search(_)
            | Self::Embedder(_)
            | Self::VectorIndex(_) => true,
            Self::InvalidMessage(_)
            | Self::ConversationNotFound
            | Self::IdempotencyKeyReused
            | Self::NotLastTurn
            | Self::TurnInProgress
            | Self::HeldByPerson
            | Self::FixedAnswer
            | Self::Graph(_) => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidMessage(reason) => write!(f, "invalid message: {reason:?}"),
            Self::ConversationNotFound => f.write_str("conversation not found"),
            Self::IdempotencyKeyReused => f.write_str("idempotency key reused"),
            Self::NotLastTurn => f.write_str("not the last turn"),
            Self::TurnInProgress => f.write_str("turn in progress"),
            Self::HeldByPerson => f.write_str("held by a person"),
            Self::FixedAnswer => f.write_str("the last answer is fixed"),
            Self::RateLimited => f.write_str("rate limited"),
            Self::Store(e) => write!(f, "store: {e}"),
            Self::Embedder(e) => write!(f, "embedder: {e}"),
            Self::VectorIndex(e) => write!(f, "vector index: {e}"),
            Self::Records(e) => write!(f, "records: {e}"),
            Self::Search(e) => write!(f, "web search: {e}"),
            Self::ChatModel(e) => write!(f, "chat model: {e}"),
            Self::EmptyAnswer => f.write_str("chat model produced no text"),
            Self::Graph(e) => write!(f, "graph: {e}"),
        }
    }
}

impl From<GraphError> for Error {
    fn from(error: GraphError) -> Self {
        Self::Graph(error)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Store(e)
            | Self::Embedder(e)
            | Self::VectorIndex(e)
            | Self::Records(e)
            | Self::Search(e) => Some(e),
            Self::ChatModel(e) => Some(e),
            Self::Graph(e) => Some(e),
            Self::InvalidMessage(_)
            | Self::ConversationNotFound
            | Self::IdempotencyKeyReused
            | Self::NotLastTurn
            | Self::TurnInProgress
            | Self::HeldByPerson
            | Self::FixedAnswer
            | Self::RateLimited
            | Self::EmptyAnswer => None,
        }
    }
}
#[cfg(feature = "std")]
impl std::error::Error for ServiceError {}
#[cfg(feature = "std")]
impl std::error::Error for ChatModelError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_variants() {
        let service = |kind| ServiceError::new(kind, "detail");
        let cases = [
            (
                Error::InvalidMessage(InvalidMessage::Empty),
                ErrorClass::Invalid,
            ),
            (
                Error::InvalidMessage(InvalidMessage::IdempotencyKey),
                ErrorClass::Invalid,
            ),
            (Error::ConversationNotFound, ErrorClass::NotFound),
            (Error::IdempotencyKeyReused, ErrorClass::Unprocessable),
            (
                Error::Store(service(ServiceErrorKind::Conflict)),
                ErrorClass::Conflict,
            ),
            (
                Error::Store(service(ServiceErrorKind::Unavailable)),
                ErrorClass::Unavailable,
            ),
            (
                Error::VectorIndex(service(ServiceErrorKind::Other)),
                ErrorClass::Unavailable,
            ),
            (
                Error::Records(service(ServiceErrorKind::Other)),
                ErrorClass::Unavailable,
            ),
            (Error::EmptyAnswer, ErrorClass::Upstream),
            (
                Error::ChatModel(ChatModelError::new(ChatModelErrorKind::Status(500), "x")),
                ErrorClass::Upstream,
            ),
        ];
        for (error, class) in cases {
            assert_eq!(error.class(), class, "{error}");
        }
    }

    #[cfg(feature = "std")]
    #[test]
    fn boundary_failures_are_the_source() {
        use std::error::Error as _;
        let error = Error::Store(ServiceError::new(ServiceErrorKind::Unavailable, "d1 down"));
        let source = error.source().map(alloc::string::ToString::to_string);
        assert_eq!(source.as_deref(), Some("Unavailable: d1 down"));
        assert!(Error::ConversationNotFound.source().is_none());
    }
}
