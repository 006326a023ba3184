//! The router: one table, one row per route — its name in code and in logs, the methods it
//! serves, its path, who may call it ([`crate::auth::Access`]) and its handler.
//!
//! [`routes!`] expands the table into the [`Route`] enum, [`Route::of`] (method and path →
//! route), [`Route::name`] and [`handle`] (a static `match`, no boxed futures). A path
//! segment written as a name (`id`) is a parameter the handler gets.
//!
//! Matching: the first row whose path matches decides, together with the rows just like
//! it (same path pattern, other methods); `OPTIONS` on such a path is a CORS
//! [`Route::Preflight`], another method is [`Route::MethodNotAllowed`]; a path no row
//! matches is [`Route::NotFound`].

use worker::{Context, Env, Method, Request, Response};

use crate::auth::{Access, Admitted, AnyKeyCaller, Open, Operator, SecretCaller};
use crate::error::ApiError;
use crate::routes::{
    admin, ai_sdk, console, console_admin, conversations, debug_script, feedback, health, mcp,
    openai, preflight, regenerate, stream, widget,
};
use crate::templates::{analyst, guarded, knowledge, rental, shop};

/// What a handler gets besides the request.
#[derive(Debug)]
pub(crate) struct RequestContext<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub request_id: &'a str,
}

/// Whether two path patterns are written alike (`const`, for [`groups`]).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// For each row's path pattern, the index of the first row written alike.
const fn groups<const N: usize>(patterns: &[&str; N]) -> [usize; N] {
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        let mut j = 0;
        while !same(patterns[i], patterns[j]) {
            j += 1;
        }
        out[i] = j;
        i += 1;
    }
    out
}

/// Expands the route table (see the module's documentation).
macro_rules! routes {
    ($(
        $variant:ident $name:literal [$methods:pat] $path:pat, $access:ty
            => |$req:ident, $rc:ident, $caller:pat_param| $handler:expr;
    )*) => {
        /// Each row's group: the first row with the same path pattern (rows of one path,
        /// other methods). Computed at compile time; the patterns are not in the binary.
        const GROUPS: [usize; [$(stringify!($path)),*].len()] = groups(&[$(stringify!($path)),*]);

        /// A matched route (or why none matched).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Route {
            $($variant,)*
            Preflight,
            MethodNotAllowed,
            NotFound,
        }

        impl Route {
            /// Match a method and path.
            #[allow(unused_variables, unused_assignments)]
            pub(crate) fn of(method: &Method, path: &str) -> Self {
                let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
                let mut group: Option<usize> = None;
                let mut row = 0;
                $(
                    if group.is_none_or(|g| g == GROUPS[row])
                        && matches!(segments.as_slice(), $path)
                    {
                        if *method == Method::Options {
                            return Self::Preflight;
                        }
                        group = Some(GROUPS[row]);
                        if matches!(method, $methods) {
                            return Self::$variant;
                        }
                    }
                    row += 1;
                )*
                if group.is_some() { Self::MethodNotAllowed } else { Self::NotFound }
            }

            /// A stable name for logs.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                    Self::Preflight => "preflight",
                    Self::MethodNotAllowed => "method_not_allowed",
                    Self::NotFound => "not_found",
                }
            }
        }

        /// Run the handler for `route`, once its caller is who the table says may call it.
        #[allow(unused_variables)]
        pub(crate) async fn handle(
            route: Route,
            req: Request,
            rc: &RequestContext<'_>,
        ) -> Result<Response, ApiError> {
            let path = req.path();
            let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
            match route {
                $(Route::$variant => {
                    let $path = segments.as_slice() else {
                        return Err(ApiError::NotFound);
                    };
                    let $caller = <$access as Access>::from_request(&req, rc.env).await?;
                    let ($req, $rc) = (req, rc);
                    $handler
                })*
                Route::Preflight => preflight(&req, rc.env).await,
                Route::MethodNotAllowed => Err(ApiError::MethodNotAllowed),
                Route::NotFound => Err(ApiError::NotFound),
            }
        }
    };
}

use Method::{
    Delete as DELETE, Get as GET, Head as HEAD, Patch as PATCH, Post as POST, Put as PUT,
};

