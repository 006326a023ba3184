//! `shop`'s routes: the warranty records' upload. The registry puts this table after the Worker's
//! own ([`crate::router`]); see [`crate::http::table`] for the rows.

use super::warranty_admin;
use crate::auth::SecretCaller;
use crate::http::table::{POST, routes};

routes! {
    enum Route;
    AdminWarranty "admin_warranty" [POST] ["admin", "warranty"], SecretCaller
        => |req, rc, caller| warranty_admin::upsert_warranty(req, rc.env, caller).await;
}
