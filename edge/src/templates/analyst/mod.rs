//! `analyst`'s edge code: its settings turned into its config and its own dependencies (`assistant`); its data sets admin (`/admin/data…`).

pub(crate) mod admin;
pub(crate) mod assistant;
