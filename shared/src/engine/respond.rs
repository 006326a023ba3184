//! The answer steps every template shares: the streamed answer and the ReAct answer
//! (storing a reply is [`store_reply`](super::store_reply)).
//!
//! All three honour the turn's [`TurnMode`]: a stateless turn stores and queues nothing; a
//! background attempt keeps no partial text. A reply takes its position in the
//! conversation when it is stored, so turns running at once in one conversation each store
//! theirs under the id their `Started` announced; a retry that superseded this attempt
//! makes storing a conflict.

use alloc::string::String;
use alloc::vec::Vec;

use super::contract::{Platform, Turn};
use super::steps::store_reply;
use super::streamed::{AsItComes, fail_answer, note_finish, stream_text};
use crate::agent::{ReactConfig, ReactEnd, ToolRegistry, run_react};
use crate::boundary::{ChatRequest, ModelCall};
use crate::chat::{FinishReason, Usage};
use crate::conversation::{MessageKind, Metadata, StoredMessage, ToolStep};
use crate::error::Error;
use crate::turn::TurnEvent;

/// A model answer, stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamedAnswer {
    /// The stored reply.
    pub reply: StoredMessage,
    /// Tokens the model used, when it reported them.
    pub usage: Option<Usage>,
}

/// The streamed answer: streams the model's text as chunks, then stores it as an
/// [`MessageKind::Answer`] with `metadata` (plus `finish_reason` when the model stopped for
/// another reason than the end of its answer, e.g. `length`).
///
/// If the model fails (transport error, HTTP status or in-band error event) or answers
/// nothing, the turn fails, and what the visitor saw is kept by the one policy
/// ([`fail_answer`]).
pub async fn stream_answer<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
    metadata: Metadata,
) -> Result<StreamedAnswer, Error> {
    let call = ModelCall::new(request);
    let mut streamed = stream_text(platform, &mut *turn.sink, &call, &mut AsItComes).await;
    let failure = streamed.failure_or_empty();
    let reply = keep(
        platform,
        turn,
        streamed.shown,
        metadata,
        Vec::new(),
        streamed.finish,
        failure,
    )
    .await?;
    Ok(StreamedAnswer {
        reply,
        usage: streamed.usage,
    })
}

/// The ReAct answer: the bounded agent ⇄ tools loop ([`run_react`]) over the turn's
/// model, with `tool_start`/`tool_end` events in the turn's stream; the answer is stored
/// with the tool rounds it took (so later prompts replay them in the provider's format).
///
/// When the loop ends on its step cap or its tool-error budget, `gave_up` — a sentence the
/// template chooses, in the turn's language — is streamed and stored as the answer, with
/// the rounds that ran and `react_end` in its metadata: the turn ends with a clear answer.
/// A model failure fails the turn as in [`stream_answer`], keeping what ran.
pub async fn react_answer<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    tools: &ToolRegistry<'_>,
    config: &ReactConfig,
    request: ChatRequest,
    gave_up: &str,
    mut metadata: Metadata,
) -> Result<StreamedAnswer, Error> {
    let outcome = run_react(
        platform.model(),
        platform.timer(),
        tools,
        config,
        request,
        &mut *turn.sink,
    )
    .await;
    let (mut answer, failure) = match outcome.end {
        ReactEnd::Answered if outcome.answer.trim().is_empty() => {
            (outcome.answer, Some(Error::EmptyAnswer))
        }
        ReactEnd::Answered => (outcome.answer, None),
        ReactEnd::ModelFailed(error) => (outcome.answer, Some(Error::ChatModel(error))),
        end @ (ReactEnd::StepLimit | ReactEnd::ToolErrorBudget) => {
            metadata.insert("react_end".into(), end.code().into());
            (String::new(), None)
        }
    };
    if answer.is_empty() && failure.is_none() {
        answer.push_str(gave_up);
        turn.sink.emit(TurnEvent::Chunk {
            text: answer.clone(),
        });
    }
    let steps = outcome.steps;
    let reply = keep(
        platform,
        turn,
        answer,
        metadata,
        steps,
        outcome.finish,
        failure,
    )
    .await?;
    Ok(StreamedAnswer {
        reply,
        usage: outcome.usage,
    })
}

/// Stores a model answer, or — on `failure` — fails the turn, keeping what the visitor
/// saw by the one policy ([`fail_answer`]).
async fn keep<P: Platform>(
    platform: &P,
    turn: &Turn<'_>,
    answer: String,
    mut metadata: Metadata,
    steps: Vec<ToolStep>,
    finish: Option<FinishReason>,
    failure: Option<Error>,
) -> Result<StoredMessage, Error> {
    let Some(error) = failure else {
        note_finish(&mut metadata, finish);
        let kind = MessageKind::Answer;
        return store_reply(platform, turn, kind, answer, metadata, steps).await;
    };
    Err(fail_answer(platform, turn, answer, metadata, steps, finish, error).await)
}
