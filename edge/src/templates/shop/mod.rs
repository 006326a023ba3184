//! `shop`'s edge code: its config and its own dependencies (`assistant`); the warranty
//! records' upload (`POST /admin/warranty`, in `routes`). The records live in the site's
//! object (`crate::site_object::warranty`).

pub(crate) mod assistant;
pub(crate) mod routes;
pub(crate) mod warranty_admin;
