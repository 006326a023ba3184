//! `rental`'s edge code: its settings turned into its config and its own dependencies
//! (`assistant`); its data admin (listings, users, Q&A, schema) and its seed chat endpoint
//! (`POST /ai/chat`, with the idle-session cleanup the Cron Trigger runs); its D1 tables
//! (`d1_listings`: the listings; `d1_rental`: users, sessions, learned Q&A).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod chat;
pub(crate) mod d1_listings;
pub(crate) mod d1_rental;
pub(crate) mod routes;
pub(crate) mod settings;
