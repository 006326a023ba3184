//! `analyst`'s edge code: its data sets admin (`/admin/data…`).

pub(crate) mod admin;
