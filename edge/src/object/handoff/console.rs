//! The console's operations on a conversation's handoff (`POST https://object/handoff`):
//! take it over, release it, reply as a person.

use concierge_core::conversation::{
    EmbedJob, EmbeddingStatus, MessageKind, Metadata, StoredMessage, embedding_policy,
};
use concierge_core::handoff::{HandoffState, Notice};
use serde::{Deserialize, Serialize};
use worker::Response;

use super::{load, log, none_since, note, save, state_json, store_and_publish};
use crate::bindings::d1_handoff::HandoffRecord;
use crate::bindings::d1_store::D1Store;
use crate::bindings::queue::{self, IndexJob, QueueMessage};
use crate::error::ApiError;
use crate::http::message::message_json;
use crate::object::ObjectCtx;

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
            if record.state != HandoffState::Held {
                note(obj, Notice::Joined, held.agent.as_deref(), None, now).await;
            }
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
            // A person handing back says so; a request dismissed leaves no line.
            if record.state == HandoffState::Held {
                note(obj, Notice::Released, None, None, now).await;
            }
            respond(obj, &released, None, 200)
        }
        HandoffOp::Reply { content } => {
            let (HandoffState::Held, Some(agent)) = (record.state, record.agent.clone()) else {
                return Err(ApiError::Conflict(
                    "Take this conversation over before replying as a person.",
                ));
            };
            let store = D1Store::new(obj.env)?;
            let mut metadata = Metadata::new();
            metadata.insert("author".into(), serde_json::json!({"name": agent}));
            let kind = MessageKind::Human;
            let message = store_and_publish(obj, &store, kind, content, metadata, now).await?;
            embed(obj, &message).await;
            let json = message_json(&message);
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
