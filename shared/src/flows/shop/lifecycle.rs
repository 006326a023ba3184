//! A `shop` turn around its graph: node 1 (`receive`: store the visitor's message, or find
//! it again by its idempotency key), the graph from `classify`, and the failure mark.
//!
//! Two ways through it:
//! - [`run_turn`], a streamed turn: `Started`, the reply's chunks and one terminal event;
//! - [`receive`], then [`answer_job`] on the Worker's queue, a background turn (`Prefer:
//!   respond-async`): the visitor's message is stored while the client waits, the answer
//!   is produced later and retried by the caller while [`Error::is_transient`].
//!
//! Either way a turn that finally fails marks the visitor's message
//! ([`ANSWER_FAILED`](crate::conversation::ANSWER_FAILED)), and a repeat with the same
//! idempotency key replays the stored reply or answers the stored message again (see
//! [`turn`](crate::turn)).

use alloc::string::String;
use alloc::vec::Vec;

use super::nodes::ShopFlow;
use super::{ShopConfig, ShopServices, ShopState, TurnOutcome, graph};
use crate::boundary::{
    ChatModel, ConversationStore, Embedder, LogRecord, NewTurn, TurnOpening, TurnStart,
    VectorIndex, WarrantyRecords,
};
use crate::conversation::{EmbedJob, MessageKind, Metadata, Role, Scope, StoredMessage};
use crate::error::{Error, InvalidMessage};
use crate::graph::GraphError;
use crate::intent::Intent;
use crate::language;
use crate::turn::{TurnEvent, TurnInput, TurnJob, TurnSink, valid_idempotency_key};

/// A stored visitor's message awaiting its reply.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingTurn {
    /// The conversation, the history before the message, and the message.
    pub start: TurnStart,
    /// The id the reply is to be stored under.
    pub reply_id: String,
}

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
}

impl Received {
    /// The stored visitor's message.
    pub fn user_message_id(&self) -> &str {
        match self {
            Self::Pending(pending) => &pending.start.message.id,
            Self::Answered { start, .. } => &start.message.id,
        }
    }

    /// The id the reply is (or is to be) stored under.
    pub fn reply_id(&self) -> &str {
        match self {
            Self::Pending(pending) => &pending.reply_id,
            Self::Answered { reply, .. } => &reply.id,
        }
    }
}

/// Node 1 on its own: validates the visitor's message and stores it with its turn (queuing
/// its embedding), or — when its idempotency key was used before in the conversation —
/// finds the stored one again: answered, or claimed for a new attempt under a new reply id.
pub async fn receive<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    input: &TurnInput,
) -> Result<Received, Error>
where
    S: ConversationStore,
{
    let text = input.text.trim();
    if text.is_empty() {
        return Err(Error::InvalidMessage(InvalidMessage::Empty));
    }
    if text.chars().count() > config.max_message_chars {
        return Err(Error::InvalidMessage(InvalidMessage::TooLong {
            max_chars: config.max_message_chars,
        }));
    }
    let key = input.idempotency_key.as_deref();
    if key.is_some_and(|key| !valid_idempotency_key(key)) {
        return Err(Error::InvalidMessage(InvalidMessage::IdempotencyKey));
    }
    let scope = Scope::new(&input.site_id, &input.conversation_id);
    let store = services.store;
    let message = StoredMessage {
        id: services.ids.new_id(),
        seq: 0,
        role: Role::User,
        kind: MessageKind::Text,
        content: text.into(),
        metadata: Metadata::new(),
        created_at: services.clock.now_ms(),
        tool_steps: Vec::new(),
    };
    let reply_id = services.ids.new_id();
    let turn = NewTurn {
        message,
        reply_id: &reply_id,
        idempotency_key: key,
    };
    let opened = store
        .start_turn(scope, turn, config.history_window)
        .await
        .map_err(Error::Store)?
        .ok_or(Error::ConversationNotFound)?;
    let stored = match opened {
        TurnOpening::Started(start) => {
            services.queue.enqueue(embed_job(scope, &start.message));
            return Ok(Received::Pending(PendingTurn { start, reply_id }));
        }
        TurnOpening::Repeated(stored) => stored,
    };
    if stored.content != text {
        return Err(Error::IdempotencyKeyReused);
    }
    let resumed = store
        .resume_turn(scope, &stored.id, Some(&reply_id), config.history_window)
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

/// Runs one streamed turn: node 1 ([`receive`]), then the graph from `classify`.
///
/// Emits `Started`, the reply's `Chunk`s, and exactly one terminal event into `sink`
/// (see [`turn`](crate::turn)); a repeat of an answered message replays its stored reply.
/// On error the `Failed` event has already been emitted, and a turn that failed after its
/// `Started` is marked on the visitor's message.
pub async fn run_turn<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    input: &TurnInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    let result = streamed(services, config, input, sink).await;
    match &result {
        Ok(outcome) => sink.emit(TurnEvent::Completed {
            message_id: outcome.reply.id.clone(),
            kind: outcome.reply.kind,
            intent: Some(outcome.intent.as_str()),
            confidence: Some(outcome.confidence),
            usage: outcome.usage,
        }),
        Err(error) => sink.emit(TurnEvent::Failed {
            code: error.code(),
            message: error.public_message(),
        }),
    }
    result
}

