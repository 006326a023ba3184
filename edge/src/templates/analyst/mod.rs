//! `analyst`'s edge code: its settings turned into its config and its own dependencies
//! (`assistant`); its data sets admin (`/admin/data…`) and their D1 tables (`d1_data`).

pub(crate) mod admin;
pub(crate) mod assistant;
pub(crate) mod d1_data;
pub(crate) mod routes;
pub(crate) mod settings;
