//! The MCP tools, run for one site (the key's): knowledge search (what `POST
//! /admin/search` finds), a conversation's messages, a turn of the site's assistant, and
//! `shop`'s warranty lookup. Every failure is a tool error the client's model can read;
//! internal details are logged, never returned.

use concierge_core::boundary::{ConversationStore, WarrantyRecords};
use concierge_core::chat::Role;
use concierge_core::conversation::Scope;
use concierge_core::engine::{self, StatelessInput};
use concierge_core::error::Error;
use concierge_core::mcp::tools::{self, ToolCall};
use concierge_core::retrieval::{self, PassageSource, RetrievalOptions};
use concierge_core::turn::TurnEvent;
use serde_json::{Value, json};
use worker::Env;

use super::conversations::message_json;
use crate::auth::Visitor;
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::object::client::{self, Format, ObjectTurn, TurnKind};
use crate::site::Site;
use crate::templates::SiteAssistant;

/// What a tool runs with.
#[derive(Debug)]
pub(crate) struct ToolContext<'a> {
    pub env: &'a Env,
    pub site: &'a Site,
    pub visitor: &'a Visitor,
}

/// The answer to a conversation the caller cannot see (another site's, another user's, or
/// none): the same for all three.
const NO_CONVERSATION: &str = "No conversation with this id on this site.";

/// Run `call`: its result, or a tool error.
pub(crate) async fn run(cx: &ToolContext<'_>, call: ToolCall) -> Value {
    let name = match &call {
        ToolCall::SearchKnowledge { .. } => "search_knowledge",
        ToolCall::GetConversation { .. } => "get_conversation",
        ToolCall::SendMessage { .. } => "send_message",
        ToolCall::LookupWarranty { .. } => "lookup_warranty",
        ToolCall::Guarded { method, .. } => method,
    };
    match outcome(cx, call).await {
        Ok(result) => result,
        Err(error) => {
            let line = json!({"level": "error", "msg": "mcp tool failed", "tool": name,
                "site": cx.site.id, "detail": error.chain()});
            worker::console_error!("{line}");
            let (_, _, message) = error.parts();
            tools::error(&format!("{name} failed: {message}"))
        }
    }
}

async fn outcome(cx: &ToolContext<'_>, call: ToolCall) -> Result<Value, ApiError> {
    let services = Services::new(cx.env, cx.site)?;
    let site_id = cx.site.id.as_str();
    match call {
        ToolCall::SearchKnowledge { query, limit } => {
            let options = RetrievalOptions {
                top_k: limit,
                candidates: limit.max(RetrievalOptions::default().candidates),
                ..RetrievalOptions::default()
            };
            // Knowledge only: no conversation is named, so no conversation memory.
            let scope = Scope::new(site_id, "");
            let passages = retrieval::retrieve(
                &services.upstream,
                &services.vectors,
                scope,
                &query,
                &options,
                &[],
            )
            .await?;
            let results: Vec<Value> = passages
                .iter()
                .filter(|p| p.source == PassageSource::Knowledge)
                .map(|p| json!({"id": p.id, "title": p.title, "text": p.text, "score": p.score}))
                .collect();
            Ok(tools::result(json!({"query": query, "results": results})))
        }
        ToolCall::GetConversation { conversation_id } => {
            let scope = Scope::new(site_id, &conversation_id);
            let reachable = crate::auth::reachable_conversation(&services.store, scope, cx.visitor);
            let Some(conversation) = reachable.await? else {
                return Ok(tools::error(NO_CONVERSATION));
            };
            let messages = services
                .store
                .load_recent_messages(scope, 1_000)
                .await
                .map_err(ApiError::store)?;
            Ok(tools::result(json!({
                "conversation_id": conversation.id,
                "language": conversation.language,
                "created_at": conversation.created_at,
                "messages": messages.iter().map(message_json).collect::<Vec<_>>(),
            })))
        }
        ToolCall::SendMessage {
            message,
            conversation_id,
        } => send(cx, &services, message, conversation_id).await,
        ToolCall::LookupWarranty { serial } => {
            let record = crate::site_object::warranty::SiteWarranty::new(&services.env)
                .find_warranty(site_id, &serial)
                .await
                .map_err(|e| ApiError::from(Error::Records(e)))?;
            Ok(tools::result(match record {
                Some(record) => json!({
                    "found": true,
                    "serial": record.serial,
                    "product": record.product,
                    "warranty_until": record.warranty_until,
                }),
                None => json!({"found": false, "serial": serial}),
            }))
        }
        // `guarded`'s memory and search tools: the seed's JSON-RPC methods, which read and
        // write any conversation of the site, so only the site's own server may call them.
        ToolCall::Guarded { method, params } => {
            if !matches!(cx.visitor, Visitor::Site) {
                return Ok(tools::error(
                    "This tool takes the site's secret key without a user token.",
                ));
            }
            Ok(
                match crate::templates::seed_rpc_call(cx.env, cx.site, method, &params).await {
                    Ok(result) => tools::result(result),
                    Err(error) => tools::error(&error.describe()),
                },
            )
        }
    }
}

