//! `analyst`'s edge code: its settings turned into its config and its own dependencies
//! (`assistant`); its data sets admin (`/admin/data…`), over the data sets in the site's
//! object (`crate::site_object::data`).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod routes;
pub(crate) mod settings;
