//! `guarded`'s edge code: its settings turned into its config and its own dependencies (`assistant`); the local search pages upload.

pub(crate) mod admin;
pub(crate) mod assistant;
