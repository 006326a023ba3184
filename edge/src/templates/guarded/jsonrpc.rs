//! `POST /jsonrpc`: seed 004's "MCP" server — JSON-RPC 2.0 with namespaced methods
//! (`memory-server/memory/…`, `tool-server/tools/call`) over the site's conversations and
//! web search. Secret key only (it reads and writes any conversation of the key's site).
//!
//! Errors: parse error -32700, invalid request -32600, unknown method -32601, invalid
//! params -32602 `"Invalid params"` (an unknown `conversation_id`, another site's
//! included: `data.reason = "unknown conversation_id"`, no data of it), internal -32603.
//!
//! A body is one request: the seed has no batches, so an array is -32600. A body over
//! 256 KB is 413 `payload_too_large`, refused by its declared length or, streamed without
//! one, as soon as the bytes read pass the cap (the rest is never read).

use concierge_core::boundary::{ConversationStore, WebSearch};
use concierge_core::chat::Role;
use concierge_core::conversation::{
    Conversation, Language, MessageKind, Metadata, Scope, StoredMessage, Summary,
};
use concierge_core::flows::guarded::{
    COMPRESS_AFTER_SUMMARY, KEEP_RECENT_MESSAGES, MAX_SEARCH_RESULTS, SEARCH_TOOL, results_text,
};
use serde_json::{Value, json};
use worker::{D1Database, Env, Request, Response};

use super::web_search::SiteSearch;
use crate::auth::SecretCaller;
use crate::bindings::d1_memory::{self, MemoryRow};
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::site::Site;

/// Largest request body accepted (413 past it, without reading on).
const MAX_BODY_BYTES: usize = 256 * 1024;

/// Longest message `add_message` stores, in characters.
const MAX_CONTENT_CHARS: usize = 32_000;

/// A JSON-RPC error.
pub(crate) struct RpcError {
    code: i64,
    message: &'static str,
    data: Option<Value>,
}

impl RpcError {
    /// The error as a sentence (an MCP tool error's text).
    pub(crate) fn describe(&self) -> String {
        match self.data.as_ref().and_then(|d| d["reason"].as_str()) {
            Some(reason) => format!("{}: {reason}", self.message),
            None => self.message.to_string(),
        }
    }
}

fn invalid_params(reason: &str) -> RpcError {
    RpcError {
        code: -32602,
        message: "Invalid params",
        data: Some(json!({ "reason": reason })),
    }
}

fn internal(detail: impl std::fmt::Display) -> RpcError {
    let line =
        json!({"level": "error", "msg": "jsonrpc internal error", "detail": detail.to_string()});
    worker::console_error!("{line}");
    RpcError {
        code: -32603,
        message: "Internal error",
        data: None,
    }
}

/// `POST /jsonrpc`.
pub(crate) async fn handle(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let bytes = body::capped(&mut req, MAX_BODY_BYTES, "The request body is over 256 KB.").await?;
    let reply = match serde_json::from_slice::<Value>(&bytes) {
        Err(_) => envelope(
            Value::Null,
            Err(RpcError {
                code: -32700,
                message: "Parse error",
                data: None,
            }),
        ),
        Ok(request) => {
            let id = request.get("id").cloned().unwrap_or(Value::Null);
            let method = request.get("method").and_then(Value::as_str);
            let valid = request.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let result = match method {
                Some(method) if valid && params.is_object() => {
                    call(env, &caller.site, method, &params).await
                }
                _ => Err(RpcError {
                    code: -32600,
                    message: "Invalid Request",
                    data: None,
                }),
            };
            envelope(id, result)
        }
    };
    Ok(Response::from_json(&reply)?)
}

fn envelope(id: Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "result": result, "id": id}),
        Err(error) => {
            let mut body = json!({"code": error.code, "message": error.message});
            if let Some(data) = error.data {
                body["data"] = data;
            }
            json!({"jsonrpc": "2.0", "error": body, "id": id})
        }
    }
}

fn string_param<'a>(params: &'a Value, name: &str) -> Result<&'a str, RpcError> {
    params
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| invalid_params(&format!("`{name}` must be a non-empty string")))
}

