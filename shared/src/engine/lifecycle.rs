//! The turn lifecycle every template runs (see [`turn`](crate::turn) for its events and
//! failure semantics).
//!
//! Three ways through it (a new conversation is opened by
//! [`create_conversation`](super::create_conversation)):
//! - [`run_turn`], a streamed turn: `Started`, the template's events, one terminal event;
//! - [`receive`], then [`answer_job`] on the Worker's queue, a background turn (`Prefer:
//!   respond-async`): the visitor's message is stored while the client waits, the answer
//!   is produced later and retried by the caller while [`Error::is_transient`];
//! - [`run_stateless`](super::run_stateless): the history comes from the caller and
//!   nothing is stored.
//!
//! A stored turn that finally fails marks the visitor's message
//! ([`ANSWER_FAILED`](crate::conversation::ANSWER_FAILED)), and a repeat with the same
//! idempotency key replays the stored reply or answers the stored message again.

use alloc::string::String;
use alloc::vec::Vec;

use core::future::Future;

use super::at_once::{Admission, streamed_at_once};
use super::contract::{Assistant, Platform, TurnMode, TurnOutcome};
use super::steps::{
    PendingTurn, answer, finish, mark_failed, refusal_answered, refusal_reply, valid_text,
    visitor_message,
};
use crate::boundary::{ConversationStore, NewTurn, TurnOpening, TurnStart};
use crate::conversation::{Scope, StoredMessage};
use crate::error::{Error, InvalidMessage};
use crate::turn::{Started, TurnEvent, TurnInput, TurnJob, TurnSink, valid_idempotency_key};

/// What [`receive`] did with the visitor's message.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// The message is stored (now, or by an earlier post with the same idempotency key)
    /// and awaits its reply.
    Pending(PendingTurn),
    /// An earlier post with the same idempotency key was answered: nothing more to do.
    Answered {
        /// The conversation and the stored visitor's message.
        start: TurnStart,
        /// The stored reply.
        reply: StoredMessage,
    },
    /// The template refused the message before storing it ([`Assistant::screen`]): the
    /// refusal is the answer, and neither is stored (their ids are minted, not stored).
    Refused {
        /// The id announced for the visitor's (unstored) message.
        user_message_id: String,
        /// The refusal, as an unstored [`MessageKind::Refusal`](crate::conversation::MessageKind::Refusal) reply.
        reply: StoredMessage,
        /// The language of the refusal.
        language: crate::conversation::Language,
    },
}

impl Received {
    /// The stored visitor's message.
    pub fn user_message_id(&self) -> &str {
        match self {
            Self::Pending(pending) => &pending.start.message.id,
            Self::Answered { start, .. } => &start.message.id,
            Self::Refused {
                user_message_id, ..
            } => user_message_id,
        }
    }

    /// The id the reply is (or is to be) stored under.
    pub fn reply_id(&self) -> &str {
        match self {
            Self::Pending(pending) => &pending.reply_id,
            Self::Answered { reply, .. } | Self::Refused { reply, .. } => &reply.id,
        }
    }
}

/// Receiving on its own: validates the visitor's message and stores it with its turn
/// (queuing its embedding), or — when its idempotency key was used before in the
/// conversation — finds the stored one again: answered, or claimed for a new attempt under
/// a new reply id. A message the template's [`Assistant::screen`] refuses is never stored
/// ([`Received::Refused`]) — also one the platform answers itself (a request for a
/// person, a message while a person holds the conversation): every stored visitor's
/// message has passed the screen.
pub async fn receive<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &TurnInput,
) -> Result<Received, Error> {
    let text = valid_text(assistant, &input.text)?;
    let key = input.idempotency_key.as_deref();
    if key.is_some_and(|key| !valid_idempotency_key(key)) {
        return Err(Error::InvalidMessage(InvalidMessage::IdempotencyKey));
    }
    let window = assistant.config().history_window;
    let scope = Scope::new(&input.site_id, &input.conversation_id);
    let store = platform.store();
    if let Some(refusal) = assistant.screen(platform, input, text).await? {
        return refused(platform, scope, refusal).await;
    }
    let (message, reply_id) = visitor_message(platform, text);
    let turn = NewTurn {
        message,
        reply_id: &reply_id,
        idempotency_key: key,
    };
    let opened = store
        .start_turn(scope, turn, window)
        .await
        .map_err(Error::Store)?
        .ok_or(Error::ConversationNotFound)?;
    let stored = match opened {
        TurnOpening::Started(start) => {
            return Ok(Received::Pending(PendingTurn { start, reply_id }));
        }
        TurnOpening::Repeated(stored) => stored,
    };
    if stored.content != text {
        return Err(Error::IdempotencyKeyReused);
    }
    let resumed = store
        .resume_turn(scope, &stored.id, Some(&reply_id), window)
        .await
        .map_err(Error::Store)?
        .ok_or(Error::ConversationNotFound)?;
    Ok(match resumed.reply {
        Some(reply) if !reply.is_incomplete() => Received::Answered {
            start: resumed.start,
            reply,
        },
        _ => Received::Pending(PendingTurn {
            start: resumed.start,
            reply_id: resumed.reply_id,
        }),
    })
}

