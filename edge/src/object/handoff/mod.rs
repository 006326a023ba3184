//! Human handoff inside the conversation's object (issue 28): the hooks the object calls.
//!
//! The object keeps the conversation's handoff ([`HandoffRecord`]: `none` | `waiting` |
//! `held`, when it was asked for, by whom it is held) in its own storage, and in its
//! record's `conversations` row (`bindings::d1_handoff`), sent on to the site's object
//! whenever it changes, for the console's list.
//!
//! - [`gate`], before a turn's model step: a message while a person holds the conversation
//!   is stored and published, and nobody answers it ([`Gate::Held`]); with handoff on, a
//!   request for a person ([`asks_for_person`]) is stored and answered with a fixed notice
//!   instead of the model ([`Gate::Notice`]) — within office hours "a person will answer
//!   here" (state `waiting`, an alarm at now + the site's wait), outside them "nobody can
//!   answer now (hours); the assistant carries on" (state unchanged). Anything else runs.
//! - [`alarm()`]: still `waiting` when the wait is over → "nobody is free; the assistant
//!   carries on", state `none`.
//! - [`handle`]: the console's take / release / a person's reply.
//!
//! Every change is published live: `handoff` `{"state", "since"?, "requested_at"?,
//! "agent"?}` and, for a message stored outside a turn, `message` (as the history shows
//! it, with `author` `{"name"}` on a person's reply). The wait beginning, a person taking
//! over and handing back also leave a line in the log ([`note`]: kind `handoff`, metadata
//! `handoff` `requested` | `joined` (with `agent`) | `released`), so a reloaded panel, the
//! console and the export show them where they happened.
//!
//! Split by responsibility: this module keeps the state (load / save) and the gate;
//! [`answer()`] (`answer.rs`) answers a turn the gate kept from the model, [`alarm()`]
//! (`alarm.rs`) ends a wait nobody took, and [`handle`] (`console.rs`) runs the console's
//! operations.

use concierge_core::conversation::{Language, MessageKind, Metadata, Role, Scope, StoredMessage};
use concierge_core::error::Error;
use concierge_core::handoff::{HandoffState, Notice, OfficeHours, Register, asks_for_person};
use concierge_core::turn::TurnInput;

use super::{LiveEvent, ObjectCtx};
use crate::bindings::d1_handoff::{self, HandoffRecord};
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;
use crate::http::message::message_json;
use crate::site::Site;

mod alarm;
mod answer;
mod console;

pub(crate) use alarm::alarm;
pub(crate) use answer::answer;
pub(crate) use console::{HandoffOp, handle};

/// The object's storage key of its [`HandoffRecord`].
pub(super) const KEY_HANDOFF: &str = "handoff";
/// The object's storage key of the end of the current wait for a person (Unix ms).
const KEY_WAIT_UNTIL: &str = "handoff_wait_until";
/// Whether the wait's timeout notice speaks as "em" to "quý khách" (`Register::Polite`).
const KEY_POLITE: &str = "handoff_polite";

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

/// The conversation's handoff as the object keeps it: read from storage when the instance
/// starts (`Inner::load`), then from memory ([`save`] keeps both).
async fn load(obj: &ObjectCtx<'_>) -> HandoffRecord {
    if let Some(record) = obj.inner.handoff.borrow().clone() {
        return record;
    }
    let stored = obj.state.storage().get::<String>(KEY_HANDOFF).await;
    let record: HandoffRecord = stored
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    // Kept unless a change was recorded meanwhile.
    obj.inner
        .handoff
        .borrow_mut()
        .get_or_insert_with(|| record.clone())
        .clone()
}

/// The conversation's handoff as the API shows it (what a client attaching to the live
/// stream is sent first).
pub(crate) async fn current(obj: &ObjectCtx<'_>) -> serde_json::Value {
    state_json(&load(obj).await)
}

