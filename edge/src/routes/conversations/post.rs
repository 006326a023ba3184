//! `POST /conversations/{id}/messages`: the turn streamed, or with `Prefer: respond-async`
//! accepted for the turn queue — validated here, run by the conversation's object
//! (`crate::object`), one turn at a time.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use concierge_core::engine::{self, Received};
use concierge_core::turn::{TurnInput, TurnJob};
use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, Admitted, AnyKeyCaller, Caller};
use crate::bindings::services::Services;
use crate::bindings::turn_queue;
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_json;
use crate::object::client::{self, Format, ObjectTurn, TurnKind};
use crate::templates::SiteAssistant;

use super::MAX_MESSAGE_CHARS;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    content: String,
}

/// `POST /conversations/{id}/messages`.
///
/// An `Idempotency-Key` header makes the post safe to repeat: the visitor's message is
/// stored once per key and conversation, and a repeat replays the stored reply or answers
/// the stored message again (see `concierge_core::turn`).
pub(crate) async fn post_message(
    mut req: Request,
    env: &Env,
    Admitted { caller, admission }: Admitted<AnyKeyCaller>,
    _ctx: &Context,
    conversation_id: &str,
    request_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let ai_sdk = ai_sdk_format(&req)?;
    // `?format=ai-sdk` decides over `Accept`.
    let json = !ai_sdk && turn_json::wants_json(&req);
    let respond_async = req.headers().get("prefer").ok().flatten().is_some_and(|p| {
        p.split([',', ';'])
            .any(|t| t.trim().eq_ignore_ascii_case("respond-async"))
    });
    let idempotency_key = req.headers().get("idempotency-key").ok().flatten();
    let body: MessageBody = body::json(&mut req).await?;
    let content = body.content.trim();
    if content.is_empty() {
        return Err(ApiError::bad_request("`content` must not be empty."));
    }
    if content.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::bad_request(format!(
            "`content` is over {MAX_MESSAGE_CHARS} characters."
        )));
    }
    let Caller { site, .. } = caller.into_inner();
    // The conversation's object runs the turn: it checks that only the identity the
    // conversation was created with reaches it (from its memory of the conversation) and
    // counts the rate limits while the turn reads, one turn at a time.
    let format = if respond_async {
        Format::Accept
    } else if ai_sdk {
        Format::AiSdk
    } else if json {
        Format::Json
    } else {
        Format::Native
    };
    let job = ObjectTurn {
        conversation_id: conversation_id.to_string(),
        visitor,
        kind: TurnKind::Message {
            text: content.to_string(),
            idempotency_key,
        },
        format,
        limits: admission.limits(),
        request_id: request_id.to_string(),
        site,
    };
    let site_id = job.site.id.clone();
    client::turn(env, &site_id, job).await
}

/// Whether the query asks for the AI SDK's UI message stream (`?format=ai-sdk`) rather
/// than the native stream (no `format`, or `format=native`); any other format is 400.
pub(crate) fn ai_sdk_format(req: &Request) -> Result<bool, ApiError> {
    let url = req.url()?;
    let format = url.query_pairs().find(|(name, _)| name == "format");
    match format.as_ref().map(|(_, value)| value.as_ref()) {
        None | Some("native") => Ok(false),
        Some("ai-sdk") => Ok(true),
        Some(_) => Err(ApiError::bad_request(
            "`format` must be \"native\" or \"ai-sdk\".",
        )),
    }
}

/// `Prefer: respond-async`: the visitor's message is stored now and its answer produced on
/// the turn queue (durable, retried); 202 with the ids. The reply id is the one its answer
/// is stored under (a repeat with the same key of an answered message: the stored one's).
pub(crate) async fn accept(
    env: &Env,
    services: &Services,
    assistant: &SiteAssistant,
    input: &TurnInput,
) -> Result<Response, ApiError> {
    let received = engine::receive(services, assistant, input).await?;
    if let Received::Refused { reply, .. } = &received {
        // Refused before anything was stored (`guarded`'s guardrail): nothing to queue,
        // the refusal is the answer.
        let refused = serde_json::json!({
            "conversation_id": input.conversation_id,
            "refused": true,
            "message": {"role": "assistant", "kind": reply.kind.as_str(), "content": reply.content},
        });
        return Ok(Response::from_json(&refused)?);
    }
    // The visitor's message's embedding (the object outlives the response).
    wasm_bindgen_futures::spawn_local(services.queue_flush());
    if let Received::Pending(pending) = &received {
        let job = TurnJob {
            site_id: input.site_id.clone(),
            conversation_id: input.conversation_id.clone(),
            user_message_id: pending.start.message.id.clone(),
            message_id: pending.reply_id.clone(),
        };
        if let Err(err) = turn_queue::send(env, job, 0, 0).await {
            // Stored but not queued: the message is marked, and a repeat with its key
            // (or a new post) tries again.
            let scope = Scope::new(&input.site_id, &input.conversation_id);
            let code = "turn_not_queued";
            let marked = services
                .store
                .mark_answer_failed(scope, &pending.start.message.id, &pending.reply_id, code)
                .await;
            let line = serde_json::json!({
                "level": "error", "msg": "turn not queued", "error": err.to_string(),
                "marked": marked.is_ok(),
            });
            worker::console_error!("{line}");
            return Err(ApiError::TurnNotQueued);
        }
    }
    let accepted = serde_json::json!({
        "conversation_id": input.conversation_id,
        "user_message_id": received.user_message_id(),
        "message_id": received.reply_id(),
    });
    Ok(Response::from_json(&accepted)?.with_status(202))
}
