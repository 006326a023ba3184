//! `guarded`'s routes: the local search pages upload and seed 004's JSON-RPC server. The registry
//! puts this table after the Worker's own ([`crate::router`]); see [`crate::http::table`] for the
//! rows.

use super::{admin, jsonrpc};
use crate::auth::SecretCaller;
use crate::http::table::{POST, PUT, routes};

routes! {
    enum Route;
    AdminSearchPages "admin_search_pages" [PUT] ["admin", "search-pages"], SecretCaller
        => |req, rc, caller| admin::put_search_pages(req, rc.env, caller).await;
    JsonRpc "jsonrpc" [POST] ["jsonrpc"], SecretCaller
        => |req, rc, caller| jsonrpc::handle(req, rc.env, caller).await;
}
