//! The router: which handler serves which method and path, and CORS.
//!
//! The routes themselves (method and path → [`Route`]) are in `route`.

use worker::{Context, Env, Method, Request, Response};

use crate::error::ApiError;

mod admin;
mod ai_sdk;
mod analyst_admin;
pub(crate) mod body;
mod console;
mod console_admin;
mod conversations;
mod debug_script;
mod feedback;
mod guarded_admin;
mod health;
pub(crate) mod jsonrpc;
mod knowledge;
mod knowledge_query;
mod mcp;
mod mcp_tools;
mod openai;
mod regenerate;
mod rental_admin;
pub(crate) mod rental_chat;
mod route;
mod stream;
pub(crate) mod turn_stream;
mod widget;

pub(crate) use route::Route;

/// What a handler gets besides the request.
#[derive(Debug)]
pub(crate) struct RequestContext<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub request_id: &'a str,
}

/// Path segment `index` (0-based, after the leading slash).
fn segment(req: &Request, index: usize) -> String {
    req.path()
        .trim_matches('/')
        .split('/')
        .nth(index)
        .unwrap_or_default()
        .to_string()
}

/// Run the handler for `route`.
pub(crate) async fn handle(
    route: Route,
    req: Request,
    rc: &RequestContext<'_>,
) -> Result<Response, ApiError> {
    let env = rc.env;
    match route {
        Route::Health => health::get(env),
        Route::DebugStream => stream::get(&req, env),
        Route::DebugScript => {
            let id = segment(&req, 2);
            debug_script::stage(req, env, &id).await
        }
        Route::AdminCreateSite => admin::create_site(req, env).await,
        Route::AdminGetSite => admin::get_site(req, env).await,
        Route::AdminUpdateSite => admin::update_site(req, env).await,
        Route::AdminRotateKeys => admin::rotate_keys(req, env).await,
        Route::AdminUserTokenSecret => admin::rotate_user_token_secret(req, env).await,
        Route::AdminWarranty => admin::upsert_warranty(req, env).await,
        Route::KnowledgePut => {
            let id = segment(&req, 2);
            knowledge::put(req, env, &id).await
        }
        Route::KnowledgeGet => {
            let id = segment(&req, 2);
            knowledge::get(req, env, &id).await
        }
        Route::KnowledgeDelete => {
            let id = segment(&req, 2);
            knowledge::delete(req, env, &id).await
        }
        Route::KnowledgeReindex => knowledge::reindex(req, env).await,
        Route::KnowledgeList => knowledge::list(req, env).await,
        Route::AdminSearch => knowledge::search(req, env).await,
        Route::AdminSearchPages => guarded_admin::put_search_pages(req, env).await,
        Route::JsonRpc => jsonrpc::handle(req, env).await,
        Route::KnowledgeLogs => knowledge::put_logs(req, env).await,
        Route::KnowledgeQuery => knowledge_query::query(req, env, rc.ctx, rc.request_id).await,
        Route::ConversationCreate => conversations::create(req, env, rc.ctx).await,
        Route::ConversationMessage => {
            let id = segment(&req, 1);
            conversations::post_message(req, env, rc.ctx, &id, rc.request_id).await
        }
        Route::ConversationRegenerate => {
            let id = segment(&req, 1);
            regenerate::post(req, env, rc.ctx, &id, rc.request_id).await
        }
        Route::ConversationHistory => {
            let id = segment(&req, 1);
            conversations::history(req, env, &id).await
        }
        Route::ConversationDelete => {
            let id = segment(&req, 1);
            conversations::delete(req, env, &id).await
        }
        Route::MessageFeedback => {
            let (id, message_id) = (segment(&req, 1), segment(&req, 3));
            feedback::post(req, env, &id, &message_id).await
        }
        Route::AdminFeedback => feedback::list(req, env).await,
        Route::AdminConversations => console::conversations(req, env).await,
        Route::Console => console::page(req, env).await,
        Route::WidgetConfig => widget::config(req, env).await,
        Route::WidgetCheck => widget::check(req, env).await,
        Route::WidgetPanel => widget::panel(req, env).await,
        Route::OpenAiModels => openai::models(req, env).await,
        Route::OpenAiModel => {
            let id = segment(&req, 2);
            openai::model(req, env, &id).await
        }
        Route::OpenAiChatCompletions => {
            openai::chat_completions(req, env, rc.ctx, rc.request_id).await
        }
        Route::OpenAiConversation => {
            let id = segment(&req, 2);
            openai::conversation(req, env, &id).await
        }
        Route::Mcp => mcp::handle(req, env, rc.ctx).await,
        Route::AiSdkChat => ai_sdk::chat(req, env, rc.ctx, rc.request_id).await,
        Route::AiSdkResume => ai_sdk::resume(req, env).await,
        Route::RentalChat => rental_chat::chat(req, env).await,
        Route::RentalUsers => rental_admin::put_users(req, env).await,
        Route::RentalQaList => rental_admin::list_qa(req, env).await,
        Route::RentalQaDelete => {
            let id = segment(&req, 3);
            rental_admin::delete_qa(req, env, &id).await
        }
        Route::RentalUpsert => {
            let entity = segment(&req, 2);
            rental_admin::upsert(req, env, &entity).await
        }
        Route::RentalDelete => {
            let (entity, id) = (segment(&req, 2), segment(&req, 3));
            rental_admin::delete(req, env, &entity, &id).await
        }
        Route::DataList => analyst_admin::list(req, env).await,
        Route::DataSet => {
            let name = segment(&req, 2);
            match req.method() {
                Method::Put => analyst_admin::put(req, env, &name).await,
                Method::Delete => analyst_admin::delete(req, env, &name).await,
                _ => analyst_admin::get(req, env, &name).await,
            }
        }
        Route::DataSync => {
            let name = segment(&req, 2);
            analyst_admin::sync(req, env, &name).await
        }
        Route::AdminExport => console_admin::export(req, env).await,
        Route::AdminConversation => {
            let id = segment(&req, 2);
            console_admin::conversation(req, env, &id).await
        }
        Route::AdminStats => console_admin::stats(req, env).await,
        Route::AdminTryToken => console_admin::try_token(req, env).await,
        Route::AdminRentalSchema => console_admin::rental_schema(req, env).await,
        Route::Preflight => preflight(&req, env).await,
        Route::MethodNotAllowed => Err(ApiError::MethodNotAllowed),
        Route::NotFound => Err(ApiError::NotFound),
    }
}

