//! `rental`'s edge code: its settings turned into its config and its own dependencies (`assistant`); its data admin (listings, users, Q&A, schema) and its seed chat
//! endpoint (`POST /ai/chat`, with the idle-session cleanup the Cron Trigger runs).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod chat;
