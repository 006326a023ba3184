//! Platform glue: each module implements a `concierge-core` boundary (or wraps a
//! binding) over Cloudflare D1, KV, Queues, Vectorize, Workers AI, the rate limiter or `fetch`;
//! [`js_stream`] holds the byte streams of streamed bodies.

pub(crate) mod catalog;
pub(crate) mod count;
pub(crate) mod d1_admin;
pub(crate) mod d1_caps;
pub(crate) mod d1_console;
pub(crate) mod d1_console_stats;
pub(crate) mod d1_feedback;
pub(crate) mod d1_handoff;
pub(crate) mod d1_memory;
pub(crate) mod d1_sites;
pub(crate) mod d1_store;
pub(crate) mod documents;
pub(crate) mod js_stream;
pub(crate) mod kb;
pub(crate) mod kv_cache;
pub(crate) mod mcp_sessions;
pub(crate) mod outbound;
pub(crate) mod queue;
pub(crate) mod rate_limit;
pub(crate) mod record;
pub(crate) mod retry;
pub(crate) mod services;
pub(crate) mod timer;
pub(crate) mod turn_queue;
pub(crate) mod upstream;
pub(crate) mod vectors;
pub(crate) mod workers_ai;
