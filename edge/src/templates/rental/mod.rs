//! `rental`'s edge code: its settings turned into its config and its own dependencies
//! (`assistant`); its data admin (listings, users, Q&A, schema) and its seed chat endpoint
//! (`POST /ai/chat`); its data, per site (`listings`: the listings, in their own object,
//! behind the SQL validator; `site_data`: users, sessions, learned Q&A, in the site's
//! object, whose alarm ends idle sessions).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod chat;
pub(crate) mod listings;
pub(crate) mod routes;
pub(crate) mod settings;
pub(crate) mod site_data;
