//! The router: which handler serves which method and path, and CORS.

use worker::{Context, Env, Method, Request, Response};

use crate::ApiError;

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
mod stream;
pub(crate) mod turn_stream;
mod widget;

/// A matched route (or why none matched). Path parameters are extracted by handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Health,
    DebugStream,
    DebugScript,
    AdminCreateSite,
    AdminGetSite,
    AdminUpdateSite,
    AdminRotateKeys,
    AdminUserTokenSecret,
    AdminWarranty,
    KnowledgePut,
    KnowledgeGet,
    KnowledgeDelete,
    KnowledgeReindex,
    KnowledgeList,
    AdminSearch,
    AdminSearchPages,
    JsonRpc,
    ConversationCreate,
    ConversationMessage,
    /// `POST /conversations/{id}/regenerate`.
    ConversationRegenerate,
    ConversationHistory,
    ConversationDelete,
    MessageFeedback,
    AdminFeedback,
    AdminConversations,
    Console,
    KnowledgeLogs,
    KnowledgeQuery,
    WidgetConfig,
    WidgetCheck,
    WidgetPanel,
    OpenAiModels,
    OpenAiModel,
    OpenAiChatCompletions,
    OpenAiConversation,
    Mcp,
    AiSdkChat,
    AiSdkResume,
    RentalChat,
    RentalUsers,
    RentalQaList,
    RentalQaDelete,
    RentalUpsert,
    RentalDelete,
    /// `GET /admin/data` (analyst data sets).
    DataList,
    /// `PUT|GET|DELETE /admin/data/{name}`.
    DataSet,
    /// `POST /admin/data/{name}/sync`.
    DataSync,
    /// `GET /admin/conversations/export`.
    AdminExport,
    /// `GET /admin/conversations/{id}`.
    AdminConversation,
    /// `GET /admin/stats`.
    AdminStats,
    /// `POST /admin/try-token`.
    AdminTryToken,
    /// `GET /admin/rental-schema`.
    AdminRentalSchema,
    Preflight,
    MethodNotAllowed,
    NotFound,
}

impl Route {
    /// Match a method and path.
    pub(crate) fn of(method: &Method, path: &str) -> Self {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let is = |m: Method| *method == m;
        let (route, allowed) = match segments.as_slice() {
            ["health"] => (Self::Health, is(Method::Get) || is(Method::Head)),
            ["debug", "stream"] => (Self::DebugStream, is(Method::Get)),
            ["debug", "conversations", _, "script"] => (Self::DebugScript, is(Method::Post)),
            ["admin", "sites"] => (Self::AdminCreateSite, is(Method::Post)),
            ["admin", "site"] if is(Method::Patch) => (Self::AdminUpdateSite, true),
            ["admin", "site"] => (Self::AdminGetSite, is(Method::Get)),
            ["admin", "site", "rotate-keys"] => (Self::AdminRotateKeys, is(Method::Post)),
            ["admin", "site", "user-token-secret"] => {
                (Self::AdminUserTokenSecret, is(Method::Post))
            }
            ["admin", "warranty"] => (Self::AdminWarranty, is(Method::Post)),
            ["admin", "knowledge", _] if is(Method::Delete) => (Self::KnowledgeDelete, true),
            ["admin", "knowledge", _] if is(Method::Get) => (Self::KnowledgeGet, true),
            ["admin", "knowledge", _] => (Self::KnowledgePut, is(Method::Put)),
            ["admin", "index"] => (Self::KnowledgeReindex, is(Method::Post)),
            ["admin", "knowledge"] => (Self::KnowledgeList, is(Method::Get)),
            ["admin", "search"] => (Self::AdminSearch, is(Method::Post)),
            ["admin", "search-pages"] => (Self::AdminSearchPages, is(Method::Put)),
            ["jsonrpc"] => (Self::JsonRpc, is(Method::Post)),
            ["admin", "logs"] => (Self::KnowledgeLogs, is(Method::Put)),
            ["knowledge", "query"] => (Self::KnowledgeQuery, is(Method::Post)),
            ["admin", "feedback"] => (Self::AdminFeedback, is(Method::Get)),
            ["admin", "conversations"] => (Self::AdminConversations, is(Method::Get)),
            ["admin", "conversations", "export"] => (Self::AdminExport, is(Method::Get)),
            ["admin", "conversations", _] => (Self::AdminConversation, is(Method::Get)),
            ["admin", "stats"] => (Self::AdminStats, is(Method::Get)),
            ["admin", "try-token"] => (Self::AdminTryToken, is(Method::Post)),
            ["admin", "rental-schema"] => (Self::AdminRentalSchema, is(Method::Get)),
            ["console"] => (Self::Console, is(Method::Get) || is(Method::Head)),
            ["conversations"] => (Self::ConversationCreate, is(Method::Post)),
            ["conversations", _] => (Self::ConversationDelete, is(Method::Delete)),
            ["conversations", _, "messages"] => (Self::ConversationMessage, is(Method::Post)),
            ["conversations", _, "regenerate"] => (Self::ConversationRegenerate, is(Method::Post)),
            ["conversations", _, "history"] => (Self::ConversationHistory, is(Method::Get)),
            ["conversations", _, "messages", _, "feedback"] => {
                (Self::MessageFeedback, is(Method::Post))
            }
            ["widget", "config"] => (Self::WidgetConfig, is(Method::Get)),
            ["widget", "check"] => (Self::WidgetCheck, is(Method::Get)),
            ["chat"] => (Self::WidgetPanel, is(Method::Get) || is(Method::Head)),
            ["v1", "models"] => (Self::OpenAiModels, is(Method::Get)),
            ["v1", "models", _] => (Self::OpenAiModel, is(Method::Get)),
            ["v1", "chat", "completions"] => (Self::OpenAiChatCompletions, is(Method::Post)),
            ["v1", "conversations", _] => (Self::OpenAiConversation, is(Method::Get)),
            // Every method reaches the MCP handler: it authenticates first, then answers
            // the methods it does not serve with 405.
            ["mcp"] => (Self::Mcp, true),
            ["api", "chat"] => (Self::AiSdkChat, is(Method::Post)),
            ["api", "chat", _, "stream"] => (Self::AiSdkResume, is(Method::Get)),
            ["ai", "chat"] => (Self::RentalChat, is(Method::Post)),
            ["admin", "rental", "users"] => (Self::RentalUsers, is(Method::Put)),
            ["admin", "rental", "qa"] => (Self::RentalQaList, is(Method::Get)),
            ["admin", "rental", "qa", _] => (Self::RentalQaDelete, is(Method::Delete)),
            ["admin", "rental", _] => (Self::RentalUpsert, is(Method::Put)),
            ["admin", "rental", _, _] => (Self::RentalDelete, is(Method::Delete)),
            ["admin", "data"] => (Self::DataList, is(Method::Get)),
            ["admin", "data", _] => (
                Self::DataSet,
                is(Method::Put) || is(Method::Get) || is(Method::Delete),
            ),
            ["admin", "data", _, "sync"] => (Self::DataSync, is(Method::Post)),
            _ => return Self::NotFound,
        };
        if is(Method::Options) {
            Self::Preflight
        } else if allowed {
            route
        } else {
            Self::MethodNotAllowed
        }
    }

