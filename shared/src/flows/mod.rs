//! The assistant templates: each is a [`Graph`](crate::graph::Graph) of named nodes plus
//! the [`Flow`](crate::graph::Flow) that runs them.
//!
//! - [`shop`] — the store assistant (seed 000).
//! - [`guarded`] — a domain-restricted advisor with a guardrail (seed 004).
//! - [`rental`] — the rental marketplace assistant (seed 002): generated, validated SQL.
//!
//! `analyst` (seed 001), `rental` (002) and `knowledge` (003) come next;
//! the crate docs show how each maps onto the engine.

pub mod guarded;
#[cfg(feature = "rental")]
pub mod rental;
pub mod shop;
