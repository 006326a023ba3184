//! A turn the gate kept from the model, answered without it: a fixed notice (and, within
//! office hours, the start of a wait for a person), or, while a person holds the
//! conversation, nobody's answer; a repeated message gets its stored answer again.

use concierge_core::conversation::{Language, MessageKind, Metadata, Role, Scope, StoredMessage};
use concierge_core::engine::{self, Assistant, Received, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::handoff::{HandoffState, Notice, Register};
use concierge_core::language;
use concierge_core::turn::{ReplyEnvelope, Started, TurnEvent, TurnSink};

use super::{Gate, KEY_POLITE, KEY_WAIT_UNTIL, load, log, note, save, state_json};
use crate::bindings::d1_handoff::HandoffRecord;
use crate::error::ApiError;
use crate::object::ObjectCtx;
use crate::templates::turn_context;

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
    // The notices speak as the site's persona does (its Vietnamese greeting says how).
    let register = Register::of(assistant.greeting(Language::Vi));
    // Screened as any visitor's message (`guarded`'s guardrail): what the template refuses
    // is answered with its refusal and never stored, so it reaches no later model request.
    let received = engine::receive(&services, &assistant, input).await?;
    let (start, reply_id) = match received {
        Received::Pending(pending) => (pending.start, pending.reply_id),
        // A repeat (same idempotency key) of a message already answered: the same answer.
        Received::Answered { start, reply } => return Ok(replay(start, reply, sink)),
        Received::Refused {
            user_message_id,
            mut reply,
            language,
        } => {
            // A request for a person stands even when the screen refuses the message it
            // came in (a domain guardrail calls "cho tôi gặp nhân viên" off-topic): the
            // message stays out of the history, unstored, and the visitor is told what
            // happens instead of refused — the conversation waits for a person.
            if let Gate::Notice {
                notice,
                hours,
                wait_ms,
                ..
            } = &gate
            {
                reply.content = notice.text(language, register, hours.as_deref());
                reply.kind = MessageKind::Handoff;
                reply.metadata.insert("handoff".into(), notice.key().into());
                if let Some(wait_ms) = *wait_ms {
                    start_waiting(obj, obj.now_ms(), wait_ms, language, register).await;
                }
            }
            return Ok(refused(input, user_message_id, reply, language, sink));
        }
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
            let text = notice.text(language, register, hours.as_deref());
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
                start_waiting(obj, now, wait_ms, language, register).await;
            }
            // Which notice it is (`{"kind": "handoff", "handoff": "outside_hours"}`), as
            // its stored metadata says: the panel offers the form to leave a contact
            // under "nobody can answer now" (issue 45).
            sink.emit(TurnEvent::Completed {
                message_id: reply.id.clone(),
                kind: MessageKind::Handoff,
                intent: None,
                confidence: None,
                usage: None,
                reply: Some(ReplyEnvelope {
                    kind: "handoff",
                    data: serde_json::json!({"kind": "handoff", "handoff": notice.key()}),
                }),
            });
            Ok(outcome(start.message.id, reply, language))
        }
        Gate::Held { agent, .. } => {
            // Nobody answers: the message is the person's to read (the object publishes
            // every visitor's message live as its turn starts).
            // No reply settles this turn: its message reaches the site's copy now (the
            // console's inbox, the history a client reads next).
            services.store.settled().await;
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

/// The conversation starts waiting for a person: recorded, published, the alarm set for
/// the end of the wait (with the `register` its notice will speak in), and the line
/// "waiting for a person" left in the log, in `language` (best effort: a failure is
/// logged, the notice stands).
async fn start_waiting(
    obj: &ObjectCtx<'_>,
    now: u64,
    wait_ms: u64,
    language: Language,
    register: Register,
) {
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
            .put(KEY_POLITE, register == Register::Polite)
            .await?;
        storage
            .set_alarm(std::time::Duration::from_millis(wait_ms))
            .await
    }
    .await
    .map_err(ApiError::from);
    if let Err(error) = save(obj, &record).await.and(alarm) {
        log(obj, "handoff not recorded", &error);
        return;
    }
    note(obj, Notice::Requested, None, Some(language), now).await;
}

/// A message the template refused: its refusal, as the engine answers one (neither is
/// stored).
fn refused(
    input: &concierge_core::turn::TurnInput,
    user_message_id: String,
    reply: StoredMessage,
    language: Language,
    sink: &mut dyn TurnSink,
) -> TurnOutcome {
    Started {
        conversation_id: input.conversation_id.clone(),
        user_message_id: user_message_id.clone(),
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
    let mut outcome = outcome(user_message_id, reply, language);
    outcome.route = vec!["refuse"];
    outcome
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
