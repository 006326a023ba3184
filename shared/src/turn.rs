//! A turn's input and its output events.
//!
//! A turn emits, in order: [`TurnEvent::Started`] once the visitor's message is stored
//! (with the id the reply will be stored under),
//! zero or more [`TurnEvent::Chunk`]s as the answer streams, then exactly one terminal
//! event — [`TurnEvent::Completed`] or [`TurnEvent::Failed`]. A turn that fails before the
//! visitor's message is stored emits only `Failed`. The Worker encodes these as SSE while
//! the turn runs (a chunk is the seed's `data: {"chunk": "..."}`; the events map one to one
//! onto the native stream's `started` / chunk / `completed` / `failed`).
//!
//! Failure semantics:
//! - the visitor's message is stored before anything can fail after it, and stays stored;
//! - if the chat model fails mid-stream (transport error or in-band error event), the text
//!   streamed so far is stored under the announced reply id with metadata
//!   `{"incomplete": true, "error": <code>}`, is not queued for embedding, and is left out of
//!   later prompts; if no text was streamed, nothing is stored for the reply. A background
//!   attempt keeps no partial text (nobody saw it; the next attempt answers afresh);
//! - a fixed sentence (clarify, warranty) is streamed, then stored; if storing fails the
//!   turn fails;
//! - retrieval failures degrade to "no passages" (logged as a warning), never a failed turn;
//! - a turn that finally fails marks the visitor's message (metadata
//!   [`ANSWER_FAILED`](crate::conversation::ANSWER_FAILED) = the error's code), so history
//!   shows it; a successful retry removes the mark.
//!
//! Concurrency and retries:
//! - a reply takes its position in the conversation when it is stored, so turns running at
//!   once in one conversation each store their reply under the id their `Started` announced;
//! - a message sent with an idempotency key is stored once per conversation. Sending it
//!   again with the same key replays the stored reply (the same ids, no model call) when
//!   the turn was answered; otherwise it answers the stored message again under a new
//!   reply id, and the earlier attempt, if still running, can no longer store its reply.
//!   The same key with a different text is refused.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::chat::Usage;
use crate::conversation::MessageKind;
use crate::payload::Payload;

/// What a visitor sent, addressed to one conversation of one site.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnInput {
    /// The site (from the authenticated widget or API key).
    pub site_id: String,
    /// The conversation.
    pub conversation_id: String,
    /// The visitor's message.
    pub text: String,
    /// The client's idempotency key for this message (the HTTP `Idempotency-Key` header):
    /// a message is stored once per key and conversation (see the module docs).
    pub idempotency_key: Option<String>,
}

/// The longest idempotency key, in characters.
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 128;

/// Whether `key` is a valid idempotency key: 1 to [`MAX_IDEMPOTENCY_KEY_CHARS`] visible
/// ASCII characters (no spaces or control characters).
pub fn valid_idempotency_key(key: &str) -> bool {
    (1..=MAX_IDEMPOTENCY_KEY_CHARS).contains(&key.len())
        && key.bytes().all(|b| b.is_ascii_graphic())
}

/// A stored visitor's message whose answer is produced in the background (`Prefer:
/// respond-async`): what the Worker puts on its turn queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnJob {
    /// The site.
    pub site_id: String,
    /// The conversation.
    pub conversation_id: String,
    /// The stored visitor's message.
    pub user_message_id: String,
    /// The id its reply is to be stored under (announced to the client).
    pub message_id: String,
    /// Whether the site's draft answers it, not its live configuration (a request that
    /// selected the draft: the merchant's, never a visitor's).
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub draft: bool,
}

/// What kind of reply a template's reply is, for clients ([`Assistant::reply_envelope`](crate::engine::Assistant::reply_envelope)).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplyEnvelope {
    /// The reply's kind on the wire (the `completed` event's `kind`), e.g. `data`.
    pub kind: &'static str,
    /// The template's description of the reply, e.g. seed 002's `{kind, timestamp,
    /// payload?}` (its `ChatResponse` without the message, which the chunks carry).
    pub data: serde_json::Value,
}