/// `send_message`: a stored turn of `conversation_id` — run in the conversation's object
/// like a native post (in its line, seen live by its watchers), answered whole — or a
/// stateless one, run here.
async fn send(
    cx: &ToolContext<'_>,
    services: &Services,
    message: String,
    conversation_id: Option<String>,
) -> Result<Value, ApiError> {
    let site_id = cx.site.id.clone();
    let Some(conversation_id) = conversation_id else {
        let assistant = SiteAssistant::for_site(cx.env, cx.site)?;
        // The answer is returned whole; its events are not streamed.
        let mut sink = |_: TurnEvent| {};
        let identity = match cx.visitor {
            Visitor::User(identity) => identity.clone(),
            Visitor::Site => None,
        };
        let input = StatelessInput {
            site_id,
            messages: vec![(Role::User, message)],
            identity,
        };
        return Ok(
            match engine::run_stateless(services, &assistant, input, &mut sink).await {
                Ok(outcome) => tools::result(json!({
                    "answer": outcome.reply.content,
                    "kind": outcome.reply.kind.as_str(),
                    "conversation_id": null,
                    "message_id": null,
                    "stored": false,
                })),
                Err(error) => turn_error(cx, &error),
            },
        );
    };
    let scope = Scope::new(&site_id, &conversation_id);
    let reachable = crate::auth::reachable_conversation(&services.store, scope, cx.visitor);
    if reachable.await?.is_none() {
        return Ok(tools::error(NO_CONVERSATION));
    }
    // A stored conversation's turn runs in its object, in the conversation's line, seen
    // live by its watchers; answered as one JSON document once it is over.
    let job = ObjectTurn {
        site: cx.site.clone(),
        conversation_id: conversation_id.clone(),
        visitor: cx.visitor.clone(),
        kind: TurnKind::Message {
            text: message,
            idempotency_key: None,
        },
        format: Format::Json,
        limits: Vec::new(),
        request_id: String::new(),
        openai: None,
    };
    let mut response = client::turn(cx.env, &site_id, job).await?;
    let status = response.status_code();
    let body: Value = response.json().await?;
    if status != 200 {
        let code = body["error"]["code"].as_str().unwrap_or("internal");
        if matches!(code, "conversation_not_found" | "not_found") {
            return Ok(tools::error(NO_CONVERSATION));
        }
        let detail = body["error"]["message"].as_str();
        let line = json!({"level": "warn", "msg": "mcp turn failed", "site": cx.site.id,
            "code": code, "status": status});
        worker::console_warn!("{line}");
        return Ok(tools::error(&format!(
            "The assistant could not answer ({code}): {}",
            detail.unwrap_or("Something went wrong. Please try again.")
        )));
    }
    Ok(tools::result(json!({
        "answer": body["message"],
        "kind": body["kind"],
        "conversation_id": conversation_id,
        "message_id": body["message_id"],
        "stored": true,
    })))
}

/// A failed turn as a tool error: the engine's public message (the detail is logged).
fn turn_error(cx: &ToolContext<'_>, error: &Error) -> Value {
    let line = json!({"level": "warn", "msg": "mcp turn failed", "site": cx.site.id,
        "code": error.code(), "detail": error.to_string()});
    worker::console_warn!("{line}");
    tools::error(&format!(
        "The assistant could not answer ({}): {}",
        error.code(),
        error.public_message()
    ))
}