/// Keeps `record` (the object's storage, then its record, sent on to the site's object for
/// the console) and publishes it.
///
/// A change is decided from [`load`] and kept with only storage operations between the
/// two, so no other event of the object runs in between (its input gate); the record and
/// the live event follow.
async fn save(obj: &ObjectCtx<'_>, record: &HandoffRecord) -> Result<(), ApiError> {
    let text = serde_json::to_string(record).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    obj.state.storage().put(KEY_HANDOFF, text).await?;
    *obj.inner.handoff.borrow_mut() = Some(record.clone());
    let scope = Scope::new(obj.site_id, obj.conversation_id);
    // In the conversation's record, then in the site's copy (the console's list) before the
    // change is told.
    let store = crate::bindings::d1_store::D1Store::new(obj.env)?;
    d1_handoff::save(store.db(), scope, record).await?;
    store.settled().await;
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

/// Whether a person holds the conversation (a background turn's job then leaves its
/// message to them).
pub(crate) async fn held(obj: &ObjectCtx<'_>) -> bool {
    load(obj).await.state == HandoffState::Held
}

/// Before a regenerate: refused while a person holds the conversation.
pub(crate) async fn gate_regenerate(obj: &ObjectCtx<'_>) -> Gate {
    if load(obj).await.state == HandoffState::Held {
        Gate::Refused(Error::HeldByPerson)
    } else {
        Gate::Run
    }
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

/// Stores a message from outside a turn (a handoff notice, a person's reply) as the
/// conversation's next assistant message (kind `kind`, created at `now`), then publishes it
/// to the attached clients (`message`, as the history shows it): the stored message.
async fn store_and_publish(
    obj: &ObjectCtx<'_>,
    store: &D1Store,
    kind: MessageKind,
    content: String,
    metadata: Metadata,
    now: u64,
) -> Result<StoredMessage, ApiError> {
    use concierge_core::boundary::ConversationStore;
    let mut message = StoredMessage {
        id: new_id(),
        seq: 0,
        role: Role::Assistant,
        kind,
        content,
        metadata,
        created_at: now,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    };
    let scope = Scope::new(obj.site_id, obj.conversation_id);
    message.seq = store
        .append_message(scope, &message)
        .await
        .map_err(ApiError::store)?;
    obj.publish(LiveEvent::Message(message_json(&message)));
    Ok(message)
}

/// Leaves the line a handoff change writes in the conversation's log ([`Notice::is_state`]:
/// the wait began, `agent` joined, the assistant is back): stored as a message of kind
/// `handoff` (metadata `{"handoff": <key>, "agent"?}`, the sentence in the conversation's
/// `language`, read from D1 when not given) and published, so history shows what the live
/// panel showed. Best effort: a failure is logged; the change stands.
async fn note(
    obj: &ObjectCtx<'_>,
    notice: Notice,
    agent: Option<&str>,
    language: Option<Language>,
    now: u64,
) {
    let noted = async {
        use concierge_core::boundary::ConversationStore;
        let store = D1Store::new(obj.env)?;
        let language = match language {
            Some(language) => language,
            None => {
                let scope = Scope::new(obj.site_id, obj.conversation_id);
                store
                    .load_conversation(scope)
                    .await
                    .map_err(ApiError::store)?
                    .ok_or(ApiError::NotFound)?
                    .language
            }
        };
        let mut metadata = Metadata::new();
        metadata.insert("handoff".into(), notice.key().into());
        let content = match agent {
            Some(agent) => {
                metadata.insert("agent".into(), agent.into());
                Notice::joined(language, agent)
            }
            None => notice.text(language, Register::Friendly, None),
        };
        store_and_publish(obj, &store, MessageKind::Handoff, content, metadata, now).await
    }
    .await;
    if let Err(error) = noted {
        log(obj, "handoff notice not stored", &error);
    }
}

fn new_id() -> String {
    use concierge_core::boundary::Ids;
    crate::bindings::services::RandomIds.new_id()
}

fn log(obj: &ObjectCtx<'_>, msg: &str, error: &ApiError) {
    let line = serde_json::json!({"level": "error", "msg": msg, "site": obj.site_id,
        "conversation_id": obj.conversation_id, "detail": format!("{error:?}")});
    worker::console_error!("{line}");
}
