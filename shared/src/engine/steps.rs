//! The steps every way through a turn shares ([`lifecycle`](super::lifecycle),
//! [`at_once`](super::at_once), [`stateless`](super::stateless), [`respond`](super::respond)):
//! the template's answer with the language decided around it, the one terminal event, the
//! messages as they are built before they are stored, and the best-effort marks.

use alloc::string::String;
use alloc::vec::Vec;

use super::contract::{Answer, Assistant, Platform, Turn, TurnMode, TurnOutcome};
use super::gate::{Gate, Gated};
use crate::boundary::{ConversationStore, LogRecord, TurnStart};
use crate::chat::Role;
use crate::conversation::ToolStep;
use crate::conversation::{
    EmbedJob, EmbeddingStatus, MessageKind, Metadata, Scope, StoredMessage, embedding_policy,
};
use crate::error::{Error, InvalidMessage};
use crate::language;
use crate::turn::{TurnEvent, TurnSink};

/// A stored visitor's message awaiting its reply.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingTurn {
    /// The conversation, the history before the message, and the message.
    pub start: TurnStart,
    /// The id the reply is to be stored under.
    pub reply_id: String,
}

/// A refused message's id and answer, and its language (neither message is stored).
pub(super) fn refusal_reply<P: Platform>(
    platform: &P,
    refusal: super::contract::Refusal,
) -> (String, StoredMessage, crate::conversation::Language) {
    let now = platform.clock().now_ms();
    let reply = assistant_message(
        platform.ids().new_id(),
        MessageKind::Refusal,
        refusal.text,
        now,
    );
    (platform.ids().new_id(), reply, refusal.language)
}

/// Streams a refusal (after `Started`): its text, nothing stored.
pub(super) fn refusal_answered(
    user_message_id: String,
    reply: StoredMessage,
    language: crate::conversation::Language,
    sink: &mut dyn TurnSink,
) -> TurnOutcome {
    sink.emit(TurnEvent::Chunk {
        text: reply.content.clone(),
    });
    TurnOutcome {
        user_message_id,
        intent: None,
        confidence: None,
        language,
        route: alloc::vec!["refuse"],
        usage: None,
        reply,
    }
}

/// The template's answer for a received visitor's message whose message is already stored,
/// with the language decided and remembered around it (through an open [`Gate`]: see
/// [`answer_gated`]).
pub(super) async fn answer<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    pending: PendingTurn,
    mode: TurnMode,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let gate = Gate::open();
    answer_gated(&Gated::new(platform, &gate), assistant, pending, mode, sink).await
}

/// [`answer`] over a [`Gated`] platform: the only platform type a template's answer runs
/// on, so the Worker holds one copy of each template's answer (the at-once turn gates its
/// store; every other path passes an open gate).
pub(super) async fn answer_gated<P: Platform, A: Assistant>(
    platform: &Gated<'_, P>,
    assistant: &A,
    pending: PendingTurn,
    mode: TurnMode,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let PendingTurn {
        start:
            TurnStart {
                conversation,
                mut history,
                message,
                retrievable,
            },
        reply_id,
    } = pending;
    // The language: detected from the visitor's first message, or explicitly asked for.
    let first_user_message = !history.iter().any(|m| m.role == Role::User);
    let language =
        language::for_message(&message.content, conversation.language, first_user_message);
    let stored_language = conversation.language;
    let (user_message_id, message_seq) = (message.id.clone(), message.seq);
    let (memory_due, reply_due) = memory_due(&history, &message, assistant.config().history_window);
    // Handoff notices are for the visitor, not the model (a person's replies stay).
    history.retain(|m| m.kind != MessageKind::Handoff);
    history.push(message);
    let mut turn = Turn {
        conversation,
        history,
        user_message_id: user_message_id.clone(),
        message_seq,
        language,
        reply_id,
        retrievable,
        sink,
        mode,
        payloads: Vec::new(),
        memory_due,
        reply_due,
    };
    let answered = assistant.answer(platform, &mut turn).await;
    // A changed language is remembered after the answer, off the time-to-first-token path
    // (and also when the answer failed: the visitor's message was stored). Best effort: the
    // answer is already streamed and stored, so a failure here is logged, not the turn's.
    if language != stored_language && mode != TurnMode::Stateless {
        let scope = turn.scope();
        if let Err(error) = platform.store().set_language(scope, language).await {
            platform.logger().log(&LogRecord::Warning {
                conversation_id: scope.conversation_id,
                code: "language_not_saved",
                detail: &error.detail,
            });
        }
    }
    let Answer {
        reply,
        intent,
        confidence,
        usage,
        route,
    } = answered?;
    Ok(TurnOutcome {
        user_message_id,
        reply,
        intent,
        confidence,
        language,
        route,
        usage,
    })
}

