//! Human handoff inside the conversation's object: the hooks the object calls (owner B
//! replaces this file). This minimal version lets every turn run, does nothing on an
//! alarm, and answers console operations with 501.

use concierge_core::engine::TurnOutcome;
use concierge_core::error::Error;
use concierge_core::turn::{TurnInput, TurnSink};
use serde::{Deserialize, Serialize};
use worker::Response;

use super::ObjectCtx;
use crate::error::ApiError;
use crate::site::Site;

/// What the object does with a visitor's message before the model step.
#[derive(Debug)]
pub(crate) enum Gate {
    /// The turn runs as usual (the model answers).
    Run,
}

/// A console operation on a conversation's handoff (`POST https://object/handoff`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub(crate) enum HandoffOp {
    /// A person takes the conversation over.
    Take { agent: String },
    /// The person hands it back to the assistant.
    Release,
    /// A person's reply.
    Reply { content: String },
}

/// Before a turn's model step: what the object does with the visitor's message.
pub(crate) async fn gate(_obj: &ObjectCtx<'_>, _site: &Site, _input: &TurnInput) -> Gate {
    Gate::Run
}

/// A turn the gate did not let through ([`Gate`] other than [`Gate::Run`]): its events
/// into `sink` (announcing its start with [`concierge_core::turn::Started::announce`]),
/// as the engine would.
pub(crate) async fn answer(
    _obj: &ObjectCtx<'_>,
    gate: Gate,
    _sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    match gate {
        Gate::Run => Err(Error::ConversationNotFound),
    }
}

/// The object's alarm fired.
pub(crate) async fn alarm(_obj: &ObjectCtx<'_>) {}

/// `POST https://object/handoff`: a console operation.
pub(crate) async fn handle(_obj: &ObjectCtx<'_>, _op: HandoffOp) -> Result<Response, ApiError> {
    let body = serde_json::json!({"error": {"code": "not_implemented", "message": "Handoff is not available."}});
    Ok(Response::from_json(&body)?.with_status(501))
}