/// Whether errors on `path` take OpenAI's shape (the OpenAI-compatible API, `/v1/…`).
pub(crate) fn openai_shaped(path: &str) -> bool {
    path == "/v1" || path.starts_with("/v1/")
}

/// The request's `Origin` when some site allows it (CORS applies to those only).
pub(crate) async fn cors_origin(req: &Request, env: &Env) -> Option<String> {
    let origin = req.headers().get("origin").ok().flatten()?;
    if crate::auth::own_origins(env).contains(&origin) {
        return None;
    }
    crate::bindings::d1_sites::origin_known(env, &origin)
        .await
        .ok()?
        .then_some(origin)
}

/// Answer a CORS preflight: allowed only for origins some site allows.
async fn preflight(req: &Request, env: &Env) -> Result<Response, ApiError> {
    if cors_origin(req, env).await.is_none() {
        return Err(ApiError::Forbidden("This origin is not allowed."));
    }
    let mut response = Response::empty()?.with_status(204);
    let headers = response.headers_mut();
    headers.set(
        "access-control-allow-methods",
        "GET, POST, PUT, PATCH, DELETE, OPTIONS",
    )?;
    headers.set(
        "access-control-allow-headers",
        "content-type, x-api-key, authorization, prefer, last-event-id, idempotency-key, \
         x-user-token",
    )?;
    headers.set("access-control-max-age", "600")?;
    Ok(response)
}

/// Add CORS headers for an allowed `origin` to any response.
pub(crate) fn add_cors(response: &mut Response, origin: &str) -> worker::Result<()> {
    let headers = response.headers_mut();
    headers.set("access-control-allow-origin", origin)?;
    headers.set("access-control-expose-headers", "x-request-id")?;
    headers.append("vary", "Origin")?;
    Ok(())
}
