//! Regenerating the last answer: the conversation's last turn is answered again from its
//! stored visitor's message, through the same steps as an idempotent repeat of a failed
//! message ([`resume_turn`](crate::boundary::ConversationStore::resume_turn) with a
//! claim) — only the old reply is deleted first, so the question is never stored twice
//! and the old answer leaves history (and every later prompt) with its votes.

use alloc::string::String;

use core::future::Future;

use super::at_once::Admission;
use super::contract::{Assistant, Platform, TurnMode, TurnOutcome};
use super::steps::{PendingTurn, answer, finish, mark_failed};
use crate::boundary::{ConversationStore, Reopening};
use crate::conversation::Scope;
use crate::error::Error;
use crate::turn::{Started, TurnSink};

/// What to regenerate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegenerateInput {
    /// The site (from the authenticated widget or API key).
    pub site_id: String,
    /// The conversation.
    pub conversation_id: String,
    /// The answer (or the unanswered visitor's message) the caller means to replace: a
    /// regenerate of anything but the last turn's is [`Error::NotLastTurn`]. `None`: the
    /// last turn, whatever it is.
    pub expected: Option<String>,
}

/// Answers the conversation's last visitor's message again, replacing its reply, as a
/// streamed turn: `Started` (the stored visitor's message's id, a new reply id), the
/// template's events, one terminal event; a failure marks the visitor's message as a
/// failed turn does. [`Error::TurnInProgress`] while the last turn is still being answered
/// (a second regenerate included), [`Error::NotLastTurn`] when `expected` is not the last
/// turn's — both before anything changes, with no `Started`.
pub async fn regenerate<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &RegenerateInput,
    admission: Admission<impl Future<Output = bool>>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let result = reopened(platform, assistant, input, admission, sink).await;
    finish(assistant, result, sink)
}

async fn reopened<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: &RegenerateInput,
    admission: Admission<impl Future<Output = bool>>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    if !admission.verdict.await {
        return Err(Error::RateLimited);
    }
    let scope = Scope::new(&input.site_id, &input.conversation_id);
    let window = assistant.config().history_window;
    let claim = platform.ids().new_id();
    let reopening = platform
        .store()
        .reopen_last_turn(scope, input.expected.as_deref(), &claim, window)
        .await
        .map_err(Error::Store)?
        .ok_or(Error::ConversationNotFound)?;
    let resume = match reopening {
        Reopening::Reopened { resume, .. } => *resume,
        Reopening::NotLast => return Err(Error::NotLastTurn),
        Reopening::InProgress => return Err(Error::TurnInProgress),
        Reopening::Fixed => return Err(Error::FixedAnswer),
    };
    Started {
        conversation_id: input.conversation_id.clone(),
        user_message_id: resume.start.message.id.clone(),
        reply_id: resume.reply_id.clone(),
    }
    .announce(sink);
    let (message_id, reply_id) = (resume.start.message.id.clone(), resume.reply_id.clone());
    let pending = PendingTurn {
        start: resume.start,
        reply_id: resume.reply_id,
    };
    let result = answer(platform, assistant, pending, TurnMode::Streamed, sink).await;
    if let Err(error) = &result {
        mark_failed(platform, scope, &message_id, &reply_id, error).await;
    }
    result
}
