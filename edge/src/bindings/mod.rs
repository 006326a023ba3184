//! Bindings: each wraps a Cloudflare binding or upstream behind what the core needs.

pub(crate) mod rate_limit;