/// A refused message's answer, once its conversation is known to exist on the site.
async fn refused<P: Platform>(
    platform: &P,
    scope: Scope<'_>,
    refusal: super::contract::Refusal,
) -> Result<Received, Error> {
    platform
        .store()
        .load_conversation(scope)
        .await
        .map_err(Error::Store)?
        .ok_or(Error::ConversationNotFound)?;
    let (user_message_id, reply, language) = refusal_reply(platform, refusal);
    Ok(Received::Refused {
        user_message_id,
        reply,
        language,
    })
}

/// Runs one streamed turn: [`receive`], `Started`, the template's answer, one terminal
/// event.
///
/// A repeat of an answered message replays its stored reply. On error the `Failed` event
/// has already been emitted, and a turn that failed after its `Started` is marked on the
/// visitor's message.
pub async fn run_turn<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &TurnInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    run_admitted_turn(platform, assistant, input, Admission::open(), sink).await
}

/// [`run_turn`] behind the caller's admission check (a rate limit): its verdict is awaited
/// while the turn's history is read — or, when it is [likely](Admission::likely), while the
/// answer already runs, held back — and a refusal ends the turn with
/// [`Error::RateLimited`] before anything is stored.
pub async fn run_admitted_turn<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &TurnInput,
    admission: Admission<impl Future<Output = bool>>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let result = streamed(platform, assistant, input, admission, sink).await;
    finish(assistant, result, sink)
}

async fn streamed<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &TurnInput,
    admission: Admission<impl Future<Output = bool>>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    if input.idempotency_key.is_none() {
        return streamed_at_once(platform, assistant, input, admission, sink).await;
    }
    valid_text(assistant, &input.text)?;
    if !admission.verdict.await {
        return Err(Error::RateLimited);
    }
    let received = receive(platform, assistant, input).await?;
    Started {
        conversation_id: input.conversation_id.clone(),
        user_message_id: received.user_message_id().into(),
        reply_id: received.reply_id().into(),
    }
    .announce(sink);
    let pending = match received {
        Received::Answered { start, reply } => {
            if !reply.content.is_empty() {
                sink.emit(TurnEvent::Chunk {
                    text: reply.content.clone(),
                });
            }
            for payload in &reply.payloads {
                sink.emit(TurnEvent::payload(payload));
            }
            let (intent, confidence) = assistant.stored_intent(&reply);
            return Ok(TurnOutcome {
                user_message_id: start.message.id,
                intent,
                confidence,
                language: start.conversation.language,
                route: Vec::new(),
                usage: None,
                reply,
            });
        }
        Received::Refused {
            user_message_id,
            reply,
            language,
        } => return Ok(refusal_answered(user_message_id, reply, language, sink)),
        Received::Pending(pending) => pending,
    };
    let (message_id, reply_id) = (pending.start.message.id.clone(), pending.reply_id.clone());
    let result = answer(platform, assistant, pending, TurnMode::Streamed, sink).await;
    if let Err(error) = &result {
        let scope = Scope::new(&input.site_id, &input.conversation_id);
        mark_failed(platform, scope, &message_id, &reply_id, error).await;
    }
    result
}

/// Answers a background turn's stored message (the Worker's turn-queue consumer).
///
/// `Ok(None)` when there is nothing to do: the reply is stored already, a retry
/// superseded this job, or the message is gone. Text streamed before a failure is not
/// kept (nobody saw it). A failure on the `last_attempt`, or one that retrying cannot
/// mend, marks the visitor's message; the caller retries the others.
pub async fn answer_job<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    job: &TurnJob,
    last_attempt: bool,
) -> Result<Option<TurnOutcome>, Error> {
    let mut silent = |_: TurnEvent| {};
    answer_job_streamed(platform, assistant, job, last_attempt, &mut silent).await
}

/// [`answer_job`], its events into `sink` as they are produced, as a streamed turn's:
/// [`Started`] (only once there is something to do), the template's events, then one
/// terminal event — `failed` too for a failure the caller will retry (that attempt's
/// end; the retry is a turn of its own). Nothing at all when there is nothing to do.
pub async fn answer_job_streamed<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    job: &TurnJob,
    last_attempt: bool,
    sink: &mut dyn TurnSink,
) -> Result<Option<TurnOutcome>, Error> {
    let scope = Scope::new(&job.site_id, &job.conversation_id);
    let window = assistant.config().history_window;
    let resumed = platform
        .store()
        .resume_turn(scope, &job.user_message_id, None, window)
        .await
        .map_err(Error::Store)?;
    let Some(resumed) = resumed else {
        return Ok(None);
    };
    if resumed.reply_id != job.message_id || resumed.reply.is_some() {
        return Ok(None);
    }
    let pending = PendingTurn {
        start: resumed.start,
        reply_id: resumed.reply_id,
    };
    Started {
        conversation_id: job.conversation_id.clone(),
        user_message_id: job.user_message_id.clone(),
        reply_id: job.message_id.clone(),
    }
    .announce(sink);
    let result = answer(platform, assistant, pending, TurnMode::Background, sink).await;
    if let Err(error) = &result
        && (last_attempt || !error.is_transient())
    {
        let (message, reply) = (&job.user_message_id, &job.message_id);
        mark_failed(platform, scope, message, reply, error).await;
    }
    finish(assistant, result, sink).map(Some)
}