/// One output event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TurnEvent {
    /// The visitor's message is stored; the turn is under way.
    Started {
        /// The conversation.
        conversation_id: String,
        /// The stored visitor message.
        user_message_id: String,
        /// The id the assistant's reply will be stored under.
        message_id: String,
    },
    /// A piece of the assistant's reply.
    Chunk {
        /// The text.
        text: String,
    },
    /// A tool call started: the model asked for it and its arguments are complete.
    ToolStart {
        /// The call's id (the provider's, or minted when the provider gives none).
        call_id: String,
        /// The tool's name.
        name: String,
        /// The call's arguments.
        input: serde_json::Value,
    },
    /// A tool call ended.
    ToolEnd {
        /// The call's id, as in [`TurnEvent::ToolStart`].
        call_id: String,
        /// The tool's name.
        name: String,
        /// Whether the tool succeeded.
        ok: bool,
        /// What the tool returned, or its error as the model sees it.
        output: serde_json::Value,
    },
    /// Progress of a long-running plan or stage, reported while work goes on.
    Progress {
        /// What is happening, for the visitor.
        message: String,
        /// Overall progress, 0 to 100, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        percentage: Option<f32>,
        /// Machine-readable stage, e.g. `plan_ready`, `executing_task`.
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<String>,
    },
    /// Structured content for the client to render, sent before the terminal event.
    Payload {
        /// What it is: `list`, `table`, `chart`, `sources`, `evidence`, …
        kind: String,
        /// The content, in the shape its kind defines.
        data: serde_json::Value,
    },
    /// The reply is complete and stored.
    Completed {
        /// The stored assistant message.
        message_id: String,
        /// What it is (answer, clarify, warranty…).
        kind: MessageKind,
        /// The classified intent, when the template classifies.
        #[serde(skip_serializing_if = "Option::is_none")]
        intent: Option<&'static str>,
        /// The intent's confidence.
        #[serde(skip_serializing_if = "Option::is_none")]
        confidence: Option<f32>,
        /// Tokens the model used, when it was called and reported them.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// What kind of reply it is for clients, where the template says
        /// ([`Assistant::reply_envelope`](crate::engine::Assistant::reply_envelope)).
        #[serde(skip_serializing_if = "Option::is_none")]
        reply: Option<ReplyEnvelope>,
    },
    /// The turn failed; nothing more follows.
    Failed {
        /// A stable error code ([`Error::code`](crate::error::Error::code)).
        code: &'static str,
        /// A message safe to show the visitor.
        message: &'static str,
    },
}

impl TurnEvent {
    /// The `payload` event that sends `payload`.
    pub fn payload(payload: &Payload) -> Self {
        Self::Payload {
            kind: payload.kind().into(),
            data: payload.data(),
        }
    }

    /// Whether this event ends the turn.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Completed { .. } | Self::Failed { .. })
    }
}

/// A turn that has started: the visitor's message is stored (a stateless turn: accepted)
/// and the reply's id is fixed. The engine hands it to [`TurnSink::started`] right before
/// the [`TurnEvent::Started`] it announces; a turn that fails before this point never
/// started (its run function returns the error, and nothing was stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// The conversation.
    pub conversation_id: String,
    /// The stored visitor message.
    pub user_message_id: String,
    /// The id the assistant's reply will be stored under.
    pub reply_id: String,
}

impl Started {
    /// The `started` event announcing it.
    pub fn event(&self) -> TurnEvent {
        TurnEvent::Started {
            conversation_id: self.conversation_id.clone(),
            user_message_id: self.user_message_id.clone(),
            message_id: self.reply_id.clone(),
        }
    }

    /// Tells `sink` the turn started, then emits its `started` event.
    pub fn announce(&self, sink: &mut (impl TurnSink + ?Sized)) {
        sink.started(self);
        sink.emit(self.event());
    }
}

/// Receives a turn's events as they happen.
pub trait TurnSink {
    /// One event.
    fn emit(&mut self, event: TurnEvent);

    /// The turn has started ([`Started`]); its `started` event comes next. Called at most
    /// once per turn; never for a turn that fails before it started. Default: nothing.
    fn started(&mut self, _started: &Started) {}
}

impl<F: FnMut(TurnEvent)> TurnSink for F {
    fn emit(&mut self, event: TurnEvent) {
        self(event);
    }
}

impl TurnSink for Vec<TurnEvent> {
    fn emit(&mut self, event: TurnEvent) {
        self.push(event);
    }
}
