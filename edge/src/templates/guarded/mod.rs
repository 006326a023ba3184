//! `guarded`'s edge code: its settings (`config.guarded`, [`settings`]) turned
//! into its config and its own dependencies (`assistant`, the web search in `web_search`);
//! the local search pages upload, and seed 004's JSON-RPC server (`POST /jsonrpc`).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod jsonrpc;
pub(crate) mod routes;
pub(crate) mod settings;
pub(crate) mod web_search;
