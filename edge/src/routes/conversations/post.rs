//! `POST /conversations/{id}/messages`: the turn streamed, or with `Prefer: respond-async`
//! accepted for the turn queue — validated here, run by the conversation's object
//! (`crate::object`), one turn at a time.

use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, Admitted, AnyKeyCaller, Caller};
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_json;
use crate::object::client::{self, Format, ObjectTurn, TurnKind};

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
    super::handoff_queue::admit(&req, env, &caller, conversation_id, content).await?;
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
        openai: None,
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
