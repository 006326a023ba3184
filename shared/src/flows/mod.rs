//! The assistant templates: each is a [`Graph`](crate::graph::Graph) of named nodes plus
//! the [`Flow`](crate::graph::Flow) that runs them.
//!
//! - [`shop`] — the store assistant (seed 000).
//! - [`rental`] — the rental marketplace assistant (seed 002): generated, validated SQL
//!   (feature `rental`).
//! - [`knowledge`] — the internal-knowledge assistant (seed 003): planner, parallel
//!   agent stages, conflict resolution, answers with evidence within the visitor's
//!   permissions.
//! - [`guarded`] — a domain-restricted advisor with a guardrail (seed 004).
//!
//! `analyst` (seed 001) comes next; the crate docs show how each maps onto the engine.

pub mod analyst;
pub mod guarded;
pub mod knowledge;
#[cfg(feature = "rental")]
pub mod rental;
pub mod shop;
