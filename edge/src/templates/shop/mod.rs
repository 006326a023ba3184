//! `shop`'s edge code: its config and its own dependencies (`assistant`); the warranty
//! records — their upload (`POST /admin/warranty`, in `routes`) and their lookup over D1
//! (`WarrantyRecords` for `D1Store`).

pub(crate) mod assistant;
pub(crate) mod d1_warranty;
pub(crate) mod routes;
pub(crate) mod warranty_admin;