/// Emits the turn's one terminal event.
pub(super) fn finish<A: Assistant>(
    assistant: &A,
    result: Result<TurnOutcome, Error>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    match &result {
        Ok(outcome) => sink.emit(TurnEvent::Completed {
            message_id: outcome.reply.id.clone(),
            kind: outcome.reply.kind,
            intent: outcome.intent,
            confidence: outcome.confidence,
            usage: outcome.usage,
            reply: assistant.reply_envelope(&outcome.reply),
        }),
        Err(error) => sink.emit(TurnEvent::Failed {
            code: error.code(),
            message: error.public_message(),
        }),
    }
    result
}

/// The visitor's text, trimmed, if the template accepts it.
pub(super) fn valid_text<'t, A: Assistant>(assistant: &A, text: &'t str) -> Result<&'t str, Error> {
    let text = text.trim();
    let max_chars = assistant.config().max_message_chars;
    if text.is_empty() {
        Err(Error::InvalidMessage(InvalidMessage::Empty))
    } else if text.chars().count() > max_chars {
        Err(Error::InvalidMessage(InvalidMessage::TooLong { max_chars }))
    } else {
        Ok(text)
    }
}

/// Marks the visitor's message as unanswered (best effort: logged if it fails).
pub(super) async fn mark_failed<P: Platform>(
    platform: &P,
    scope: Scope<'_>,
    message_id: &str,
    reply_id: &str,
    error: &Error,
) {
    let marked = platform
        .store()
        .mark_answer_failed(scope, message_id, reply_id, error.code())
        .await;
    if let Err(error) = marked {
        platform.logger().log(&LogRecord::Warning {
            conversation_id: scope.conversation_id,
            code: "failure_not_marked",
            detail: &error.detail,
        });
    }
}

/// An assistant message not yet stored (`seq` 0 until the store places it).
pub(super) fn assistant_message(
    id: String,
    kind: MessageKind,
    content: String,
    created_at: u64,
) -> StoredMessage {
    StoredMessage {
        id,
        seq: 0,
        role: Role::Assistant,
        kind,
        content,
        metadata: Metadata::new(),
        created_at,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    }
}

/// A visitor's message not yet stored, and the id its reply is to be stored under.
pub(super) fn visitor_message<P: Platform>(platform: &P, text: &str) -> (StoredMessage, String) {
    let message = StoredMessage {
        role: Role::User,
        ..assistant_message(
            platform.ids().new_id(),
            MessageKind::Text,
            text.into(),
            platform.clock().now_ms(),
        )
    };
    (message, platform.ids().new_id())
}

/// Queues `message` for embedding when the embedding policy says so.
pub(super) fn queue_embedding<P: Platform>(
    platform: &P,
    scope: Scope<'_>,
    message: &StoredMessage,
) {
    if embedding_policy(message) == EmbeddingStatus::Pending {
        platform.queue().enqueue(EmbedJob {
            site_id: scope.site_id.into(),
            conversation_id: scope.conversation_id.into(),
            message_id: message.id.clone(),
            text: message.content.clone(),
        });
    }
}

/// Stores the turn's reply under its announced id (and queues its embedding when the
/// embedding policy says so). A stateless turn only builds the message.
pub async fn store_reply<P: Platform>(
    platform: &P,
    turn: &Turn<'_>,
    kind: MessageKind,
    content: String,
    metadata: Metadata,
    tool_steps: Vec<ToolStep>,
) -> Result<StoredMessage, Error> {
    let now = platform.clock().now_ms();
    let mut message = assistant_message(turn.reply_id.clone(), kind, content, now);
    message.metadata = metadata;
    message.tool_steps = tool_steps;
    message.payloads = turn.payloads.clone();
    let scope = turn.scope();
    if turn.mode == TurnMode::Stateless {
        message.seq = turn.message_seq + 1;
        return Ok(message);
    }
    message.seq = platform
        .store()
        .append_reply(scope, &turn.user_message_id, &message)
        .await
        .map_err(Error::Store)?;
    for due in &turn.memory_due {
        queue_embedding(platform, scope, due);
    }
    if turn.reply_due {
        queue_embedding(platform, scope, &message);
    }
    Ok(message)
}

/// What memory retrieval may return after the turn *following* this one, among
/// `history` (the last `window` messages before the visitor's `message`, oldest first),
/// the message and (`true`) the reply to come: retrieval reads only what is older than the
/// window (`seq <= newest - window`), and each turn adds two messages, so these are the
/// two after the pair that leaves with this turn. Embedded one turn ahead, each message is
/// queued once, by the turn before it leaves; one that never leaves is never embedded.
fn memory_due(
    history: &[StoredMessage],
    message: &StoredMessage,
    window: usize,
) -> (Vec<StoredMessage>, bool) {
    let h = history.len();
    // Positions in the history, then the message (h), then the reply (h + 1).
    let (from, to) = (
        (h + 2).saturating_sub(window),
        (h + 4).saturating_sub(window),
    );
    let mut due: Vec<StoredMessage> = history[from.min(h)..to.min(h)].to_vec();
    if (from..to).contains(&h) {
        due.push(message.clone());
    }
    (due, (from..to).contains(&(h + 1)))
}
