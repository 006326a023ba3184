//! `knowledge` — the internal-knowledge assistant of seed 003 (`003_d72e31476d6888e0.txt`,
//! "Multi-Agent Flow Complete Specification"; TEMPLATES.md §3).
//!
//! ```text
//! orchestrator (Node 1)     code: PermissionCheck (scopes and departments from the verified
//!                           identity only), answer cache, path
//!   ├─ reflection_needed → reflection_router (Node 2): one planning model call, the reply
//!   │                        repaired or re-asked once when it is not a plan (then the
//!   │                        direct plan, `plan_fallback` on the Router entry)
//!   │                        ├─ is_chitchat → the chitchat answer verbatim (its
//!   │                        │                execution_metadata over no plan) → END
//!   │                        └─ plan → agent_execution
//!   └─ direct_execution  → agent_execution (general + rag_tool on the raw query)
//! agent_execution (Node 3)  stages in order; within one, retrieval tasks then summary/math
//!                           tasks, each phase concurrently (engine stages: ≤ 5 in flight,
//!                           30 s per attempt, 3 retries) — progress events throughout
//!   → conflict_resolution (Node 4)  weighted scoring (resolve.rs)
//!   → final_response (Node 5)       the streamed answer + evidence, reasoning, confidence,
//!                                   follow-ups, flow_action, execution_metadata → END
//! a failed task → the seed's error structure with partial_results and a fallback answer
//! ```
//!
//! The visitor sees the answer (or the fallback) as chunks; the plan summary and the final
//! structured output arrive as `payload`s (`plan`, `final`, plus `sources` and `follow_ups`
//! the widget draws) and are stored with the reply, whose metadata carries evidence,
//! confidence, follow-ups, `flow_action`, `execution_metadata` and the `document_ids` the
//! answer drew on. A partial failure still completes the turn (`metadata.partial`).

mod access;
mod answer;
mod config;
mod deps;
mod direct;
mod exec;
mod fallback;
mod math;
mod output;
mod plan;
mod prompt;
mod resolve;
mod respond;
mod run;
mod settings;
mod turn;

pub use access::Access;
pub use config::{
    AgentConfig, AgentTool, CHITCHAT_RESPONSE, ConflictRules, KnowledgeConfig, PermissionConfig,
    RecencyWeights, SENTENCES_EN, SENTENCES_VI, ToolName, WorkflowConfig, seed_agents, sentence,
};
pub use direct::{
    SeedAgent, SeedInput, SeedMessage, SeedStreamEncoder, SeedTool, SeedUserContext, final_output,
};
pub use exec::{TaskFailure, hash_json};
pub use math::{MathError, evaluate, expression_in};
pub use output::{EndSplitter, parse_tail, task_percentage};
pub use plan::{
    Plan, PlanError, PlannedTask, RouterOutput, direct_plan, extract_json, parse_router,
};
pub use prompt::{FINAL_MARKER, MATH_MARKER, RAG_MARKER, ROUTER_MARKER, SUMMARY_MARKER};
pub use resolve::{
    AgentAnswer, EvidenceItem, Resolution, iso_of_ms, parse_iso_ms, resolve, round2,
};

pub use deps::{KnowledgeDeps, KnowledgePorts};
pub use settings::KnowledgeSettings;

use crate::boundary::{KnowledgeBase, KvCache};
use crate::conversation::Language;
use crate::engine::{Answer, Assistant, Platform, Turn, TurnConfig};
use crate::error::Error;

/// The `knowledge` template as the engine runs it: the site's settings and its
/// dependencies.
#[derive(Debug, Clone)]
pub struct KnowledgeAssistant<C, K> {
    /// The site's settings.
    pub config: KnowledgeConfig,
    /// Its dependencies.
    pub deps: KnowledgeDeps<C, K>,
}

impl<C: KvCache, K: KnowledgeBase> KnowledgeAssistant<C, K> {
    /// `config` with `cache` and the knowledge base `base`.
    pub fn new(config: KnowledgeConfig, cache: C, base: K) -> Self {
        Self {
            config,
            deps: KnowledgeDeps { cache, base },
        }
    }
}

impl<C: KvCache, K: KnowledgeBase> Assistant for KnowledgeAssistant<C, K> {
    fn config(&self) -> &TurnConfig {
        &self.config.turn
    }

    fn greeting(&self, _language: Language) -> &str {
        self.config.greeting.as_deref().unwrap_or(CHITCHAT_RESPONSE)
    }

    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        turn::answer(&self.config, &self.deps, platform, turn).await
    }
}
