//! Human handoff inside the conversation's object (issue 28): the hooks the object calls.
//!
//! The object keeps the conversation's handoff ([`HandoffRecord`]: `none` | `waiting` |
//! `held`, when it was asked for, by whom it is held) in its own storage, and copies it to
//! D1 (`bindings::d1_handoff`) whenever it changes, for the console's list.
//!
//! - [`gate`], before a turn's model step: a message while a person holds the conversation
//!   is stored and published, and nobody answers it ([`Gate::Held`]); with handoff on, a
//!   request for a person ([`asks_for_person`]) is stored and answered with a fixed notice
//!   instead of the model ([`Gate::Notice`]) — within office hours "a person will answer
//!   here" (state `waiting`, an alarm at now + the site's wait), outside them "nobody can
//!   answer now (hours); the assistant carries on" (state unchanged). Anything else runs.
//! - [`alarm`]: still `waiting` when the wait is over → "nobody is free; the assistant
//!   carries on", state `none`.
//! - [`handle`]: the console's take / release / a person's reply.
//!
//! Every change is published live: `handoff` `{"state", "since"?, "requested_at"?,
//! "agent"?}` and, for a message stored outside a turn, `message` (as the history shows
//! it, with `author` `{"name"}` on a person's reply).

use concierge_core::conversation::{
    EmbedJob, EmbeddingStatus, Language, MessageKind, Metadata, Role, Scope, StoredMessage,
    embedding_policy,
};
use concierge_core::engine::{self, Received, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::handoff::{HandoffState, Notice, OfficeHours, asks_for_person};
use concierge_core::language;
use concierge_core::turn::{ReplyEnvelope, Started, TurnEvent, TurnInput, TurnSink};
use serde::{Deserialize, Serialize};
use worker::Response;

use super::{LiveEvent, ObjectCtx};
use crate::bindings::d1_handoff::{self, HandoffRecord};
use crate::bindings::d1_store::D1Store;
use crate::bindings::queue::{self, IndexJob, QueueMessage};
use crate::error::ApiError;
use crate::http::message::message_json;
use crate::site::Site;
use crate::templates::turn_context;

/// The object's storage key of its [`HandoffRecord`].
const KEY_HANDOFF: &str = "handoff";
/// The object's storage key of the end of the current wait for a person (Unix ms).
const KEY_WAIT_UNTIL: &str = "handoff_wait_until";

/// What the object does with a visitor's message before the model step.
#[derive(Debug)]
pub(crate) enum Gate {
    /// The turn runs as usual (the model answers).
    Run,
    /// The message is stored and answered with a fixed notice; no model call. `wait_ms`:
    /// the conversation starts waiting for a person, for that long.
    Notice {
        site: Box<Site>,
        input: TurnInput,
        notice: Notice,
        hours: Option<Vec<OfficeHours>>,
        wait_ms: Option<u64>,
    },
    /// Refused before anything is stored (a regenerate while a person holds the
    /// conversation: 409 `held_by_person`).
    Refused(Error),
    /// A person holds the conversation: the message is stored and published; nobody
    /// answers it.
    Held {
        site: Box<Site>,
        input: TurnInput,
        agent: Option<String>,
    },
}

/// A console operation on a conversation's handoff (`POST https://object/handoff`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub(crate) enum HandoffOp {
    /// A person takes the conversation over.
    Take { agent: String },
    /// The person hands it back to the assistant (or dismisses a request).
    Release,
    /// A person's reply.
    Reply { content: String },
}

