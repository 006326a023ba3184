//! The assistant templates: each is an [`Assistant`](crate::engine::Assistant) (its
//! settings, greeting and answer steps) that the engine's turn lifecycle runs; `shop`'s
//! steps are a [`Graph`](crate::graph::Graph), the others plain async steps named after
//! their seed's nodes (see the crate's design note).
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
