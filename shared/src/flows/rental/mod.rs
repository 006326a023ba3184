//! `rental` — the room-rental marketplace assistant of seed 002 (`002_ae398708705a9258.txt`):
//! four agents in sequence (TEMPLATES.md §2).
//!
//! ```text
//! receive (Step 1)           the engine's lifecycle stores the question; the session context
//!                            is the Vietnamese system prompt + the last 20 messages after the
//!                            latest 30-minute idle gap
//! orchestrator (Agent 1)     role from code ([GUEST]/[TENANT]/[LANDLORD]), requestType,
//!                            business context (knowledge passages), readyForSql, mode hint
//!   ├─ QUERY ∧ readyForSql   → sql_generation (Agent 2: canonical reuse ≥ 0.92 / hint ≥ 0.8,
//!   │                          else ≤ 5 attempts, each validated and run, errors fed back)
//!   │                          → response_generator (Agent 3: streamed up to `---END`)
//!   │                          → result_validator (Agent 4) → persist Q&A if valid   [DATA]
//!   │                            and context-free (see below)
//!   ├─ CLARIFICATION, or QUERY ∧ ¬readyForSql → control_response                 [CONTROL]
//!   └─ GREETING | GENERAL_CHAT                → content_response                 [CONTENT]
//! ```
//!
//! Where the seed is silent: all five SQL attempts failing is a CONTENT reply with the
//! `sql_failed` sentence and no payload; the payload is built by code from the rows
//! ([`build`]); the model's SQL never reaches the visitor (logs and admin only).
//!
//! Learning (issue 24): a question whose session holds an earlier turn of the visitor is
//! read in its conversation (the SQL model sees the history), and what it yields is never
//! learned — one visitor could otherwise steer the SQL another visitor gets for the same
//! words. A question that starts its session goes to the SQL model alone (no history), and
//! only such SQL is learned, recorded with its question, role and time, and reused for
//! the same site and role only. Merchants list and delete learned queries
//! (`GET /admin/rental/qa`, `DELETE /admin/rental/qa/{id}`, the console).

pub mod agents;
pub mod build;
mod config;
mod data;
mod flow;
pub mod format;
#[cfg(feature = "memory")]
pub mod memory;
pub mod reply;
pub mod schema;
pub mod sql;

pub use config::{
    CANONICAL_HARD, CANONICAL_SOFT, ORCHESTRATOR_PROMPT, RESPONSE_PROMPT, RentalConfig, Role,
    SENTENCES_EN, SENTENCES_VI, SESSION_IDLE_MS, SESSION_MESSAGES, SQL_ATTEMPTS, SQL_PROMPT,
    SYSTEM_PROMPT_VI, VALIDATOR_PROMPT, marker, session_context,
};
pub use data::{QaRecord, RentalData, RentalFuture};
pub use flow::{QA_SOURCE, qa_vector_id};

use crate::boundary::SqlReader;
use crate::conversation::{Language, StoredMessage};
use crate::engine::{Answer, Assistant, Platform, Turn, TurnConfig};
use crate::error::Error;

/// What `rental` needs besides the engine's platform: read-only SQL over the site's
/// listings (validated before it runs) and the site's roles and learned Q&A.
#[derive(Debug, Clone)]
pub struct RentalDeps<Q, D> {
    /// Read-only SQL over the site's data (row-capped).
    pub sql: Q,
    /// The roles merchants uploaded and the learned Q&A.
    pub data: D,
}

/// The `rental` template as the engine runs it: the site's settings and its dependencies.
#[derive(Debug, Clone)]
pub struct RentalAssistant<Q, D> {
    /// The site's settings.
    pub config: RentalConfig,
    /// Its dependencies.
    pub deps: RentalDeps<Q, D>,
}

impl<Q: SqlReader, D: RentalData> RentalAssistant<Q, D> {
    /// `config` over `sql` and `data`.
    pub fn new(config: RentalConfig, sql: Q, data: D) -> Self {
        Self {
            config,
            deps: RentalDeps { sql, data },
        }
    }
}

impl<Q: SqlReader, D: RentalData> Assistant for RentalAssistant<Q, D> {
    fn config(&self) -> &TurnConfig {
        &self.config.turn
    }

    fn greeting(&self, language: Language) -> &str {
        self.config.sentence(language, "greeting")
    }

    fn stored_intent(&self, reply: &StoredMessage) -> (Option<&'static str>, Option<f32>) {
        let intent = match reply.meta_str("request_type") {
            Some("QUERY") => "QUERY",
            Some("GREETING") => "GREETING",
            Some("CLARIFICATION") => "CLARIFICATION",
            Some("GENERAL_CHAT") => "GENERAL_CHAT",
            _ => return (None, None),
        };
        (Some(intent), None)
    }

    fn reply_envelope(&self, reply: &StoredMessage) -> Option<crate::turn::ReplyEnvelope> {
        Some(reply::envelope(reply))
    }

    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        flow::answer(
            &self.config,
            &self.deps.sql,
            Some(&self.deps.data),
            platform,
            turn,
        )
        .await
    }
}
