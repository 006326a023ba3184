//! `knowledge`'s edge code: its documents and logs admin, search, and the seed query
//! endpoint (`POST /knowledge/query`).

pub(crate) mod admin;
pub(crate) mod query;
