//! The answer steps every template shares: storing a reply, the streamed answer, and the
//! ReAct answer.
//!
//! All three honour the turn's [`TurnMode`]: a stateless turn stores and queues nothing; a
//! background attempt keeps no partial text. A reply takes its position in the
//! conversation when it is stored, so turns running at once in one conversation each store
//! theirs under the id their `Started` announced; a retry that superseded this attempt
//! makes storing a conflict.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::contract::{Platform, Turn, TurnMode};
use super::steps::{assistant_message, queue_embedding};
use crate::agent::{ReactConfig, ReactEnd, ToolRegistry, run_react};
use crate::boundary::{ChatModel, ChatRequest, ConversationStore, ModelCall};
use crate::chat::{ChatEvent, FinishReason, UpstreamError, Usage};
use crate::conversation::{MessageKind, Metadata, StoredMessage, ToolStep};
use crate::error::{ChatModelError, ChatModelErrorKind, Error};
use crate::turn::TurnEvent;

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
    queue_embedding(platform, scope, &message);
    Ok(message)
}

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
/// nothing, the turn fails; text a visitor already saw is stored with `incomplete: true`
/// and the error's code (left out of later prompts, not embedded).
pub async fn stream_answer<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
    metadata: Metadata,
) -> Result<StreamedAnswer, Error> {
    let mut answer = String::new();
    let mut upstream: Option<UpstreamError> = None;
    let mut finish: Option<FinishReason> = None;
    let mut usage = None;
    let sink = &mut *turn.sink;
    let mut on_event = |event: ChatEvent| match event {
        ChatEvent::Finish {
            reason,
            usage: reported,
        } => {
            finish = Some(reason);
            usage = reported;
        }
        ChatEvent::TextDelta(text) if upstream.is_none() && !text.is_empty() => {
            answer.push_str(&text);
            sink.emit(TurnEvent::Chunk { text });
        }
        ChatEvent::Error(error) if upstream.is_none() => upstream = Some(error),
        _ => {}
    };
    let streamed = platform
        .model()
        .stream(&ModelCall::new(request), &mut on_event)
        .await;
    let failure = match (streamed, upstream) {
        (Err(error), _) => Some(Error::ChatModel(error)),
        (Ok(()), Some(error)) => Some(upstream_error(&error)),
        (Ok(()), None) if answer.trim().is_empty() => Some(Error::EmptyAnswer),
        (Ok(()), None) => None,
    };
    let reply = keep(
        platform,
        turn,
        answer,
        metadata,
        Vec::new(),
        finish,
        failure,
    )
    .await?;
    Ok(StreamedAnswer { reply, usage })
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

/// Stores a model answer, or — on `failure` — the partial text a visitor saw (marked
/// incomplete, best effort) before failing the turn.
async fn keep<P: Platform>(
    platform: &P,
    turn: &Turn<'_>,
    answer: String,
    mut metadata: Metadata,
    steps: Vec<ToolStep>,
    finish: Option<FinishReason>,
    failure: Option<Error>,
) -> Result<StoredMessage, Error> {
    if let Some(reason) = finish.filter(|reason| *reason != FinishReason::Stop) {
        // E.g. `length`: the answer was cut by the token limit.
        let reason = serde_json::to_value(reason).unwrap_or_default();
        metadata.insert("finish_reason".into(), reason);
    }
    let kind = MessageKind::Answer;
    let Some(error) = failure else {
        return store_reply(platform, turn, kind, answer, metadata, steps).await;
    };
    if (!answer.is_empty() || !steps.is_empty()) && turn.mode == TurnMode::Streamed {
        metadata.insert("incomplete".into(), true.into());
        metadata.insert("error".into(), error.code().into());
        // Best effort: the turn fails with the model's error whatever happens here.
        let _ = store_reply(platform, turn, kind, answer, metadata, steps).await;
    }
    Err(error)
}

/// An in-band error event as the turn's error.
fn upstream_error(error: &UpstreamError) -> Error {
    let code = error.code.as_deref().unwrap_or_default();
    Error::ChatModel(ChatModelError::new(
        ChatModelErrorKind::Upstream,
        format!("{code}: {}", error.message),
    ))
}
