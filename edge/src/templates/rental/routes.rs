//! `rental`'s routes: its data admin (schema, users, Q&A, listings) and the seed chat endpoint. The
//! registry puts this table after the Worker's own ([`crate::router`]); see [`crate::http::table`]
//! for the rows.

use super::{admin, chat};
use crate::auth::{AnyKeyCaller, SecretCaller};
use crate::http::table::{DELETE, GET, POST, PUT, routes};

routes! {
    enum Route;
    AdminRentalSchema "admin_rental_schema" [GET] ["admin", "rental-schema"], SecretCaller
        => |req, rc, caller| admin::schema(caller).await;
    RentalChat "rental_chat" [POST] ["ai", "chat"], AnyKeyCaller
        => |req, rc, caller| chat::chat(req, rc.env, caller).await;
    RentalUsers "rental_users" [PUT] ["admin", "rental", "users"], SecretCaller
        => |req, rc, caller| admin::put_users(req, rc.env, caller).await;
    RentalQaList "rental_qa_list" [GET] ["admin", "rental", "qa"], SecretCaller
        => |req, rc, caller| admin::list_qa(req, rc.env, caller).await;
    RentalQaDelete "rental_qa_delete" [DELETE] ["admin", "rental", "qa", id], SecretCaller
        => |req, rc, caller| admin::delete_qa(rc.env, caller, id).await;
    RentalUpsert "rental_upsert" [PUT] ["admin", "rental", entity], SecretCaller
        => |req, rc, caller| admin::upsert(req, rc.env, caller, entity).await;
    RentalDelete "rental_delete" [DELETE] ["admin", "rental", entity, id], SecretCaller
        => |req, rc, caller| admin::delete(rc.env, caller, entity, id).await;
}
