//! Platform glue: each module implements a `concierge-core` boundary (or wraps a
//! binding) over Cloudflare D1, KV, Queues, Vectorize, the rate limiter or `fetch`.

pub(crate) mod d1_store;
pub(crate) mod queue;
pub(crate) mod rate_limit;
pub(crate) mod services;
pub(crate) mod upstream;
pub(crate) mod vectors;
