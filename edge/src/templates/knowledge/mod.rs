//! `knowledge`'s edge code: its settings (`settings`) turned into its config and its own
//! dependencies (`assistant`); its documents and logs admin, search, and the seed query
//! endpoint (`POST /knowledge/query`); its routes (`routes`).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod query;
pub(crate) mod routes;
pub(crate) mod settings;
