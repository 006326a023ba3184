//! The router: the Worker's own route table ([`Core`], a [`routes!`] table: one row per
//! route — its name in code and in logs, the methods it serves, its path, who may call it
//! and its handler), then the templates' tables ([`templates::Route`], each template's
//! own `templates/<t>/routes.rs`, composed by the registry), into one [`Route`].
//!
//! Matching: within a table, the first row whose path matches decides, together with the
//! rows just like it (same path pattern, other methods); `OPTIONS` on such a path is a CORS
//! [`Route::Preflight`], another method is [`Route::MethodNotAllowed`]. The Worker's table
//! is asked first, then each template's in the registry's order; no path is in two tables.
//! A path no table matches is [`Route::NotFound`].

use worker::{Method, Request, Response};

use crate::auth::{Admitted, AnyKeyCaller, Open, Operator, SecretCaller};
use crate::error::ApiError;
pub(crate) use crate::http::table::RequestContext;
use crate::http::table::{DELETE, GET, HEAD, Match, PATCH, POST, routes};
use crate::routes::{
    admin, ai_sdk, console, console_admin, conversations, debug_script, feedback, follow_up,
    health, mcp, openai, preflight, regenerate, stream, widget,
};
use crate::templates;

/// A matched route (or why none matched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// A route of the Worker's own table.
    Core(Core),
    /// A route of a template's table.
    Template(templates::Route),
    Preflight,
    MethodNotAllowed,
    NotFound,
}

impl Route {
    /// Match a method and path.
    pub(crate) fn of(method: &Method, path: &str) -> Self {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let found = match Core::of(method, &segments).map(Self::Core) {
            Match::None => templates::Route::of(method, &segments).map(Self::Template),
            found => found,
        };
        match found {
            Match::Route(route) => route,
            Match::Preflight => Self::Preflight,
            Match::MethodNotAllowed => Self::MethodNotAllowed,
            Match::None => Self::NotFound,
        }
    }

    /// A stable name for logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Core(route) => route.name(),
            Self::Template(route) => route.name(),
            Self::Preflight => "preflight",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotFound => "not_found",
        }
    }
}

/// Run the handler for `route`, once its caller is who its table says may call it.
pub(crate) async fn handle(
    route: Route,
    req: Request,
    rc: &RequestContext<'_>,
) -> Result<Response, ApiError> {
    match route {
        Route::Core(route) => route.handle(req, rc).await,
        Route::Template(route) => route.handle(req, rc).await,
        Route::Preflight => preflight(&req, rc.env).await,
        Route::MethodNotAllowed => Err(ApiError::MethodNotAllowed),
        Route::NotFound => Err(ApiError::NotFound),
    }
}

