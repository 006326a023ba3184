//! What a knowledge answer is made of, shared by the planned turn and its fallbacks: the
//! route a planned turn visits, the cached form of an answer, and the engine's answer.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{Metadata, StoredMessage};
use crate::engine::Answer;

/// The graph nodes a planned turn visits.
pub(super) const ROUTE: [&str; 5] = [
    "orchestrator",
    "reflection_router",
    "agent_execution",
    "conflict_resolution",
    "final_response",
];

/// An answer kept in the answer cache.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct CachedAnswer {
    pub(super) answer: String,
    pub(super) output: Value,
    pub(super) metadata: Metadata,
}

/// The engine's answer for a knowledge reply (no intent, no usage).
pub(super) fn answered(
    reply: StoredMessage,
    confidence: Option<f64>,
    route: Vec<&'static str>,
) -> Answer {
    Answer {
        reply,
        intent: None,
        confidence: confidence.map(|c| c as f32),
        usage: None,
        route,
    }
}
