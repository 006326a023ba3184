//! What the object sends besides a turn's own events: the live events from outside a turn
//! ([`LiveEvent`]), and the failure it records for a turn a reset cut short.

use concierge_core::turn::TurnEvent;
use serde::{Deserialize, Serialize};

/// A live event from outside a turn, already stored: the object numbers it, keeps it in
/// its log and sends it to the clients attached to `GET /conversations/{id}/events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub(crate) enum LiveEvent {
    /// `message`: a stored message as the API shows it (`http::message::message_json`,
    /// plus `author` `{"name"}` for a person's reply).
    Message(serde_json::Value),
    /// `handoff`: `{"state": "none"|"waiting"|"held", "since"?, "agent"?}`.
    Handoff(serde_json::Value),
}

impl LiveEvent {
    /// The SSE event name.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Message(_) => "message",
            Self::Handoff(_) => "handoff",
        }
    }

    /// The SSE data.
    pub(crate) fn data(&self) -> &serde_json::Value {
        match self {
            Self::Message(data) | Self::Handoff(data) => data,
        }
    }
}

/// The code of the failure recorded for a turn the object's reset cut short.
pub(crate) const INTERRUPTED_CODE: &str = "turn_interrupted";
/// Its message, safe to show the visitor.
pub(crate) const INTERRUPTED_MESSAGE: &str =
    "The answer was interrupted. Please send your message again.";

/// A turn's failure by interruption, as an event.
pub(crate) fn interrupted() -> TurnEvent {
    TurnEvent::Failed {
        code: INTERRUPTED_CODE,
        message: INTERRUPTED_MESSAGE,
    }
}

/// The interrupted failure as a frame: native (with `id` when known), or the AI SDK's
/// `error` part and end.
pub(crate) fn interrupted_frame(id: Option<u64>, ai_sdk: bool) -> String {
    let mut out = String::new();
    if ai_sdk {
        let part = serde_json::json!({"type": "error", "errorText": INTERRUPTED_MESSAGE});
        out.push_str(&format!("data: {part}\n\ndata: [DONE]\n\n"));
    } else {
        let data = serde_json::json!({"error": {"code": INTERRUPTED_CODE, "message": INTERRUPTED_MESSAGE}});
        match id {
            Some(id) => out.push_str(&format!("event: failed\nid: {id}\ndata: {data}\n\n")),
            None => out.push_str(&format!("event: failed\ndata: {data}\n\n")),
        }
    }
    out
}
