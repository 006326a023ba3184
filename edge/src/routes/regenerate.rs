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

use concierge_core::engine::RegenerateInput;
use concierge_core::stream::native::NativeEncoder;
use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, Admitted, AnyKeyCaller, Caller};
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_stream::{self, TurnRun};
use crate::routes::conversations::{ai_sdk_format, reachable};
use crate::templates::turn_context;

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
    ctx: &Context,
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
    let (assistant, services) = turn_context(env, &site)?;
    let assistant = assistant.with_debug_scripts(env);
    // Only the identity the conversation was created with reaches it; the caller's rate
    // limits count a regenerate as a message. Both before anything changes.
    let reached = reachable(&services, &site.id, conversation_id, &visitor);
    let (admitted, reached) = futures_util::future::join(admission.check(), reached).await;
    reached?;
    admitted?;
    let input = RegenerateInput {
        site_id: site.id.clone(),
        conversation_id: conversation_id.to_string(),
        expected: body.message_id,
    };
    let run = TurnRun::Regenerate(input);
    if ai_sdk {
        turn_stream::respond_ai_sdk(ctx, services, assistant, run, request_id).await
    } else {
        let encoder = NativeEncoder::new().with_request_id(request_id.to_string());
        turn_stream::respond(ctx, services, assistant, run, encoder, request_id).await
    }
}
