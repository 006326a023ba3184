//! Wire types of OpenAI's streamed `chat.completion.chunk` objects.
//!
//! They mirror the provider's JSON field for field, borrow strings from the input where
//! the JSON has no escapes, tolerate unknown fields and `null`s, and skip `None` when
//! serialised (Concierge's own OpenAI-compatible output reuses them).

use alloc::borrow::Cow;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::stream::wire::opt_cow;

/// One `data:` payload of a streamed chat completion.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatCompletionChunk<'a> {
    /// Completion id, the same in every chunk.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<Cow<'a, str>>,
    /// Always `chat.completion.chunk`.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub object: Option<Cow<'a, str>>,
    /// Unix time (seconds) the completion was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<u64>,
    /// Model that produced the chunk.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<Cow<'a, str>>,
    /// Backend configuration fingerprint.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub system_fingerprint: Option<Cow<'a, str>>,
    /// The choices' deltas; empty in the final usage chunk (`null` reads as empty).
    #[serde(
        default,
        borrow,
        deserialize_with = "crate::stream::wire::null_as_default"
    )]
    pub choices: Vec<ChunkChoice<'a>>,
    /// Token counts: only in the usage chunk (`stream_options.include_usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<CompletionUsage>,
    /// An error reported inside the stream instead of a chunk.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError<'a>>,
}

/// One choice of a chunk.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChunkChoice<'a> {
    /// Which choice this is (always 0 unless `n` > 1 was requested).
    #[serde(default)]
    pub index: u32,
    /// What this chunk adds to the choice.
    #[serde(
        default,
        borrow,
        deserialize_with = "crate::stream::wire::null_as_default"
    )]
    pub delta: ChunkDelta<'a>,
    /// Set in the choice's last chunk: `stop`, `length`, `tool_calls`, `content_filter`, …
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub finish_reason: Option<Cow<'a, str>>,
}

/// The incremental part of a choice.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChunkDelta<'a> {
    /// `assistant`, in the first chunk only.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub role: Option<Cow<'a, str>>,
    /// A piece of the answer text.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub content: Option<Cow<'a, str>>,
    /// A piece of a refusal message.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub refusal: Option<Cow<'a, str>>,
    /// Pieces of tool calls, identified by `index`.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallChunk<'a>>>,
}

/// A piece of one tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCallChunk<'a> {
    /// Which call of the message this piece belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Call id, in the call's first piece.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<Cow<'a, str>>,
    /// Always `function`, in the call's first piece.
    #[serde(
        rename = "type",
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Cow<'a, str>>,
    /// Name and argument text pieces.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionChunk<'a>>,
}

/// Pieces of a function call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FunctionChunk<'a> {
    /// Function name, in the call's first piece.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<Cow<'a, str>>,
    /// A fragment of the JSON argument text.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub arguments: Option<Cow<'a, str>>,
}

/// Token counts of a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompletionUsage {
    /// Tokens in the prompt.
    #[serde(default)]
    pub prompt_tokens: u32,
    /// Tokens generated.
    #[serde(default)]
    pub completion_tokens: u32,
    /// Sum of both.
    #[serde(default)]
    pub total_tokens: u32,
}

/// An error object, as sent in-stream (`{"error": {...}}`) or as an error response body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ApiError<'a> {
    /// Human-readable message.
    #[serde(default, borrow, deserialize_with = "crate::stream::wire::cow_or_null")]
    pub message: Cow<'a, str>,
    /// Error type, e.g. `server_error`, `invalid_request_error`.
    #[serde(
        rename = "type",
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Cow<'a, str>>,
    /// The request parameter at fault, if any.
    #[serde(
        default,
        borrow,
        deserialize_with = "opt_cow",
        skip_serializing_if = "Option::is_none"
    )]
    pub param: Option<Cow<'a, str>>,
    /// Error code: a string for OpenAI, a number (the HTTP status) for llama.cpp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<serde_json::Value>,
}
