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
//! ## Design note: one engine, templates as plug-in units
//!
//! Every template runs the same turn lifecycle ([`engine`]): the engine receives and stores
//! the visitor's message, decides the language, asks the template for its answer
//! ([`engine::Assistant::answer`]) and ends the turn with exactly one terminal event. The
//! engine reaches the world through a small [`engine::Platform`] (model, store, retrieval,
//! timer, ids, clock, embedding queue, log); a template is a folder under [`flows`] with its
//! settings, its steps, its prompts and **its own dependencies**, which the template value
//! holds (`<T>Assistant { config, deps }`) — the engine never sees them. A template's
//! answer is its own steps, named as its seed names them; each answer reports the steps it
//! ran ([`engine::Answer::route`]). The templates, how each is written, and a turn run
//! end to end are in [`flows`]; `shared/tests/plugin_template.rs` defines one outside this
//! crate with the public API only.
//!
//! Everything of one template is in its folder, `flows/<t>/`: its settings, steps and
//! prompts, its own boundary ports where no other template shares them (e.g. `rental`'s
//! roles and learned Q&A), their in-memory implementations (feature `memory`), and its own
//! MCP tools. One file names the templates: `flows/mod.rs`, the registry — the
//! [`flows::Template`] enum (re-exported as [`template::Template`]), one `pub mod` per
//! folder, and what the rest of the crate asks of a template by name
//! ([`flows::Template::mcp_tools`]). The engine, the boundaries, the in-memory backend and
//! the MCP protocol name none.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod agent;
pub mod boundary;
pub mod chat;
pub mod client;
pub mod conversation;
pub mod engine;
pub mod error;
pub mod flows;
pub mod graph;
pub mod handoff;
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
pub mod test_cases;
pub mod turn;

/// The crate version, as built.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