/// Runs the seed's `method` for `site` (also the `guarded` MCP tools).
pub(crate) async fn call(
    env: &Env,
    site: &Site,
    method: &str,
    params: &Value,
) -> Result<Value, RpcError> {
    let services = Services::new(env, site).map_err(internal)?;
    let db = env.d1("DB").map_err(internal)?;
    let rpc = Rpc {
        env,
        site,
        services: &services,
        db: &db,
        params,
    };
    match method {
        "memory-server/memory/get_or_create" => rpc.get_or_create().await,
        "memory-server/memory/get_context" => rpc.get_context().await,
        "memory-server/memory/get_old_messages" => rpc.get_old_messages().await,
        "memory-server/memory/get_all_messages" => rpc.get_all_messages().await,
        "memory-server/memory/get_summary" => rpc.get_summary().await,
        "memory-server/memory/add_message" => rpc.add_message().await,
        "memory-server/memory/set_summary" => rpc.set_summary().await,
        "tool-server/tools/call" => rpc.tool_call().await,
        _ => Err(RpcError {
            code: -32601,
            message: "Method not found",
            data: None,
        }),
    }
}

/// One call's context: the site's platform and the call's parameters.
struct Rpc<'a> {
    env: &'a Env,
    site: &'a Site,
    services: &'a Services,
    db: &'a D1Database,
    params: &'a Value,
}

