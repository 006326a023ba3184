//! The assistant templates: each is a [`Graph`](crate::graph::Graph) of named nodes plus
//! the [`Flow`](crate::graph::Flow) that runs them.
//!
//! - [`shop`] — the store assistant (seed 000).
//! - [`knowledge`] — the internal-knowledge assistant (seed 003): planner, parallel
//!   agent stages, conflict resolution, answers with evidence within the visitor's
//!   permissions.
//!
//! `analyst` (seed 001), `rental` (002) and `guarded` (004) come next;
//! the crate docs show how each maps onto the engine.

pub mod knowledge;
pub mod shop;
