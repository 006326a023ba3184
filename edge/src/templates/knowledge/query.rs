//! `POST /knowledge/query` (secret key): seed 003's direct JSON interface on a `knowledge`
//! site — the seed's input in, its final output JSON out; with `Accept: text/event-stream`,
//! its stream of `execute_planning` node outputs, then the final output (TEMPLATES.md §3.4).
//! Nothing is stored: the turn is stateless, its history the input's `history_chat`.

use concierge_core::chat::Role;
use concierge_core::engine::{self, StatelessInput};
use concierge_core::flows::knowledge::{SeedInput, SeedStreamEncoder, final_output};
use concierge_core::identity::UserIdentity;
use concierge_core::turn::TurnEvent;
use worker::{Context, Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_stream::{self, TurnRun};
use crate::templates::SiteAssistant;

/// Handles the request.
pub(crate) async fn query(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    ctx: &Context,
    request_id: &str,
) -> Result<Response, ApiError> {
    let site = caller.into_inner().site;
    let SiteAssistant::Knowledge(mut knowledge) = SiteAssistant::for_site(env, &site)? else {
        return Err(ApiError::bad_request(
            "`/knowledge/query` needs a site running the `knowledge` template.",
        ));
    };
    let input: SeedInput = body::json(&mut req).await?;
    if input.query.trim().is_empty() {
        return Err(ApiError::bad_request("`query` must not be empty."));
    }
    let identity = match &input.user_context {
        Some(user) => {
            if user.tenant_id.as_ref().is_some_and(|t| *t != site.id) {
                return Err(ApiError::Forbidden(
                    "`user_context.tenant_id` names another tenant than this key's site.",
                ));
            }
            let identity = UserIdentity::new(
                user.user_id.clone(),
                None,
                user.permissions.clone(),
                user.department.clone(),
            )
            .map_err(|claim| ApiError::bad_request(claim.message()))?;
            Some(identity)
        }
        None => None,
    };
    if let Some(agents) = &input.agents {
        knowledge.config = knowledge.config.restricted_to(agents);
    }
    let mut messages = Vec::with_capacity(input.history_chat.len() + 1);
    for message in &input.history_chat {
        let role = match message.role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => {
                return Err(ApiError::bad_request(
                    "`history_chat` roles must be \"user\" or \"assistant\".",
                ));
            }
        };
        messages.push((role, message.content.clone()));
    }
    messages.push((Role::User, input.query.clone()));
    let stateless = StatelessInput {
        site_id: site.id.clone(),
        messages,
        identity,
    };
    let services = Services::new(env, &site)?;
    let assistant = SiteAssistant::Knowledge(knowledge);
    let wants_stream = req
        .headers()
        .get("accept")?
        .is_some_and(|a| a.contains("text/event-stream"));
    if wants_stream {
        let run = TurnRun::Stateless(stateless);
        let encoder = SeedStreamEncoder::new();
        return turn_stream::respond(ctx, services, assistant, run, encoder, request_id).await;
    }
    let mut events: Vec<TurnEvent> = Vec::new();
    let outcome = engine::run_stateless(&services, &assistant, stateless, &mut events)
        .await
        .map_err(ApiError::from)?;
    let final_payload = events.iter().find_map(|e| match e {
        TurnEvent::Payload { kind, data } if kind == "final" => Some(data),
        _ => None,
    });
    Ok(Response::from_json(&final_output(
        &outcome.reply.content,
        final_payload,
    ))?)
}
