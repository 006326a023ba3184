//! # concierge-core
//!
//! The agent core of Concierge, an embeddable AI assistant for websites.
//!
//! This crate performs no I/O. It holds the domain types every other crate speaks: the
//! chat model's streamed events ([`chat`]), the conversation model ([`conversation`]), the
//! boundary traits through which the engine reaches the world ([`boundary`]), the agent
//! graph ([`graph`]), the assistant templates ([`flows`]), intent classification
//! ([`intent`]), prompt material ([`prompt`]), retrieval ([`retrieval`]), the
//! streaming-protocol codecs ([`stream`]), the MCP server's protocol decisions
//! ([`mcp`]) and the OpenAI-compatible API's requests and answers ([`openai_api`]). The Worker (`edge`) implements the boundaries
//! over fetch/D1/KV/Vectorize/Queues; tests use the in-memory ones (module `memory`,
//! feature `memory`).
//!
//! ## Features
//! - `std` (default): `std::error::Error` impls and std conveniences. Without it the
//!   crate is `no_std` + `alloc` and builds for `wasm32-unknown-unknown`.
//! - `memory`: in-memory implementations of the boundary traits.
//!
//! ## Native tools (`shared/examples/`)
//! - `classify`: one message per line on stdin → one JSON classification per line (intent,
//!   confidence, retrieval hint, clarifying question, language, serial), for tuning
//!   `prompts/shop_intent_keywords.md`.
//! - `chat`: the `shop` template in a terminal against an OpenAI-compatible endpoint (e.g.
//!   `scripts/llm-server.sh`), with in-memory stores.
//!
//! ## Running the `shop` template
//! ```
//! # #[cfg(feature = "memory")] {
//! use concierge_core::engine::{self, NewConversation};
//! use concierge_core::flows::shop::ShopConfig;
//! use concierge_core::graph::block_on;
//! use concierge_core::memory::MemoryBackend;
//! use concierge_core::turn::{TurnEvent, TurnInput};
//!
//! let backend = MemoryBackend::demo("site-1");
//! let config = ShopConfig::default();
//! let new = NewConversation { site_id: "site-1".into(), ..Default::default() };
//! let created = block_on(engine::create_conversation(&backend, &config, new)).unwrap();
//!
//! let input = TurnInput {
//!     site_id: "site-1".into(),
//!     conversation_id: created.conversation.id.clone(),
//!     text: "Kiểm tra bảo hành serial 0979825281".into(),
//!     idempotency_key: None,
//! };
//! let mut events: Vec<TurnEvent> = Vec::new();
//! block_on(engine::run_turn(&backend, &config, &input, &mut events)).unwrap();
//! assert!(matches!(&events[1], TurnEvent::Chunk { text } if text.contains("S23 Ultra")));
//! # }
//! ```
//!
//! ## Design note: one engine, five templates
//!
//! A template is a [`graph::Graph`] (named nodes; plain and conditional edges; `END`) plus a
//! [`graph::Flow`] that runs each node against a state. The state is rebuilt from the store
//! at the start of every turn; a node's lasting effects go through the boundaries. Early
//! exits are conditional edges to nodes that lead to `END`; loops are edges back to an
//! earlier node, whose router reads counters kept in the state, bounded by
//! [`graph::Graph::step_limit`]; concurrency inside a node uses [`graph::join_all`].
//!
//! - **000 `shop`** (implemented, [`flows::shop`]): greeting at creation (node 0),
//!   `receive` (node 1) in the turn runner, then `classify` →
//!   (`clarify_stream` | `warranty_stream` | `retrieve` → `respond_stream`) → `END`.
//! - **001 `analyst`** — a ReAct tool loop with a retry cap: `intent_classifier` →
//!   branch(`chat_node` | `data_agent_node` | `clarify_node`) → `response_formatter` →
//!   `END`. The data agent is itself a graph: `agent` → branch(tool calls → `tools` →
//!   back to `agent`; no calls or `tool_errors ≥ 3` → out). Tools are
//!   [`chat::ToolSpec`]s; the model's [`chat::ChatEvent::ToolCall`]s are run and fed back as
//!   [`chat::ChatMessage::tool_result`]s.
//! - **002 `rental`** — sequential agents with retries and a validator: `orchestrator` →
//!   branch(QUERY ∧ readyForSql → `sql_generation`; CLARIFICATION → `clarify`; GREETING /
//!   GENERAL_CHAT → `chat`). `sql_generation` loops on itself while execution fails and
//!   `attempts < 5` (the error fed back), then → `response_generator` →
//!   `result_validator` → branch(valid → `persist_knowledge` → `END`; else `END`).
//! - **003 `knowledge`** — planned stages run concurrently and merged: `orchestrator` →
//!   branch(chitchat → `END`; else `semantic_router`, which writes the plan into the state)
//!   → `execute_stage` (runs the current stage's tasks with [`agent::run_stage`], merges
//!   results, advances the stage index) → branch(more stages → `execute_stage`; else
//!   `conflict_resolution`) → `final_response` → `END`. Partial failures are results, not
//!   errors.
//! - **004 `guarded`** — guard first, early exit, summary memory: `detect_language` →
//!   `guardrail` → branch(rejected → `refuse` → `END`, nothing stored; passed →
//!   `load_memory` (recent window + [`conversation::Summary`] from the store) → `search` →
//!   `respond_stream` → `save_and_summarize` (appends the answer, updates the summary) →
//!   `END`).
//!
//! `tests/graph_shapes.rs` builds each of these shapes with toy nodes.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod agent;
pub mod boundary;
pub mod chat;
pub mod conversation;
pub mod engine;
pub mod error;
pub mod flows;
pub mod graph;
pub mod identity;
pub mod intent;
pub mod language;
pub mod mcp;
#[cfg(feature = "memory")]
pub mod memory;
pub mod normalize;
pub mod openai_api;
pub mod outbound;
pub mod payload;
pub mod prompt;
pub mod retrieval;
/// Streaming-protocol codecs: SSE, OpenAI chunks, Ollama NDJSON, Concierge's own streams.
pub mod stream;
pub mod template;
pub mod turn;

/// The crate version, as built.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