routes! {
    Health "health" [GET | HEAD] ["health"], Open
        => |req, rc, _| health::get(rc.env);
    DebugStream "debug_stream" [GET] ["debug", "stream"], Open
        => |req, rc, _| stream::get(&req, rc.env);
    // Open: 404 unless the debug flag is on; then the handler takes an `AnyKeyCaller`.
    DebugScript "debug_script" [POST] ["debug", "conversations", id, "script"], Open
        => |req, rc, _| debug_script::stage(req, rc.env, id).await;
    AdminCreateSite "admin_create_site" [POST] ["admin", "sites"], Operator
        => |req, rc, op| admin::create_site(req, rc.env, op).await;
    AdminUpdateSite "admin_update_site" [PATCH] ["admin", "site"], SecretCaller
        => |req, rc, caller| admin::update_site(req, rc.env, caller).await;
    AdminGetSite "admin_get_site" [GET] ["admin", "site"], SecretCaller
        => |req, rc, caller| admin::get_site(caller).await;
    AdminRotateKeys "admin_rotate_keys" [POST] ["admin", "site", "rotate-keys"], SecretCaller
        => |req, rc, caller| admin::rotate_keys(rc.env, caller).await;
    AdminUserTokenSecret "admin_user_token_secret" [POST] ["admin", "site", "user-token-secret"],
        SecretCaller => |req, rc, caller| admin::rotate_user_token_secret(rc.env, caller).await;
    AdminWarranty "admin_warranty" [POST] ["admin", "warranty"], SecretCaller
        => |req, rc, caller| shop::warranty_admin::upsert_warranty(req, rc.env, caller).await;
    KnowledgeDelete "knowledge_delete" [DELETE] ["admin", "knowledge", id], SecretCaller
        => |req, rc, caller| knowledge::admin::delete(rc.env, caller, id).await;
    KnowledgeGet "knowledge_get" [GET] ["admin", "knowledge", id], SecretCaller
        => |req, rc, caller| knowledge::admin::get(rc.env, caller, id).await;
    KnowledgePut "knowledge_put" [PUT] ["admin", "knowledge", id], SecretCaller
        => |req, rc, caller| knowledge::admin::put(req, rc.env, caller, id).await;
    KnowledgeReindex "knowledge_reindex" [POST] ["admin", "index"], SecretCaller
        => |req, rc, caller| knowledge::admin::reindex(req, rc.env, caller).await;
    KnowledgeList "knowledge_list" [GET] ["admin", "knowledge"], SecretCaller
        => |req, rc, caller| knowledge::admin::list(rc.env, caller).await;
    AdminSearch "admin_search" [POST] ["admin", "search"], SecretCaller
        => |req, rc, caller| knowledge::admin::search(req, rc.env, caller).await;
    AdminSearchPages "admin_search_pages" [PUT] ["admin", "search-pages"], SecretCaller
        => |req, rc, caller| guarded::admin::put_search_pages(req, rc.env, caller).await;
    JsonRpc "jsonrpc" [POST] ["jsonrpc"], SecretCaller
        => |req, rc, caller| guarded::jsonrpc::handle(req, rc.env, caller).await;
    KnowledgeLogs "knowledge_logs" [PUT] ["admin", "logs"], SecretCaller
        => |req, rc, caller| knowledge::admin::put_logs(req, rc.env, caller).await;
    KnowledgeQuery "knowledge_query" [POST] ["knowledge", "query"], SecretCaller
        => |req, rc, caller| {
            knowledge::query::query(req, rc.env, caller, rc.ctx, rc.request_id).await
        };
    AdminFeedback "admin_feedback" [GET] ["admin", "feedback"], SecretCaller
        => |req, rc, caller| feedback::list(req, rc.env, caller).await;
    AdminConversations "admin_conversations" [GET] ["admin", "conversations"], SecretCaller
        => |req, rc, caller| console::conversations(req, rc.env, caller).await;
    AdminExport "admin_export" [GET] ["admin", "conversations", "export"], SecretCaller
        => |req, rc, caller| console_admin::export(req, rc.env, caller).await;
    AdminConversation "admin_conversation" [GET] ["admin", "conversations", id], SecretCaller
        => |req, rc, caller| console_admin::conversation(rc.env, caller, id).await;
    AdminStats "admin_stats" [GET] ["admin", "stats"], SecretCaller
        => |req, rc, caller| console_admin::stats(req, rc.env, caller).await;
    AdminTryToken "admin_try_token" [POST] ["admin", "try-token"], SecretCaller
        => |req, rc, caller| console_admin::try_token(req, rc.env, caller).await;
    AdminRentalSchema "admin_rental_schema" [GET] ["admin", "rental-schema"], SecretCaller
        => |req, rc, caller| rental::admin::schema(caller).await;
    Console "console" [GET | HEAD] ["console"], Open
        => |req, rc, _| console::page(req, rc.env).await;
    ConversationCreate "conversation_create" [POST] ["conversations"], AnyKeyCaller
        => |req, rc, caller| conversations::create(req, rc.env, caller, rc.ctx).await;
    ConversationDelete "conversation_delete" [DELETE] ["conversations", id], SecretCaller
        => |req, rc, caller| conversations::delete(req, rc.env, caller, id).await;
    ConversationMessage "conversation_message" [POST] ["conversations", id, "messages"],
        Admitted<AnyKeyCaller> => |req, rc, caller| {
            conversations::post_message(req, rc.env, caller, rc.ctx, id, rc.request_id).await
        };
    ConversationRegenerate "conversation_regenerate" [POST] ["conversations", id, "regenerate"],
        Admitted<AnyKeyCaller> => |req, rc, caller| {
            regenerate::post(req, rc.env, caller, rc.ctx, id, rc.request_id).await
        };
    ConversationHistory "conversation_history" [GET] ["conversations", id, "history"], AnyKeyCaller
        => |req, rc, caller| conversations::history(req, rc.env, caller, id).await;
    MessageFeedback "message_feedback" [POST] ["conversations", id, "messages", msg, "feedback"],
        AnyKeyCaller => |req, rc, caller| feedback::post(req, rc.env, caller, id, msg).await;
    WidgetConfig "widget_config" [GET] ["widget", "config"], AnyKeyCaller
        => |req, rc, caller| widget::config(caller).await;
    WidgetCheck "widget_check" [GET] ["widget", "check"], Open
        => |req, rc, _| widget::check(req, rc.env).await;
    WidgetPanel "widget_panel" [GET | HEAD] ["chat"], Open
        => |req, rc, _| widget::panel(req, rc.env).await;
    OpenAiModels "openai_models" [GET] ["v1", "models"], SecretCaller
        => |req, rc, caller| openai::models(caller).await;
    OpenAiModel "openai_model" [GET] ["v1", "models", id], SecretCaller
        => |req, rc, caller| openai::model(caller, id).await;
    OpenAiChatCompletions "openai_chat_completions" [POST] ["v1", "chat", "completions"],
        SecretCaller => |req, rc, caller| {
            openai::chat_completions(req, rc.env, caller, rc.ctx, rc.request_id).await
        };
    OpenAiConversation "openai_conversation" [GET] ["v1", "conversations", id], SecretCaller
        => |req, rc, caller| openai::conversation(req, rc.env, caller, id).await;
    // Every method reaches the MCP handler: it authenticates first, then answers the
    // methods it does not serve with 405.
    Mcp "mcp" [_] ["mcp"], Admitted<SecretCaller>
        => |req, rc, caller| mcp::handle(req, rc.env, caller, rc.ctx).await;
    AiSdkChat "ai_sdk_chat" [POST] ["api", "chat"], AnyKeyCaller
        => |req, rc, caller| ai_sdk::chat(req, rc.env, caller, rc.ctx, rc.request_id).await;
    AiSdkResume "ai_sdk_resume" [GET] ["api", "chat", id, "stream"], AnyKeyCaller
        => |req, rc, caller| ai_sdk::resume(caller).await;
    RentalChat "rental_chat" [POST] ["ai", "chat"], AnyKeyCaller
        => |req, rc, caller| rental::chat::chat(req, rc.env, caller).await;
    RentalUsers "rental_users" [PUT] ["admin", "rental", "users"], SecretCaller
        => |req, rc, caller| rental::admin::put_users(req, rc.env, caller).await;
    RentalQaList "rental_qa_list" [GET] ["admin", "rental", "qa"], SecretCaller
        => |req, rc, caller| rental::admin::list_qa(req, rc.env, caller).await;
    RentalQaDelete "rental_qa_delete" [DELETE] ["admin", "rental", "qa", id], SecretCaller
        => |req, rc, caller| rental::admin::delete_qa(rc.env, caller, id).await;
    RentalUpsert "rental_upsert" [PUT] ["admin", "rental", entity], SecretCaller
        => |req, rc, caller| rental::admin::upsert(req, rc.env, caller, entity).await;
    RentalDelete "rental_delete" [DELETE] ["admin", "rental", entity, id], SecretCaller
        => |req, rc, caller| rental::admin::delete(rc.env, caller, entity, id).await;
    DataList "data_list" [GET] ["admin", "data"], SecretCaller
        => |req, rc, caller| analyst::admin::list(req, rc.env, caller).await;
    DataPut "data_set" [PUT] ["admin", "data", name], SecretCaller
        => |req, rc, caller| analyst::admin::put(req, rc.env, caller, name).await;
    DataGet "data_set" [GET] ["admin", "data", name], SecretCaller
        => |req, rc, caller| analyst::admin::get(req, rc.env, caller, name).await;
    DataDelete "data_set" [DELETE] ["admin", "data", name], SecretCaller
        => |req, rc, caller| analyst::admin::delete(req, rc.env, caller, name).await;
    DataSync "data_sync" [POST] ["admin", "data", name, "sync"], SecretCaller
        => |req, rc, caller| analyst::admin::sync(req, rc.env, caller, name).await;
}
