//! `POST /conversations/{id}/regenerate`: the conversation's last answer, answered again.
//!
//! Same authentication as posting a message (the site's public key from an allowed origin,
//! or its secret key; a signed user token where the conversation is bound to an identity)
//! and the same rate limits; the answer comes as the same native SSE stream
//! (`?format=ai-sdk`: the AI SDK's UI message stream). The stored visitor's message is
//! answered again under a new reply id and the old answer is deleted with its votes (see
//! [`concierge_core::engine::regenerate`]): the question is never stored twice and the old answer is in
//! no later prompt.
//!
//! Optional JSON body `{"message_id": "…"}`: the answer (or unanswered visitor's message)
//! the client means to replace. 409 `not_last_turn` when it is not the last turn's — a
//! second click on an answer already replaced — or there is nothing to answer; 409
//! `turn_in_progress` while the last message is still being answered (a regenerate
//! included). Another site's, another visitor's or an unknown conversation: 404.

use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, Admitted, AnyKeyCaller, Caller};
use crate::error::ApiError;
use crate::http::body;
use crate::object::client::{self, Format, ObjectTurn, TurnKind};
use crate::routes::conversations::ai_sdk_format;

/// The longest message id a client may name, in characters.
const MAX_ID_CHARS: usize = 128;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegenerateBody {
    #[serde(default)]
    message_id: Option<String>,
}

/// `POST /conversations/{id}/regenerate`.
pub(crate) async fn post(
    mut req: Request,
    env: &Env,
    Admitted { caller, admission }: Admitted<AnyKeyCaller>,
    _ctx: &Context,
    conversation_id: &str,
    request_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let ai_sdk = ai_sdk_format(&req)?;
    let body: RegenerateBody = body::json(&mut req).await?;
    if body
        .message_id
        .as_ref()
        .is_some_and(|id| id.is_empty() || id.chars().count() > MAX_ID_CHARS)
    {
        return Err(ApiError::bad_request(format!(
            "`message_id` must be 1 to {MAX_ID_CHARS} characters."
        )));
    }
    let Caller { site, .. } = caller.into_inner();
    // The conversation's object checks that only the identity the conversation was
    // created with reaches it and counts the caller's rate limits (a regenerate counts as
    // a message), both before anything changes; then answers in the conversation's line.
    let job = ObjectTurn {
        conversation_id: conversation_id.to_string(),
        visitor,
        kind: TurnKind::Regenerate {
            expected: body.message_id,
        },
        format: if ai_sdk {
            Format::AiSdk
        } else {
            Format::Native
        },
        limits: admission.limits(),
        request_id: request_id.to_string(),
        openai: None,
        site,
    };
    let site_id = job.site.id.clone();
    client::turn(env, &site_id, job).await
}
