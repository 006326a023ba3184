//! Stateless turns: the history comes from the caller (an OpenAI-style client sends the
//! whole conversation each time); the events are a stored turn's, and nothing is stored.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::contract::{Assistant, Platform, TurnMode, TurnOutcome};
use super::steps::{PendingTurn, answer, assistant_message, finish, valid_text};
use crate::boundary::TurnStart;
use crate::chat::Role;
use crate::conversation::{Conversation, Language, MessageKind};
use crate::error::{Error, InvalidMessage};
use crate::identity::UserIdentity;
use crate::language;
use crate::turn::{Started, TurnSink};

/// A turn whose history comes from the caller (e.g. an OpenAI-style client that sends the
/// whole conversation each time).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatelessInput {
    /// The site.
    pub site_id: String,
    /// The conversation so far, oldest first: visitor (`User`) and assistant messages; the
    /// last is the visitor's message to answer.
    pub messages: Vec<(Role, String)>,
    /// The verified identity of the caller, if any.
    pub identity: Option<UserIdentity>,
}

/// Runs one turn on the caller's history, with the same events as [`run_turn`](super::run_turn). Nothing
/// is stored or queued: the conversation and message ids the events carry are minted for
/// this turn only.
pub async fn run_stateless<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: StatelessInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let result = stateless(platform, assistant, input, sink).await;
    finish(assistant, result, sink)
}

async fn stateless<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    input: StatelessInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let Some((Role::User, last)) = input.messages.last() else {
        return Err(Error::InvalidMessage(InvalidMessage::History));
    };
    valid_text(assistant, last)?;
    let language = earlier_language(&input.messages[..input.messages.len() - 1]);
    let (ids, now) = (platform.ids(), platform.clock().now_ms());
    let skip = input
        .messages
        .len()
        .saturating_sub(assistant.config().history_window + 1);
    let mut history = Vec::with_capacity(input.messages.len() - skip);
    for (role, content) in input.messages.into_iter().skip(skip) {
        let kind = match role {
            Role::User => MessageKind::Text,
            Role::Assistant => MessageKind::Answer,
            Role::System | Role::Tool => {
                return Err(Error::InvalidMessage(InvalidMessage::History));
            }
        };
        let mut message = assistant_message(ids.new_id(), kind, content, now);
        message.role = role;
        message.seq = history.len() as u64 + 1;
        history.push(message);
    }
    let conversation = Conversation {
        id: ids.new_id(),
        site_id: input.site_id,
        user_id: input.identity.as_ref().map(|identity| identity.sub.clone()),
        identity: input.identity.map(Box::new),
        language,
        created_at: now,
    };
    let message = history.pop().expect("the last message is the visitor's");
    let start = TurnStart {
        conversation,
        history,
        message,
        retrievable: true,
    };
    let pending = PendingTurn {
        start,
        reply_id: ids.new_id(),
    };
    Started {
        conversation_id: pending.start.conversation.id.clone(),
        user_message_id: pending.start.message.id.clone(),
        reply_id: pending.reply_id.clone(),
    }
    .announce(sink);
    answer(platform, assistant, pending, TurnMode::Stateless, sink).await
}

/// The language a stored conversation would have before its current message: detected
/// from the visitor's first message, switched by any explicit request after it (the
/// current message is [`answer`]'s to decide). Read from the whole history, before the
/// window drops its oldest messages.
fn earlier_language(earlier: &[(Role, String)]) -> Language {
    let mut visitor = earlier
        .iter()
        .filter(|(role, _)| *role == Role::User)
        .map(|(_, text)| text.as_str());
    let Some(first) = visitor.next() else {
        return Language::default();
    };
    let first = language::requested(first).unwrap_or_else(|| language::detect(first));
    visitor.fold(first, |current, text| {
        language::requested(text).unwrap_or(current)
    })
}
