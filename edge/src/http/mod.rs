//! What handlers share, below the routes and the templates' own routes: reading a request's
//! JSON body within its limits ([`body`]), a stored message as the API shows it
//! ([`message`]), streaming a turn to the client in any wire
//! format ([`turn_stream`]) or answering it as one JSON document ([`turn_json`]), and route
//! tables ([`table`]).

pub(crate) mod body;
pub(crate) mod message;
pub(crate) mod table;
pub(crate) mod turn_json;
pub(crate) mod turn_stream;