    /// A stable name for logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Health => "health",
            Self::DebugStream => "debug_stream",
            Self::DebugScript => "debug_script",
            Self::AdminCreateSite => "admin_create_site",
            Self::AdminGetSite => "admin_get_site",
            Self::AdminUpdateSite => "admin_update_site",
            Self::AdminRotateKeys => "admin_rotate_keys",
            Self::AdminUserTokenSecret => "admin_user_token_secret",
            Self::AdminWarranty => "admin_warranty",
            Self::KnowledgePut => "knowledge_put",
            Self::KnowledgeGet => "knowledge_get",
            Self::KnowledgeDelete => "knowledge_delete",
            Self::KnowledgeReindex => "knowledge_reindex",
            Self::KnowledgeList => "knowledge_list",
            Self::KnowledgeLogs => "knowledge_logs",
            Self::KnowledgeQuery => "knowledge_query",
            Self::AdminSearch => "admin_search",
            Self::AdminSearchPages => "admin_search_pages",
            Self::JsonRpc => "jsonrpc",
            Self::ConversationCreate => "conversation_create",
            Self::ConversationMessage => "conversation_message",
            Self::ConversationRegenerate => "conversation_regenerate",
            Self::ConversationHistory => "conversation_history",
            Self::ConversationDelete => "conversation_delete",
            Self::MessageFeedback => "message_feedback",
            Self::AdminFeedback => "admin_feedback",
            Self::AdminConversations => "admin_conversations",
            Self::Console => "console",
            Self::WidgetConfig => "widget_config",
            Self::WidgetCheck => "widget_check",
            Self::WidgetPanel => "widget_panel",
            Self::OpenAiModels => "openai_models",
            Self::OpenAiModel => "openai_model",
            Self::OpenAiChatCompletions => "openai_chat_completions",
            Self::OpenAiConversation => "openai_conversation",
            Self::Mcp => "mcp",
            Self::AiSdkChat => "ai_sdk_chat",
            Self::AiSdkResume => "ai_sdk_resume",
            Self::RentalChat => "rental_chat",
            Self::RentalUsers => "rental_users",
            Self::RentalQaList => "rental_qa_list",
            Self::RentalQaDelete => "rental_qa_delete",
            Self::RentalUpsert => "rental_upsert",
            Self::RentalDelete => "rental_delete",
            Self::DataList => "data_list",
            Self::DataSet => "data_set",
            Self::DataSync => "data_sync",
            Self::AdminExport => "admin_export",
            Self::AdminConversation => "admin_conversation",
            Self::AdminStats => "admin_stats",
            Self::AdminTryToken => "admin_try_token",
            Self::AdminRentalSchema => "admin_rental_schema",
            Self::Preflight => "preflight",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotFound => "not_found",
        }
    }
}

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
    crate::site::origin_known(env, &origin)
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
