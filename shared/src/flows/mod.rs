//! The assistant templates: each is a [`Graph`](crate::graph::Graph) of named nodes plus
//! the [`Flow`](crate::graph::Flow) that runs them.
//!
//! - [`shop`] — the store assistant (seed 000).
//! - [`analyst`] — business data questions answered by a tool-calling agent over the
//!   merchant's data sets (seed 001).
//! - [`rental`] — the rental marketplace assistant (seed 002): generated, validated SQL
//!   (feature `rental`).
//! - [`knowledge`] — the internal-knowledge assistant (seed 003): planner, parallel
//!   agent stages, conflict resolution, answers with evidence within the visitor's
//!   permissions (feature `knowledge`).
//! - [`guarded`] — a domain-restricted advisor with a guardrail (seed 004).

pub mod analyst;
pub mod guarded;
#[cfg(feature = "knowledge")]
pub mod knowledge;
#[cfg(feature = "rental")]
pub mod rental;
pub mod shop;
