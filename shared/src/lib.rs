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
//! - `rental`, `knowledge`: those two templates (the Worker enables them; the widget, which
//!   links this crate for its stream decoder, leaves them out).
//! - `analyst-regex`: `$regex` in `analyst` pipelines (a linear-time engine).
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
//! use concierge_core::flows::shop::{ShopAssistant, ShopConfig};
//! use concierge_core::graph::block_on;
//! use concierge_core::memory::MemoryBackend;
//! use concierge_core::turn::{TurnEvent, TurnInput};
//!
//! let backend = MemoryBackend::demo("site-1");
//! // The template holds its settings and its own dependencies (here the warranty records);
//! // the engine's platform holds the rest.
//! let config = ShopAssistant::new(ShopConfig::default(), &backend.warranty);
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
//! Every template runs the same turn lifecycle ([`engine`]): the engine receives and stores
//! the visitor's message, decides the language, asks the template for its answer
//! ([`engine::Assistant::answer`]) and ends the turn with exactly one terminal event. A
//! template's answer is its own steps, named as its seed names them; each answer reports the
//! steps it ran ([`engine::Answer::route`]), which the Worker logs. How each is written:
//!
//! - **000 `shop`** ([`flows::shop`]) is a [`graph::Graph`] (named nodes; plain and
//!   conditional edges; `END`) run by a [`graph::Flow`]: `classify` → (`clarify_stream` |
//!   `warranty_stream` | `retrieve` → `respond_stream`) → `END`.
//! - **001 `analyst`** ([`flows::analyst`]): `intent_classifier` → one of `chat_node`,
//!   `data_agent_node` (a ReAct tool loop, [`agent::run_react`], at most three tool errors)
//!   or `clarify_node` → `response_formatter`.
//! - **002 `rental`** (`flows::rental`, feature `rental`): `orchestrator` → `sql_generation`
//!   (validated SQL, retried with the error fed back) → `response_generator` →
//!   `result_validator`; or `content_response` / `control_response`.
//! - **003 `knowledge`** (`flows::knowledge`, feature `knowledge`): `orchestrator` →
//!   `reflection_router` (the plan) → `agent_execution` (stages of concurrent tasks,
//!   [`agent::run_stage`]) → `conflict_resolution` → `final_response`; partial failures are
//!   results, not errors.
//! - **004 `guarded`** ([`flows::guarded`]): `guardrail` (refused: nothing stored) →
//!   `memory_load` (recent window and [`conversation::Summary`]) → `search` →
//!   `build_prompt` → `generate` (streamed) → `format` → `save` (and the summary update).
//!
//! Only `shop` uses [`graph`]; the other four are plain async steps with the same names.
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
