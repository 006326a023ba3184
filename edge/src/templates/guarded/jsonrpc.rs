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
use worker::{Env, Request, Response};

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
    // The conversation a method names, on this site only.
    let services = &services;
    let known = |name: &'static str| async move {
        let id = string_param(params, name)?;
        let scope = Scope::new(&site.id, id);
        match services.store.load_conversation(scope).await {
            Ok(Some(conversation)) => Ok(conversation),
            Ok(None) => Err(invalid_params("unknown conversation_id")),
            Err(error) => Err(internal(error)),
        }
    };
    match method {
        "memory-server/memory/get_or_create" => {
            let wanted = params.get("conversation_id").and_then(Value::as_str);
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
        "memory-server/memory/get_context" => {
            let conversation = known("conversation_id").await?;
            let max = params
                .get("max_messages")
                .map(|v| {
                    v.as_u64().ok_or_else(|| {
                        invalid_params("`max_messages` must be a non-negative integer")
                    })
                })
                .transpose()?
                .unwrap_or(KEEP_RECENT_MESSAGES as u64) as usize;
            let rows = memory(env, &conversation).await?;
            let live: Vec<&MemoryRow> = rows
                .iter()
                .filter(|r| r.is_dialogue() && !r.is_compressed())
                .collect();
            let take = max.min(KEEP_RECENT_MESSAGES);
            let recent = &live[live.len().saturating_sub(take)..];
            Ok(json!({ "messages": recent.iter().map(|r| brief(r)).collect::<Vec<_>>() }))
        }
        "memory-server/memory/get_old_messages" => {
            let conversation = known("conversation_id").await?;
            let rows = memory(env, &conversation).await?;
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
        "memory-server/memory/get_all_messages" => {
            let conversation = known("conversation_id").await?;
            let rows = memory(env, &conversation).await?;
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
        "memory-server/memory/get_summary" => {
            let conversation = known("conversation_id").await?;
            let summary = services
                .store
                .load_summary(conversation.scope())
                .await
                .map_err(internal)?;
            Ok(json!({ "summary": summary.map(|s| s.content).unwrap_or_default() }))
        }
        "memory-server/memory/add_message" => {
            let conversation = known("conversation_id").await?;
            let role = match string_param(params, "role")? {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => return Err(invalid_params("`role` must be \"user\" or \"assistant\"")),
            };
            let content = string_param(params, "content")?;
            if content.chars().count() > MAX_CONTENT_CHARS {
                return Err(invalid_params("`content` is over 32000 characters"));
            }
            let kind = if role == Role::User {
                MessageKind::Text
            } else {
                MessageKind::Answer
            };
            let message = StoredMessage {
                id: services_id(services),
                seq: 0,
                role,
                kind,
                content: content.to_string(),
                metadata: Metadata::new(),
                created_at: crate::runtime::now_ms(),
                tool_steps: Vec::new(),
                payloads: Vec::new(),
            };
            services
                .store
                .append_message(conversation.scope(), &message)
                .await
                .map_err(internal)?;
            Ok(json!({ "message_id": message.id }))
        }
        "memory-server/memory/set_summary" => {
            let conversation = known("conversation_id").await?;
            let summary = params
                .get("summary")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid_params("`summary` must be a string"))?;
            let compress = match params.get("compress") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(invalid_params("`compress` must be a boolean")),
            };
            let rows = memory(env, &conversation).await?;
            let upto = rows.last().map_or(0.0, |r| r.seq);
            let record = Summary {
                content: summary.to_string(),
                upto_seq: upto as u64,
                updated_at: crate::runtime::now_ms(),
            };
            let scope = conversation.scope();
            services
                .store
                .save_summary(scope, &record)
                .await
                .map_err(internal)?;
            let mut compressed = 0;
            if compress && COMPRESS_AFTER_SUMMARY {
                let delete = super::settings::get(site).compression_deletes;
                // In the conversation's record (its object), the one writer of its rows.
                compressed = services
                    .store
                    .compress_messages(scope, KEEP_RECENT_MESSAGES, 0, delete)
                    .await
                    .map_err(internal)?;
            }
            Ok(json!({ "ok": true, "compressed": compressed }))
        }
        "tool-server/tools/call" => {
            if params.get("name").and_then(Value::as_str) != Some(SEARCH_TOOL) {
                return Err(invalid_params(
                    "unknown tool (the tool is \"duckduckgo_search\")",
                ));
            }
            let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
            let query = string_param(&arguments, "query")?;
            let search = SiteSearch::for_site(env, site).map_err(internal)?;
            match search.search(query, MAX_SEARCH_RESULTS).await {
                Ok(results) => Ok(json!({ "content": results_text(&results) })),
                Err(error) => Err(internal(error)),
            }
        }
        _ => Err(RpcError {
            code: -32601,
            message: "Method not found",
            data: None,
        }),
    }
}

fn services_id(services: &Services) -> String {
    use concierge_core::engine::Platform;
    services.ids().new_id()
}

/// The conversation's messages, read in its record (its object).
async fn memory(env: &Env, conversation: &Conversation) -> Result<Vec<MemoryRow>, RpcError> {
    let db = crate::bindings::record::remote(env, conversation.scope(), false).map_err(internal)?;
    d1_memory::messages(&db, conversation.scope())
        .await
        .map_err(internal)
}

fn brief(row: &MemoryRow) -> Value {
    json!({ "role": row.role, "content": row.content })
}
