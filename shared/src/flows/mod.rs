//! The assistant templates — the core's registry of them (with [`Template`](crate::template::Template)).
//!
//! A template is a folder here: its settings (`<T>Config`, and the site settings it is
//! made from where it has its own), its steps, its prompts, and its own dependencies
//! (`<T>Deps`, generic over the boundary traits it needs: warranty records, SQL, web
//! search, a cache, data sets, logs…). `<T>Assistant { config, deps }` is the
//! [`Assistant`](crate::engine::Assistant) the engine's turn lifecycle runs; the engine's
//! [`Platform`](crate::engine::Platform) carries only what the engine itself uses.
//!
//! - [`shop`] — the store assistant (seed 000), a [`Graph`](crate::graph::Graph) (named
//!   nodes; plain and conditional edges; `END`) run by a [`Flow`](crate::graph::Flow):
//!   `classify` → (`clarify_stream` | `warranty_stream` | `retrieve` → `respond_stream`) →
//!   `END`; depends on the site's warranty records.
//! - [`analyst`] — business data questions (seed 001): `intent_classifier` → one of
//!   `chat_node`, `data_agent_node` (a ReAct tool loop, [`run_react`](crate::agent::run_react),
//!   at most three tool errors) or `clarify_node` → `response_formatter`; depends on the
//!   merchant's data sets.
//! - `rental` — the rental marketplace assistant (seed 002, feature `rental`):
//!   `orchestrator` → `sql_generation` (validated SQL, retried with the error fed back) →
//!   `response_generator` → `result_validator`; or `content_response` / `control_response`;
//!   depends on read-only SQL and the site's roles and learned Q&A.
//! - `knowledge` — the internal-knowledge assistant (seed 003, feature `knowledge`):
//!   `orchestrator` → `reflection_router` (the plan) → `agent_execution` (stages of
//!   concurrent tasks, [`run_stage`](crate::agent::run_stage)) → `conflict_resolution` →
//!   `final_response`; partial failures are results, not errors; depends on a cache and
//!   the site's knowledge base (logs, version).
//! - [`guarded`] — a domain-restricted advisor with a guardrail (seed 004): `guardrail`
//!   (refused: nothing stored) → `memory_load` (recent window and
//!   [`Summary`](crate::conversation::Summary)) → `search` → `build_prompt` → `generate`
//!   (streamed) → `format` → `save` (and the summary update); depends on web search.
//!
//! Only `shop` uses [`graph`](crate::graph); the other four are plain async steps with the
//! same names.
//!
//! ## Running the `shop` template
//! ```
//! # #[cfg(feature = "memory")] {
//! use concierge_core::engine::{self, NewConversation};
//! use concierge_core::flows::shop::{ShopAssistant, ShopConfig};
//! use concierge_core::graph::block_on;
//! use concierge_core::memory::MemoryBackend;
//! use concierge_core::turn::{TurnEvent, TurnInput};
//!
//! let backend = MemoryBackend::demo("site-1");
//! // The template holds its settings and its own dependencies (here the warranty records);
//! // the engine's platform holds the rest.
//! let shop = ShopAssistant::new(ShopConfig::default(), &backend.warranty);
//! let new = NewConversation { site_id: "site-1".into(), ..Default::default() };
//! let created = block_on(engine::create_conversation(&backend, &shop, new)).unwrap();
//!
//! let input = TurnInput {
//!     site_id: "site-1".into(),
//!     conversation_id: created.conversation.id.clone(),
//!     text: "Kiểm tra bảo hành serial 0979825281".into(),
//!     idempotency_key: None,
//! };
//! let mut events: Vec<TurnEvent> = Vec::new();
//! block_on(engine::run_turn(&backend, &shop, &input, &mut events)).unwrap();
//! assert!(matches!(&events[1], TurnEvent::Chunk { text } if text.contains("S23 Ultra")));
//! # }
//! ```

pub mod analyst;
pub mod guarded;
#[cfg(feature = "knowledge")]
pub mod knowledge;
#[cfg(feature = "rental")]
pub mod rental;
pub mod shop;
