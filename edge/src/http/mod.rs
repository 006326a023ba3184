//! What handlers share, below the routes and the templates' own routes: reading a request's
//! JSON body within its limits ([`body`]), and streaming a turn to the client in any wire
//! format ([`turn_stream`]) or as one JSON document ([`turn_json`]).

pub(crate) mod body;
pub(crate) mod turn_json;
pub(crate) mod turn_stream;
