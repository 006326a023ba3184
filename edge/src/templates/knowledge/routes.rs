//! `knowledge`'s routes: its documents, reindexing, search and logs admin, and the seed query
//! endpoint. The registry puts this table after the Worker's own ([`crate::router`]); see
//! [`crate::http::table`] for the rows.

use super::{admin, query};
use crate::auth::SecretCaller;
use crate::http::table::{DELETE, GET, POST, PUT, routes};

routes! {
    enum Route;
    KnowledgeDelete "knowledge_delete" [DELETE] ["admin", "knowledge", id], SecretCaller
        => |req, rc, caller| admin::delete(rc.env, caller, id).await;
    KnowledgeGet "knowledge_get" [GET] ["admin", "knowledge", id], SecretCaller
        => |req, rc, caller| admin::get(rc.env, caller, id).await;
    KnowledgePut "knowledge_put" [PUT] ["admin", "knowledge", id], SecretCaller
        => |req, rc, caller| admin::put(req, rc.env, caller, id).await;
    KnowledgeReindex "knowledge_reindex" [POST] ["admin", "index"], SecretCaller
        => |req, rc, caller| admin::reindex(req, rc.env, caller).await;
    KnowledgeList "knowledge_list" [GET] ["admin", "knowledge"], SecretCaller
        => |req, rc, caller| admin::list(rc.env, caller).await;
    AdminSearch "admin_search" [POST] ["admin", "search"], SecretCaller
        => |req, rc, caller| admin::search(req, rc.env, caller).await;
    KnowledgeLogs "knowledge_logs" [PUT] ["admin", "logs"], SecretCaller
        => |req, rc, caller| admin::put_logs(req, rc.env, caller).await;
    KnowledgeQuery "knowledge_query" [POST] ["knowledge", "query"], SecretCaller
        => |req, rc, caller| {
            query::query(req, rc.env, caller, rc.ctx, rc.request_id).await
        };
}
