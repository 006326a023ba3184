//! `analyst`'s routes: its data sets admin. The registry puts this table after the Worker's own
//! ([`crate::router`]); see [`crate::http::table`] for the rows.

use super::admin;
use crate::auth::SecretCaller;
use crate::http::table::{DELETE, GET, POST, PUT, routes};

routes! {
    enum Route;
    DataList "data_list" [GET] ["admin", "data"], SecretCaller
        => |req, rc, caller| admin::list(req, rc.env, caller).await;
    DataPut "data_set" [PUT] ["admin", "data", name], SecretCaller
        => |req, rc, caller| admin::put(req, rc.env, caller, name).await;
    DataGet "data_set" [GET] ["admin", "data", name], SecretCaller
        => |req, rc, caller| admin::get(req, rc.env, caller, name).await;
    DataDelete "data_set" [DELETE] ["admin", "data", name], SecretCaller
        => |req, rc, caller| admin::delete(req, rc.env, caller, name).await;
    DataSync "data_sync" [POST] ["admin", "data", name, "sync"], SecretCaller
        => |req, rc, caller| admin::sync(req, rc.env, caller, name).await;
}