/// The conversation's handoff as the object keeps it.
async fn load(obj: &ObjectCtx<'_>) -> HandoffRecord {
    let stored = obj.state.storage().get::<String>(KEY_HANDOFF).await;
    stored
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Keeps `record` (the object's storage, then D1 for the console) and publishes it.
///
/// A change is decided from [`load`] and kept with only storage operations between the
/// two, so no other event of the object runs in between (its input gate); D1 and the
/// live event follow.
async fn save(obj: &ObjectCtx<'_>, record: &HandoffRecord) -> Result<(), ApiError> {
    let text = serde_json::to_string(record).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    obj.state.storage().put(KEY_HANDOFF, text).await?;
    let scope = Scope::new(obj.site_id, obj.conversation_id);
    d1_handoff::save(&obj.env.d1("DB")?, scope, record).await?;
    obj.publish(LiveEvent::Handoff(state_json(record)));
    Ok(())
}

/// A handoff as the API shows it: `{"state", "since"?, "requested_at"?, "agent"?}`.
pub(crate) fn state_json(record: &HandoffRecord) -> serde_json::Value {
    serde_json::to_value(record).unwrap_or_default()
}

/// Before a turn's model step: what the object does with the visitor's message.
pub(crate) async fn gate(obj: &ObjectCtx<'_>, site: &Site, input: &TurnInput) -> Gate {
    let record = load(obj).await;
    if record.state == HandoffState::Held {
        return Gate::Held {
            site: Box::new(site.clone()),
            input: input.clone(),
            agent: record.agent,
        };
    }
    let Some(settings) = site.config.handoff.as_ref().filter(|h| h.enabled) else {
        return Gate::Run;
    };
    if !asks_for_person(&input.text) {
        return Gate::Run;
    }
    let (notice, wait_ms) = if record.state == HandoffState::Waiting {
        (Notice::StillWaiting, None)
    } else if settings.open_at(obj.now_ms()) {
        (
            Notice::Waiting,
            Some(u64::from(settings.wait_seconds) * 1000),
        )
    } else {
        (Notice::OutsideHours, None)
    };
    Gate::Notice {
        site: Box::new(site.clone()),
        input: input.clone(),
        notice,
        hours: settings.office_hours.clone(),
        wait_ms,
    }
}

/// Whether [`gate`] keeps the message from the model (a `Prefer: respond-async` post is
/// then answered at once instead of queued).
pub(crate) async fn intercepts(obj: &ObjectCtx<'_>, site: &Site, input: &TurnInput) -> bool {
    !matches!(gate(obj, site, input).await, Gate::Run)
}

/// Before a regenerate: refused while a person holds the conversation.
pub(crate) async fn gate_regenerate(obj: &ObjectCtx<'_>) -> Gate {
    if load(obj).await.state == HandoffState::Held {
        Gate::Refused(Error::HeldByPerson)
    } else {
        Gate::Run
    }
}

/// A turn the gate did not let through: its events into `sink`, as the engine would.
pub(crate) async fn answer(
    obj: &ObjectCtx<'_>,
    gate: Gate,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let (site, input) = match &gate {
        Gate::Run => return Err(Error::ConversationNotFound),
        Gate::Refused(error) => return Err(error.clone()),
        Gate::Notice { site, input, .. } | Gate::Held { site, input, .. } => (site, input),
    };
    let (assistant, services) =
        turn_context(obj.env, site).map_err(|_| Error::ConversationNotFound)?;
    let received = engine::receive_unscreened(&services, &assistant, input).await?;
    let (start, reply_id) = match received {
        Received::Pending(pending) => (pending.start, pending.reply_id),
        // A repeat (same idempotency key) of a message already answered: the same answer.
        Received::Answered { start, reply } => return Ok(replay(start, reply, sink)),
        Received::Refused { .. } => return Err(Error::ConversationNotFound),
    };
    let conversation = &start.conversation;
    let first = !start.history.iter().any(|m| m.role == Role::User);
    let language = language::for_message(&start.message.content, conversation.language, first);
    let scope = Scope::new(&conversation.site_id, &conversation.id);
    let started = Started {
        conversation_id: conversation.id.clone(),
        user_message_id: start.message.id.clone(),
        reply_id: reply_id.clone(),
    };
    started.announce(sink);
    let now = obj.now_ms();
    match gate {
        Gate::Notice {
            notice,
            hours,
            wait_ms,
            ..
        } => {
            use concierge_core::boundary::ConversationStore;
            if language != conversation.language {
                let _ = services.store.set_language(scope, language).await;
            }
            let text = notice.text(language, hours.as_deref());
            sink.emit(TurnEvent::Chunk { text: text.clone() });
            let mut metadata = Metadata::new();
            metadata.insert("handoff".into(), notice.key().into());
            let mut reply = StoredMessage {
                id: reply_id.clone(),
                seq: 0,
                role: Role::Assistant,
                kind: MessageKind::Handoff,
                content: text,
                metadata,
                created_at: now,
                tool_steps: Vec::new(),
                payloads: Vec::new(),
            };
            let stored = services
                .store
                .append_reply(scope, &start.message.id, &reply)
                .await
                .map_err(Error::Store);
            reply.seq = match stored {
                Ok(seq) => seq,
                Err(error) => {
                    sink.emit(TurnEvent::Failed {
                        code: error.code(),
                        message: error.public_message(),
                    });
                    return Err(error);
                }
            };
            if let Some(wait_ms) = wait_ms {
                start_waiting(obj, now, wait_ms).await;
            }
            sink.emit(TurnEvent::Completed {
                message_id: reply.id.clone(),
                kind: MessageKind::Handoff,
                intent: None,
                confidence: None,
                usage: None,
                reply: None,
            });
            Ok(outcome(start.message.id, reply, language))
        }
        Gate::Held { agent, .. } => {
            // Nobody answers: the message is the person's to read (the object publishes
            // every visitor's message live as its turn starts).
            let handoff = HandoffRecord {
                state: HandoffState::Held,
                agent,
                ..HandoffRecord::default()
            };
            sink.emit(TurnEvent::Completed {
                message_id: reply_id.clone(),
                kind: MessageKind::Handoff,
                intent: None,
                confidence: None,
                usage: None,
                reply: Some(ReplyEnvelope {
                    kind: "held",
                    data: serde_json::json!({"kind": "held", "handoff": state_json(&handoff)}),
                }),
            });
            let placeholder = StoredMessage {
                id: reply_id,
                seq: 0,
                role: Role::Assistant,
                kind: MessageKind::Handoff,
                content: String::new(),
                metadata: Metadata::new(),
                created_at: now,
                tool_steps: Vec::new(),
                payloads: Vec::new(),
            };
            Ok(outcome(start.message.id, placeholder, language))
        }
        Gate::Run | Gate::Refused(_) => Err(Error::ConversationNotFound),
    }
}

/// The conversation starts waiting for a person: recorded, published, and the alarm set
/// for the end of the wait (best effort: a failure is logged, the notice stands).
async fn start_waiting(obj: &ObjectCtx<'_>, now: u64, wait_ms: u64) {
    // Taken (or asked for) since the gate looked: that stands.
    if load(obj).await.state != HandoffState::None {
        return;
    }
    let record = HandoffRecord {
        state: HandoffState::Waiting,
        requested_at: Some(now),
        since: Some(now),
        agent: None,
    };
    let storage = obj.state.storage();
    let alarm = async {
        storage
            .put(KEY_WAIT_UNTIL, (now + wait_ms).to_string())
            .await?;
        storage
            .set_alarm(std::time::Duration::from_millis(wait_ms))
            .await
    }
    .await
    .map_err(ApiError::from);
    if let Err(error) = save(obj, &record).await.and(alarm) {
        log(obj, "handoff not recorded", &error);
    }
}

/// A stored turn answered again: its reply, as it was sent.
fn replay(
    start: concierge_core::boundary::TurnStart,
    reply: StoredMessage,
    sink: &mut dyn TurnSink,
) -> TurnOutcome {
    Started {
        conversation_id: start.conversation.id.clone(),
        user_message_id: start.message.id.clone(),
        reply_id: reply.id.clone(),
    }
    .announce(sink);
    sink.emit(TurnEvent::Chunk {
        text: reply.content.clone(),
    });
    sink.emit(TurnEvent::Completed {
        message_id: reply.id.clone(),
        kind: reply.kind,
        intent: None,
        confidence: None,
        usage: None,
        reply: None,
    });
    outcome(start.message.id, reply, start.conversation.language)
}

fn outcome(user_message_id: String, reply: StoredMessage, language: Language) -> TurnOutcome {
    TurnOutcome {
        user_message_id,
        reply,
        intent: None,
        confidence: None,
        language,
        route: vec!["handoff"],
        usage: None,
    }
}

/// The object's alarm fired: still waiting → nobody is free; the assistant carries on.
pub(crate) async fn alarm(obj: &ObjectCtx<'_>) {
    let record = load(obj).await;
    if record.state != HandoffState::Waiting {
        return;
    }
    // An alarm set for something else, before the wait is over: wait on.
    let storage = obj.state.storage();
    let until = storage.get::<String>(KEY_WAIT_UNTIL).await.ok().flatten();
    let until = until.and_then(|until| until.parse::<u64>().ok());
    if let Some(left) = until.and_then(|until| until.checked_sub(obj.now_ms()))
        && left > 1_000
    {
        let _ = storage
            .set_alarm(std::time::Duration::from_millis(left))
            .await;
        return;
    }
    if let Err(error) = time_out(obj).await {
        log(obj, "handoff timeout not recorded", &error);
    }
}

async fn time_out(obj: &ObjectCtx<'_>) -> Result<(), ApiError> {
    use concierge_core::boundary::ConversationStore;
    let now = obj.now_ms();
    // The state first (decided and kept before anything else runs), then the notice.
    save(obj, &none_since(now)).await?;
    let store = D1Store::new(obj.env.d1("DB")?);
    let scope = Scope::new(obj.site_id, obj.conversation_id);
    let conversation = store
        .load_conversation(scope)
        .await
        .map_err(ApiError::store)?
        .ok_or(ApiError::NotFound)?;
    let mut metadata = Metadata::new();
    metadata.insert("handoff".into(), Notice::Timeout.key().into());
    let mut message = StoredMessage {
        id: new_id(),
        seq: 0,
        role: Role::Assistant,
        kind: MessageKind::Handoff,
        content: Notice::Timeout.text(conversation.language, None),
        metadata,
        created_at: now,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    };
    message.seq = store
        .append_message(scope, &message)
        .await
        .map_err(ApiError::store)?;
    obj.publish(LiveEvent::Message(message_json(&message)));
    Ok(())
}

/// State `none` from `now`.
fn none_since(now: u64) -> HandoffRecord {
    HandoffRecord {
        state: HandoffState::None,
        requested_at: None,
        since: Some(now),
        agent: None,
    }
}

fn new_id() -> String {
    use concierge_core::boundary::Ids;
    crate::bindings::services::RandomIds.new_id()
}

/// `POST https://object/handoff`: a console operation.
pub(crate) async fn handle(obj: &ObjectCtx<'_>, op: HandoffOp) -> Result<Response, ApiError> {
    let record = load(obj).await;
    let now = obj.now_ms();
    match op {
        HandoffOp::Take { agent } => {
            if record.state == HandoffState::Held && record.agent.as_deref() != Some(&agent) {
                return Err(ApiError::Conflict(
                    "Another person holds this conversation; they must release it first.",
                ));
            }
            let held = HandoffRecord {
                state: HandoffState::Held,
                requested_at: record.requested_at,
                since: Some(now),
                agent: Some(agent),
            };
            // No timeout for a conversation a person holds.
            obj.state.storage().delete_alarm().await?;
            save(obj, &held).await?;
            respond(obj, &held, None, 200)
        }
        HandoffOp::Release => {
            if record.state == HandoffState::None {
                return Err(ApiError::Conflict(
                    "This conversation is not waiting for or held by a person.",
                ));
            }
            obj.state.storage().delete_alarm().await?;
            let released = none_since(now);
            save(obj, &released).await?;
            respond(obj, &released, None, 200)
        }
        HandoffOp::Reply { content } => {
            use concierge_core::boundary::ConversationStore;
            let (HandoffState::Held, Some(agent)) = (record.state, record.agent.clone()) else {
                return Err(ApiError::Conflict(
                    "Take this conversation over before replying as a person.",
                ));
            };
            let store = D1Store::new(obj.env.d1("DB")?);
            let scope = Scope::new(obj.site_id, obj.conversation_id);
            let mut metadata = Metadata::new();
            metadata.insert("author".into(), serde_json::json!({"name": agent}));
            let mut message = StoredMessage {
                id: new_id(),
                seq: 0,
                role: Role::Assistant,
                kind: MessageKind::Human,
                content,
                metadata,
                created_at: now,
                tool_steps: Vec::new(),
                payloads: Vec::new(),
            };
            message.seq = store
                .append_message(scope, &message)
                .await
                .map_err(ApiError::store)?;
            embed(obj, &message).await;
            let json = message_json(&message);
            obj.publish(LiveEvent::Message(json.clone()));
            respond(obj, &record, Some(json), 201)
        }
    }
}

/// Queues a stored message's embedding, as the engine does for its own (best effort:
/// a failure is logged; the message is stored).
async fn embed(obj: &ObjectCtx<'_>, message: &StoredMessage) {
    if embedding_policy(message) != EmbeddingStatus::Pending {
        return;
    }
    let job = EmbedJob {
        site_id: obj.site_id.into(),
        conversation_id: obj.conversation_id.into(),
        message_id: message.id.clone(),
        text: message.content.clone(),
    };
    let sent = queue::send(
        obj.env,
        vec![QueueMessage::first(IndexJob::Message(job))],
        0,
    )
    .await;
    if let Err(error) = sent {
        log(obj, "embed enqueue failed", &ApiError::Internal(error));
    }
}

/// `{"conversation_id", "handoff": {…}, "message"?}` with `status`.
fn respond(
    obj: &ObjectCtx<'_>,
    record: &HandoffRecord,
    message: Option<serde_json::Value>,
    status: u16,
) -> Result<Response, ApiError> {
    let mut body = serde_json::json!({
        "conversation_id": obj.conversation_id,
        "handoff": state_json(record),
    });
    if let Some(message) = message {
        body["message"] = message;
    }
    Ok(Response::from_json(&body)?.with_status(status))
}

fn log(obj: &ObjectCtx<'_>, msg: &str, error: &ApiError) {
    let line = serde_json::json!({"level": "error", "msg": msg, "site": obj.site_id,
        "conversation_id": obj.conversation_id, "detail": format!("{error:?}")});
    worker::console_error!("{line}");
}
