//! # concierge-core
//!
//! The agent core of Concierge, an embeddable AI assistant for websites.
//!
//! This crate performs no I/O. It holds the domain types every other crate speaks:
//! the chat model's streamed events ([`chat`]), and — as the project grows — the
//! conversation model, the agent graph, the assistant templates, intent
//! classification, prompt building and the stream codecs. I/O happens behind traits
//! that the Worker (`edge`) implements over fetch/KV/D1 and tests implement in memory.
//!
//! ## Features
//! - `std` (default): `std::error::Error` impls and std conveniences. Without it the
//!   crate is `no_std` + `alloc` and builds for `wasm32-unknown-unknown`.
//! - `memory`: in-memory implementations of the boundary traits.
//!
//! ## Example
//! ```
//! use concierge_core::chat::{ChatEvent, FinishReason};
//! let events = [ChatEvent::text("Xin chào"), ChatEvent::finish(FinishReason::Stop)];
//! let text: String = events.iter().filter_map(ChatEvent::as_text).collect();
//! assert_eq!(text, "Xin chào");
//! ```
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod chat;
/// Streaming-protocol codecs: SSE, OpenAI chunks, Ollama NDJSON, Concierge's own streams.
pub mod stream;

/// The crate version, as built.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
