//! `rental`'s edge code: its data admin (listings, users, Q&A, schema) and its seed chat
//! endpoint (`POST /ai/chat`, with the idle-session cleanup the Cron Trigger runs).

pub(crate) mod admin;
pub(crate) mod chat;
