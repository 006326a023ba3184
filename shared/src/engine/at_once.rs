//! A streamed turn without an idempotency key: its answer starts before its visitor's
//! message is stored.
//!
//! The turn takes its history from the store — or, when the store already knows the
//! conversation ([`ConversationStore::cached_turn`]), from what it knows, without a round
//! trip — then stores the visitor's message *while* the template answers (see
//! [`gate`](super::gate)). The answer's events are held back until the message is stored,
//! so `Started` still comes first; a message that cannot be stored, or a caller refused by
//! its rate limits, drops the answer unfinished and fails the turn before it started.
//!
//! The write waits until the answer's model has the request (its response began), the
//! answer needs the store, or [`WRITE_AFTER_MS`] passed: on a runtime with one thread,
//! work started together is done in turns, and the model's request goes first.
//!
//! A history the store only remembered is checked by the write itself
//! ([`ConversationStore::insert_checked_turn`] reads the history as it stood before the
//! message): if the conversation moved on meanwhile (another turn, another isolate), the
//! held answer is dropped unseen and the template answers again from the history as stored.

use core::future::Future;

use super::contract::{Assistant, Platform, TurnMode, TurnOutcome};
use super::gate::{Gate, Gated, Held, HeldSink};
use super::join::{alongside, both, first};
use super::steps::{
    PendingTurn, answer, answer_gated, mark_failed, refusal_answered, refusal_reply, valid_text,
    visitor_message,
};
use crate::boundary::{ConversationStore, NewTurn, Timer, TurnContext, TurnStart};
use crate::conversation::{Scope, StoredMessage};
use crate::error::Error;
use crate::turn::{Started, TurnInput, TurnSink};

/// The longest the visitor's message waits to be stored for the model to have its request
/// (see [`streamed_at_once`]): short next to a model's time to its first token, which
/// the answer's events wait for anyway.
const WRITE_AFTER_MS: u64 = 25;

/// The caller's admission (its rate limits) as a turn sees it.
#[derive(Debug)]
pub struct Admission<F> {
    /// Resolves to whether the caller is admitted. Nothing is stored before it has.
    pub verdict: F,
    /// Whether the verdict is expected to be yes (the caller was admitted last time): the
    /// answer may then start before it comes, held back and dropped on a refusal.
    pub likely: bool,
}

impl Admission<core::future::Ready<bool>> {
    /// No limit: always admitted.
    pub fn open() -> Self {
        Self {
            verdict: core::future::ready(true),
            likely: true,
        }
    }
}

/// Why storing the visitor's message ended the answer early.
enum Stop {
    /// The turn fails before it started.
    Failed(Error),
    /// The message is stored (`seq`), but the conversation had moved on from the history
    /// the answer started from; this is the history as stored before the message.
    Outdated(u64, TurnContext),
}

impl From<Error> for Stop {
    fn from(error: Error) -> Self {
        Self::Failed(error)
    }
}

