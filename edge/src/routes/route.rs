//! The routes: which method and path match which [`Route`], and each route's name.

use worker::Method;

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