routes! {
    enum Core;
    Health "health" [GET | HEAD] ["health"], Open
        => |req, rc, _| health::get(rc.env);
    DebugBindings "debug_bindings" [GET] ["debug", "bindings"], Open
        => |req, rc, _| stream::bindings(rc.env);
    // Open: 404 unless the debug flag is on.
    DebugD1Faults "debug_d1_faults" [POST] ["debug", "d1-faults"], Open
        => |req, rc, _| stream::d1_faults(req, rc.env).await;
    DebugStream "debug_stream" [GET] ["debug", "stream"], Open
        => |req, rc, _| stream::get(&req, rc.env);
    // Open: 404 unless the debug flag is on; then the handler takes an `AnyKeyCaller`.
    DebugScript "debug_script" [POST] ["debug", "conversations", id, "script"], Open
        => |req, rc, _| debug_script::stage(req, rc.env, id).await;
    // Open: 404 unless the debug flag is on; then the handler takes an `AnyKeyCaller`.
    DebugAbort "debug_abort" [POST] ["debug", "conversations", id, "abort"], Open
        => |req, rc, _| stream::abort(req, rc.env, id).await;
    // Open: 404 unless the debug flag is on; then the handler takes a secret key.
    DebugSiteSql "debug_site_sql" [POST] ["debug", "site-sql"], Open
        => |req, rc, _| stream::site_sql(req, rc.env).await;
    // Open: 404 unless the debug flag is on; then the handler takes a secret key.
    DebugObject "debug_object" [GET] ["debug", "conversations", id, "object"], Open
        => |req, rc, _| stream::object_state(req, rc.env, id).await;
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
    AdminUsage "admin_usage" [GET] ["admin", "usage"], SecretCaller
        => |req, rc, caller| admin::usage(rc.env, caller).await;
    AdminGetDraft "admin_get_draft" [GET] ["admin", "site", "draft"], SecretCaller
        => |req, rc, caller| admin::get_draft(rc.env, caller).await;
    AdminUpdateDraft "admin_update_draft" [PATCH] ["admin", "site", "draft"], SecretCaller
        => |req, rc, caller| admin::update_draft(req, rc.env, caller).await;
    AdminDiscardDraft "admin_discard_draft" [DELETE] ["admin", "site", "draft"], SecretCaller
        => |req, rc, caller| admin::discard_draft(rc.env, caller).await;
    AdminDraftKey "admin_draft_key" [POST] ["admin", "site", "draft", "key"], SecretCaller
        => |req, rc, caller| admin::draft_key(caller).await;
    AdminPublish "admin_publish" [POST] ["admin", "publish"], SecretCaller
        => |req, rc, caller| admin::publish(req, rc.env, caller).await;
    AdminVersions "admin_versions" [GET] ["admin", "versions"], SecretCaller
        => |req, rc, caller| admin::versions(rc.env, caller).await;
    AdminVersion "admin_version" [GET] ["admin", "versions", id], SecretCaller
        => |req, rc, caller| admin::get_version(rc.env, caller, id).await;
    AdminRestore "admin_restore" [POST] ["admin", "versions", id, "restore"], SecretCaller
        => |req, rc, caller| admin::restore(req, rc.env, caller, id).await;
    AdminTestCreate "admin_test_create" [POST] ["admin", "tests"], SecretCaller
        => |req, rc, caller| admin::test_cases::create(req, rc.env, caller).await;
    AdminTests "admin_tests" [GET] ["admin", "tests"], SecretCaller
        => |req, rc, caller| admin::test_cases::list(rc.env, caller).await;
    AdminTestPropose "admin_test_propose" [POST] ["admin", "tests", "propose"], SecretCaller
        => |req, rc, caller| admin::test_cases::propose(req, rc.env, caller).await;
    AdminTestRunCreate "admin_test_run_create" [POST] ["admin", "tests", "runs"], SecretCaller
        => |req, rc, caller| admin::test_runs::create(req, rc.env, caller).await;
    AdminTestRun "admin_test_run" [GET] ["admin", "tests", "runs", id], SecretCaller
        => |req, rc, caller| admin::test_runs::get(rc.env, caller, id).await;
    AdminTestCompare "admin_test_compare" [GET] ["admin", "tests", "compare"], SecretCaller
        => |req, rc, caller| admin::test_runs::get_compare(req, rc.env, caller).await;
    AdminPublishCheck "admin_publish_check" [POST] ["admin", "publish", "check"], SecretCaller
        => |req, rc, caller| admin::test_runs::check(rc.env, caller).await;
    AdminTestDelete "admin_test_delete" [DELETE] ["admin", "tests", id], SecretCaller
        => |req, rc, caller| admin::test_cases::delete(rc.env, caller, id).await;
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
    AdminTemplateDefaults "admin_template_defaults" [GET] ["admin", "template-defaults"], SecretCaller
        => |req, rc, caller| console_admin::template_defaults(caller);
    AdminTryToken "admin_try_token" [POST] ["admin", "try-token"], SecretCaller
        => |req, rc, caller| console_admin::try_token(req, rc.env, caller).await;
    AdminHandoffs "admin_handoffs" [GET] ["admin", "handoffs"], SecretCaller
        => |req, rc, caller| console_admin::handoffs(&req, rc.env, caller).await;
    AdminHandoff "admin_handoff" [POST] ["admin", "conversations", id, "handoff"], SecretCaller
        => |req, rc, caller| console_admin::handoff_operation(req, rc.env, caller, id).await;
    AdminFollowUps "admin_follow_ups" [GET] ["admin", "follow-ups"], SecretCaller
        => |req, rc, caller| follow_up::list(req, rc.env, caller).await;
    AdminFollowUpDone "admin_follow_up_done" [POST] ["admin", "follow-ups", id, "done"], SecretCaller
        => |req, rc, caller| follow_up::done(rc.env, caller, id).await;
    AdminHumanReply "admin_human_reply" [POST] ["admin", "conversations", id, "messages", "human"],
        SecretCaller => |req, rc, caller| console_admin::human_reply(req, rc.env, caller, id).await;
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
    ConversationStream "conversation_stream" [GET] ["conversations", id, "stream"], AnyKeyCaller
        => |req, rc, caller| conversations::resume(req, rc.env, caller, id).await;
    ConversationEvents "conversation_events" [GET] ["conversations", id, "events"], AnyKeyCaller
        => |req, rc, caller| conversations::events(req, rc.env, caller, id).await;
    ConversationStop "conversation_stop" [POST] ["conversations", id, "stop"], AnyKeyCaller
        => |req, rc, caller| conversations::stop(req, rc.env, caller, id).await;
    ConversationHistory "conversation_history" [GET] ["conversations", id, "history"], AnyKeyCaller
        => |req, rc, caller| conversations::history(req, rc.env, caller, id).await;
    ConversationFollowUp "conversation_follow_up" [POST] ["conversations", id, "follow-up"],
        AnyKeyCaller => |req, rc, caller| follow_up::post(req, rc.env, caller, id).await;
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
        => |req, rc, caller| mcp::handle(req, rc.env, caller).await;
    AiSdkChat "ai_sdk_chat" [POST] ["api", "chat"], AnyKeyCaller
        => |req, rc, caller| ai_sdk::chat(req, rc.env, caller, rc.ctx, rc.request_id).await;
    AiSdkResume "ai_sdk_resume" [GET] ["api", "chat", id, "stream"], AnyKeyCaller
        => |req, rc, caller| ai_sdk::resume(req, rc.env, caller, id).await;
}