/// Runs the turn (see the module's documentation).
pub(super) async fn streamed_at_once<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &TurnInput,
    admission: Admission<impl Future<Output = bool>>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let text = valid_text(assistant, &input.text)?;
    let scope = Scope::new(&input.site_id, &input.conversation_id);
    let store = platform.store();
    let window = assistant.config().history_window;
    let (context, remembered, mut verdict) = opening(store, scope, window, admission).await?;
    if let Some(refusal) = assistant.screen(platform, input, text).await? {
        if let Some(verdict) = verdict.take()
            && !verdict.await
        {
            return Err(Error::RateLimited);
        }
        let (user_message_id, reply, language) = refusal_reply(platform, refusal);
        Started {
            conversation_id: input.conversation_id.clone(),
            user_message_id: user_message_id.clone(),
            reply_id: reply.id.clone(),
        }
        .announce(sink);
        return Ok(refusal_answered(user_message_id, reply, language, sink));
    }
    let (message, reply_id) = visitor_message(platform, text);
    let started = Started {
        conversation_id: input.conversation_id.clone(),
        user_message_id: message.id.clone(),
        reply_id: reply_id.clone(),
    };
    let expected = remembered.then(|| context.clone());
    let gate = Gate::default();
    let held = HeldSink::new(sink);
    let store_message = async {
        // The write keeps out of the way of the model's request: on a runtime with one
        // thread (a Worker; its local database and limiter too, under `wrangler dev`) work
        // started together is done in turns, so the write starts once the model has the
        // request, the answer waits for it, or after `WRITE_AFTER_MS` at the latest.
        first(gate.reached(), platform.timer().sleep(WRITE_AFTER_MS)).await;
        if let Some(verdict) = verdict
            && !verdict.await
        {
            gate.settle(false);
            return Err(Stop::Failed(Error::RateLimited));
        }
        let turn = NewTurn {
            message: message.clone(),
            reply_id: &reply_id,
            idempotency_key: None,
        };
        let stored = match &expected {
            None => store.insert_turn(scope, turn).await,
            Some(expected) => match store.insert_checked_turn(scope, turn, window).await {
                Ok(Some((seq, actual))) if actual != *expected => {
                    return Err(Stop::Outdated(seq, actual));
                }
                checked => checked.map(|stored| stored.map(|(seq, _)| seq)),
            },
        };
        gate.settle(matches!(stored, Ok(Some(_))));
        match stored {
            Ok(Some(_)) => {
                held.borrow_mut().release(&started);
                Ok(())
            }
            Ok(None) => Err(Stop::Failed(Error::ConversationNotFound)),
            Err(error) => Err(Stop::Failed(Error::Store(error))),
        }
    };
    // The answer sees the message without its `seq` (taken by the write).
    let pending = pending_turn(context, message.clone(), &reply_id);
    let gated = Gated::new(platform, &gate);
    let mut events = Held(&held);
    let answering = async {
        let answered =
            answer_gated(&gated, assistant, pending, TurnMode::Streamed, &mut events).await;
        gate.reach();
        answered
    };
    let result = match alongside(store_message, answering).await {
        Ok(((), result)) => result,
        Err(Stop::Failed(error)) => return Err(error),
        Err(Stop::Outdated(seq, context)) => {
            // The held answer is dropped unseen: answer again from the stored history.
            let sink = held.into_inner().discard();
            let stored = StoredMessage { seq, ..message };
            started.announce(sink);
            let pending = pending_turn(context, stored.clone(), &reply_id);
            let result = answer(platform, assistant, pending, TurnMode::Streamed, sink).await;
            if let Err(error) = &result {
                mark_failed(platform, scope, &stored.id, &reply_id, error).await;
            }
            return result;
        }
    };
    if let Err(error) = &result {
        mark_failed(platform, scope, &message.id, &reply_id, error).await;
    }
    result
}

/// What the turn starts from: the context this store remembers (`true`) or reads, and
/// the admission's verdict still to wait for before anything is stored — when the caller
/// was admitted last time the answer may start before it comes; otherwise it is awaited
/// here (a refusal is [`Error::RateLimited`], nothing read or stored in vain).
async fn opening<S: ConversationStore, F: Future<Output = bool>>(
    store: &S,
    scope: Scope<'_>,
    window: usize,
    admission: Admission<F>,
) -> Result<(TurnContext, bool, Option<F>), Error> {
    let Admission { verdict, likely } = admission;
    match store.cached_turn(scope, window) {
        Some(context) if likely => Ok((context, true, Some(verdict))),
        Some(context) => {
            if !verdict.await {
                return Err(Error::RateLimited);
            }
            Ok((context, true, None))
        }
        None => {
            let (read, admitted) = both(store.read_turn(scope, window), verdict).await;
            if !admitted {
                return Err(Error::RateLimited);
            }
            let context = read.map_err(Error::Store)?;
            Ok((context.ok_or(Error::ConversationNotFound)?, false, None))
        }
    }
}

fn pending_turn(context: TurnContext, message: StoredMessage, reply_id: &str) -> PendingTurn {
    let TurnContext {
        conversation,
        history,
        retrievable,
    } = context;
    PendingTurn {
        start: TurnStart {
            conversation,
            history,
            message,
            retrievable,
        },
        reply_id: reply_id.into(),
    }
}
