//! `guarded`'s edge code: the local search pages upload.

pub(crate) mod admin;
