//! `rental` — the room-rental marketplace assistant of seed 002 (`002_ae398708705a9258.txt`).

pub mod schema;
pub mod sql;
