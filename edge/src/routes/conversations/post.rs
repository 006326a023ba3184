//! `POST /conversations/{id}/messages`: the turn streamed, or with `Prefer: respond-async`
//! accepted for the turn queue.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use concierge_core::engine::{self, Received};
use concierge_core::stream::native::NativeEncoder;
use concierge_core::turn::{TurnInput, TurnJob};
use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, Admitted, AnyKeyCaller, Caller, Visitor};
use crate::bindings::d1_store::remembered;
use crate::bindings::services::Services;
use crate::bindings::turn_queue;
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_json;
use crate::http::turn_stream::{self, TurnRun};
use crate::templates::{SiteAssistant, turn_context};

use super::{MAX_MESSAGE_CHARS, reachable};

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
    ctx: &Context,
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
    // The site runs the template it names (an unbuilt one is refused before anything is
    // stored).
    // With `DEBUG_ROUTES` on (tests, dev), a staged test script plays instead.
    let (assistant, services) = turn_context(env, &site)?;
    let assistant = assistant.with_debug_scripts(env);
    // The rate limits are counted while the turn reads the conversation…
    let scope = Scope::new(&site.id, conversation_id);
    let admission = if matches!(visitor, Visitor::Site) {
        Some(admission)
    } else if let Some(conversation) = remembered::conversation(scope) {
        // A conversation's identity never changes: what this isolate read of it decides who
        // reaches it (the turn's write still finds out whether it exists).
        if !visitor.may_access(&conversation) {
            return Err(ApiError::NotFound);
        }
        Some(admission)
    } else {
        // … or, for a visitor, while checking that only the identity the conversation was
        // created with reaches it: before anything is stored (its identity never changes).
        let reached = reachable(&services, &site.id, conversation_id, &visitor);
        let (admitted, reached) = futures_util::future::join(admission.check(), reached).await;
        admitted?;
        reached?;
        None
    };
    // No separate existence check: the turn loads the conversation itself, and a turn that
    // fails before the visitor's message is stored (unknown conversation, another site's,
    // invalid message or key) is answered below with an HTTP error instead of a stream.
    let input = TurnInput {
        site_id: site.id.clone(),
        conversation_id: conversation_id.to_string(),
        text: content.to_string(),
        idempotency_key,
    };
    if respond_async {
        if let Some(limits) = admission {
            limits.check().await?;
        }
        return accept(env, ctx, &services, &assistant, &input).await;
    }
    let run = match admission {
        Some(limits) => TurnRun::Admitted(input, limits),
        None => TurnRun::Stored(input),
    };
    if ai_sdk {
        turn_stream::respond_ai_sdk(ctx, services, assistant, run, request_id).await
    } else if json {
        turn_json::respond_json(services, assistant, run, request_id).await
    } else {
        let encoder = NativeEncoder::new().with_request_id(request_id.to_string());
        turn_stream::respond(ctx, services, assistant, run, encoder, request_id).await
    }
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
async fn accept(
    env: &Env,
    ctx: &Context,
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
    // The visitor's message's embedding.
    ctx.wait_until(services.queue_flush());
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
