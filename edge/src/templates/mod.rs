//! Each template's edge code, one folder per template: its admin and seed routes (the
//! route table in [`crate::router`] points at them) and what else only it uses.
//!
//! Layering: below the router, above the generic routes (`routes::body`,
//! `routes::turn_stream`), `auth`, `bindings` and `site`, which never name a template
//! folder.

pub(crate) mod analyst;
pub(crate) mod guarded;
pub(crate) mod knowledge;
pub(crate) mod rental;
pub(crate) mod shop;