async fn streamed<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    input: &TurnInput,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    let received = receive(services, config, input).await?;
    sink.emit(TurnEvent::Started {
        conversation_id: input.conversation_id.clone(),
        user_message_id: received.user_message_id().into(),
        message_id: received.reply_id().into(),
    });
    let pending = match received {
        Received::Answered { start, reply } => {
            if !reply.content.is_empty() {
                sink.emit(TurnEvent::Chunk {
                    text: reply.content.clone(),
                });
            }
            return Ok(replayed(start, reply));
        }
        Received::Pending(pending) => pending,
    };
    let (message_id, reply_id) = (pending.start.message.id.clone(), pending.reply_id.clone());
    let result = answer(services, config, pending, true, sink).await;
    if let Err(error) = &result {
        let scope = Scope::new(&input.site_id, &input.conversation_id);
        mark_failed(services, scope, &message_id, &reply_id, error).await;
    }
    result
}

/// Answers a background turn's stored message (the Worker's turn-queue consumer).
///
/// `Ok(None)` when there is nothing to do: the reply is stored already, a retry
/// superseded this job, or the message is gone. Text streamed before a failure is not
/// kept (nobody saw it). A failure on the `last_attempt`, or one that retrying cannot
/// mend, marks the visitor's message; the caller retries the others.
pub async fn answer_job<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    job: &TurnJob,
    last_attempt: bool,
) -> Result<Option<TurnOutcome>, Error>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    let scope = Scope::new(&job.site_id, &job.conversation_id);
    let resumed = services
        .store
        .resume_turn(scope, &job.user_message_id, None, config.history_window)
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
    let result = answer(services, config, pending, false, &mut |_: TurnEvent| {}).await;
    if let Err(error) = &result
        && (last_attempt || !error.is_transient())
    {
        mark_failed(
            services,
            scope,
            &job.user_message_id,
            &job.message_id,
            error,
        )
        .await;
    }
    result.map(Some)
}

/// Nodes 2–4: the graph from `classify`, for a stored visitor's message. `keep_partial`:
/// store the text streamed before a model failure (marked incomplete).
async fn answer<M, S, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    config: &ShopConfig,
    pending: PendingTurn,
    keep_partial: bool,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
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
    let scope = conversation.scope();
    // The language: detected from the visitor's first message, or explicitly asked for.
    let first_user_message = !history.iter().any(|m| m.role == Role::User);
    let detected = if first_user_message {
        language::detect(&message.content)
    } else {
        conversation.language
    };
    let language = language::requested(&message.content).unwrap_or(detected);
    let (user_message_id, received_at) = (message.id.clone(), message.created_at);
    history.push(message);

    let user_id = conversation.user_id.clone();
    let mut state = ShopState::new(scope, user_id, language, history, received_at);
    state.user_message_id = user_message_id.clone();
    state.reply_id = reply_id;
    state.retrievable = retrievable;
    let mut flow = ShopFlow {
        services,
        config,
        sink,
        keep_partial,
    };
    let trace = graph().run(&mut flow, &mut state).await;
    // A changed language is remembered after the answer, off the time-to-first-token path
    // (and also when the answer failed: the visitor's message was stored). Best effort: the
    // answer is already streamed and stored, so a failure here is logged, not the turn's.
    if language != conversation.language
        && let Err(error) = services.store.set_language(scope, language).await
    {
        services.logger.log(&LogRecord::Warning {
            conversation_id: scope.conversation_id,
            code: "language_not_saved",
            detail: &error.detail,
        });
    }
    let trace = trace?;
    let reply = state
        .reply
        .ok_or(Error::Graph(GraphError::MissingOutput { what: "a reply" }))?;
    Ok(TurnOutcome {
        user_message_id,
        reply,
        intent: state.intent,
        confidence: state.intent_confidence,
        language,
        route: trace.names(),
        usage: state.usage,
    })
}

/// Marks the visitor's message as unanswered (best effort: logged if it fails).
async fn mark_failed<M, S: ConversationStore, E, V, W>(
    services: &ShopServices<'_, M, S, E, V, W>,
    scope: Scope<'_>,
    message_id: &str,
    reply_id: &str,
    error: &Error,
) {
    let marked = services
        .store
        .mark_answer_failed(scope, message_id, reply_id, error.code())
        .await;
    if let Err(error) = marked {
        services.logger.log(&LogRecord::Warning {
            conversation_id: scope.conversation_id,
            code: "failure_not_marked",
            detail: &error.detail,
        });
    }
}

/// The outcome of an answered turn, rebuilt from what is stored.
fn replayed(start: TurnStart, reply: StoredMessage) -> TurnOutcome {
    let intent = reply.meta_str("intent").and_then(Intent::parse);
    let confidence = reply
        .metadata
        .get("confidence")
        .and_then(serde_json::Value::as_f64);
    TurnOutcome {
        user_message_id: start.message.id,
        intent: intent.unwrap_or(Intent::Unknown),
        confidence: confidence.unwrap_or_default() as f32,
        language: start.conversation.language,
        route: Vec::new(),
        usage: None,
        reply,
    }
}

pub(super) fn embed_job(scope: Scope<'_>, message: &StoredMessage) -> EmbedJob {
    EmbedJob {
        site_id: scope.site_id.into(),
        conversation_id: scope.conversation_id.into(),
        message_id: message.id.clone(),
        text: message.content.clone(),
    }
}