impl Rpc<'_> {
    /// The conversation the parameter `name` names, on this site only.
    async fn known(&self, name: &'static str) -> Result<Conversation, RpcError> {
        let id = string_param(self.params, name)?;
        let scope = Scope::new(&self.site.id, id);
        match self.services.store.load_conversation(scope).await {
            Ok(Some(conversation)) => Ok(conversation),
            Ok(None) => Err(invalid_params("unknown conversation_id")),
            Err(error) => Err(internal(error)),
        }
    }

    /// `memory/get_or_create`: the named conversation of this site, else a new one.
    async fn get_or_create(&self) -> Result<Value, RpcError> {
        let (site, services) = (self.site, self.services);
        let wanted = self.params.get("conversation_id").and_then(Value::as_str);
        if let Some(id) = wanted.filter(|id| !id.is_empty()) {
            let scope = Scope::new(&site.id, id);
            if let Some(found) = services
                .store
                .load_conversation(scope)
                .await
                .map_err(internal)?
            {
                return Ok(json!({ "conversation_id": found.id }));
            }
        }
        // A new, server-minted id (a client-chosen id is never adopted).
        let conversation = Conversation {
            id: services_id(services),
            site_id: site.id.clone(),
            user_id: None,
            identity: None,
            language: Language::default(),
            created_at: crate::runtime::now_ms(),
        };
        services
            .store
            .create_conversation(&conversation)
            .await
            .map_err(internal)?;
        Ok(json!({ "conversation_id": conversation.id }))
    }

    /// `memory/get_context`: the last messages of the window (at most `max_messages`).
    async fn get_context(&self) -> Result<Value, RpcError> {
        let conversation = self.known("conversation_id").await?;
        let max = self
            .params
            .get("max_messages")
            .map(|v| {
                v.as_u64()
                    .ok_or_else(|| invalid_params("`max_messages` must be a non-negative integer"))
            })
            .transpose()?
            .unwrap_or(KEEP_RECENT_MESSAGES as u64) as usize;
        let rows = memory(self.db, &conversation).await?;
        let live: Vec<&MemoryRow> = rows
            .iter()
            .filter(|r| r.is_dialogue() && !r.is_compressed())
            .collect();
        let take = max.min(KEEP_RECENT_MESSAGES);
        let recent = &live[live.len().saturating_sub(take)..];
        Ok(json!({ "messages": recent.iter().map(|r| brief(r)).collect::<Vec<_>>() }))
    }

    /// `memory/get_old_messages`: the uncompressed messages before the window.
    async fn get_old_messages(&self) -> Result<Value, RpcError> {
        let conversation = self.known("conversation_id").await?;
        let rows = memory(self.db, &conversation).await?;
        let dialogue: Vec<&MemoryRow> = rows.iter().filter(|r| r.is_dialogue()).collect();
        let live: Vec<&MemoryRow> = dialogue
            .iter()
            .copied()
            .filter(|r| !r.is_compressed())
            .collect();
        let old = &live[..live.len().saturating_sub(KEEP_RECENT_MESSAGES)];
        Ok(json!({
            "old_messages": old.iter().map(|r| brief(r)).collect::<Vec<_>>(),
            "total_count": dialogue.len(),
        }))
    }

    /// `memory/get_all_messages`: every visitor and assistant message, compressed or not.
    async fn get_all_messages(&self) -> Result<Value, RpcError> {
        let conversation = self.known("conversation_id").await?;
        let rows = memory(self.db, &conversation).await?;
        let all: Vec<Value> = rows
            .iter()
            .filter(|r| matches!(r.role.as_str(), "user" | "assistant"))
            .map(|r| {
                json!({"role": r.role, "content": r.content, "created_at": (r.created_at / 1000.0).floor(),
                    "compressed": r.is_compressed()})
            })
            .collect();
        Ok(json!({ "messages": all }))
    }

    /// `memory/get_summary`: the conversation's summary, empty without one.
    async fn get_summary(&self) -> Result<Value, RpcError> {
        let conversation = self.known("conversation_id").await?;
        let summary = self
            .services
            .store
            .load_summary(conversation.scope())
            .await
            .map_err(internal)?;
        Ok(json!({ "summary": summary.map(|s| s.content).unwrap_or_default() }))
    }

    /// `memory/add_message`: a visitor's or assistant's message appended.
    async fn add_message(&self) -> Result<Value, RpcError> {
        let conversation = self.known("conversation_id").await?;
        let role = match string_param(self.params, "role")? {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => return Err(invalid_params("`role` must be \"user\" or \"assistant\"")),
        };
        let content = string_param(self.params, "content")?;
        if content.chars().count() > MAX_CONTENT_CHARS {
            return Err(invalid_params("`content` is over 32000 characters"));
        }
        let kind = if role == Role::User {
            MessageKind::Text
        } else {
            MessageKind::Answer
        };
        let message = StoredMessage {
            id: services_id(self.services),
            seq: 0,
            role,
            kind,
            content: content.to_string(),
            metadata: Metadata::new(),
            created_at: crate::runtime::now_ms(),
            tool_steps: Vec::new(),
            payloads: Vec::new(),
        };
        self.services
            .store
            .append_message(conversation.scope(), &message)
            .await
            .map_err(internal)?;
        Ok(json!({ "message_id": message.id }))
    }

    /// `memory/set_summary`: the summary kept up to the last message; with `compress`,
    /// the messages before the window compressed.
    async fn set_summary(&self) -> Result<Value, RpcError> {
        let conversation = self.known("conversation_id").await?;
        let summary = self
            .params
            .get("summary")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_params("`summary` must be a string"))?;
        let compress = match self.params.get("compress") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(invalid_params("`compress` must be a boolean")),
        };
        let rows = memory(self.db, &conversation).await?;
        let upto = rows.last().map_or(0.0, |r| r.seq);
        let record = Summary {
            content: summary.to_string(),
            upto_seq: upto as u64,
            updated_at: crate::runtime::now_ms(),
        };
        let scope = conversation.scope();
        self.services
            .store
            .save_summary(scope, &record)
            .await
            .map_err(internal)?;
        let mut compressed = 0;
        if compress && COMPRESS_AFTER_SUMMARY {
            let delete = super::settings::get(self.site).compression_deletes;
            compressed = d1_memory::compress_old(self.db, scope, KEEP_RECENT_MESSAGES, 0, delete)
                .await
                .map_err(internal)?;
        }
        Ok(json!({ "ok": true, "compressed": compressed }))
    }

    /// `tools/call`: the web search, the one tool.
    async fn tool_call(&self) -> Result<Value, RpcError> {
        if self.params.get("name").and_then(Value::as_str) != Some(SEARCH_TOOL) {
            return Err(invalid_params(
                "unknown tool (the tool is \"duckduckgo_search\")",
            ));
        }
        let arguments = self.params.get("arguments").cloned().unwrap_or(Value::Null);
        let query = string_param(&arguments, "query")?;
        let search = SiteSearch::for_site(self.env, self.site).map_err(internal)?;
        match search.search(query, MAX_SEARCH_RESULTS).await {
            Ok(results) => Ok(json!({ "content": results_text(&results) })),
            Err(error) => Err(internal(error)),
        }
    }
}

fn services_id(services: &Services) -> String {
    use concierge_core::engine::Platform;
    services.ids().new_id()
}

async fn memory(
    db: &worker::D1Database,
    conversation: &Conversation,
) -> Result<Vec<MemoryRow>, RpcError> {
    d1_memory::messages(db, conversation.scope())
        .await
        .map_err(internal)
}

fn brief(row: &MemoryRow) -> Value {
    json!({ "role": row.role, "content": row.content })
}
