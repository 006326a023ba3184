//! `POST /ai/chat` — seed 002's `chatWithAI(query, {userId, clientIp})`: one question in,
//! one `ChatResponse` out (not streamed), on a session.
//!
//! Sessions belong to what the caller proves, never to its address (the seed keyed them
//! by `clientIp`: visitors behind one NAT, or every call of a merchant's server, shared one
//! conversation):
//! - a call without `sessionId` starts a session: the server mints a random id
//!   (`s_` + 128 bits in hex) and returns it as `sessionId`;
//! - a call sending a `sessionId` back continues that session only if the server minted it
//!   for the same site and the same caller: the same verified user (signed user token),
//!   or, without a token, the same kind of key (anonymous visitors with the public key,
//!   the merchant's server with the secret key);
//! - any other `sessionId` — unknown, malformed, expired, another site's, another user's,
//!   or minted for another kind of caller — is not an error: the call starts a fresh
//!   session, as the seed does for a session that timed out, and the new `sessionId` in
//!   the answer tells the client. All of these are answered alike, so the answer does not
//!   tell whether an id exists elsewhere.
//!
//! A session idle for more than 30 minutes is over (a call naming it starts a fresh one);
//! the site's object (`crate::site_object::rental`, its alarm) deletes idle sessions with
//! their conversations ([`forget`]).

use concierge_core::conversation::{Language, Scope};
use concierge_core::engine::{self, NewConversation};
use concierge_core::flows::rental::reply;
use concierge_core::turn::{TurnEvent, TurnInput};
use serde::Deserialize;
use worker::{Env, Request, Response};

use super::site_data::ask;
use crate::auth::{self, AnyKeyCaller, Visitor};
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;
use crate::site::Site;
use crate::site_object::rental::RentalCall;
use crate::templates::turn_context;
use concierge_core::template::Template;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatBody {
    query: String,
    /// A session id an earlier answer returned.
    #[serde(default, rename = "sessionId")]
    session_id: Option<String>,
}

/// Who a session belongs to: the part of its stored key before the id, so an id is found
/// only by the caller it was minted for.
fn owner(visitor: &Visitor) -> String {
    match visitor {
        Visitor::User(Some(identity)) => format!("user:{}", auth::sha256_hex(&identity.sub)),
        Visitor::User(None) => "anonymous".to_string(),
        Visitor::Site => "site".to_string(),
    }
}

/// A new session id: `s_` and 128 bits from the platform CSPRNG, in hex.
fn mint_session_id() -> Result<String, ApiError> {
    let mut bytes = [0u8; 16];
    crate::runtime::random_bytes(&mut bytes)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("s_{hex}"))
}

/// Whether `id` has the shape of an id [`mint_session_id`] returns.
fn well_formed(id: &str) -> bool {
    id.strip_prefix("s_").is_some_and(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// `POST /ai/chat` `{query, sessionId?}`: 200 `{kind, sessionId, timestamp, message, payload?}`.
pub(crate) async fn chat(
    mut req: Request,
    env: &Env,
    caller: AnyKeyCaller,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    if caller.site.template != Template::Rental {
        return Err(ApiError::NotFound);
    }
    let body: ChatBody = body::json(&mut req).await?;
    let query = body.query.trim().to_string();
    if query.is_empty() {
        return Err(ApiError::bad_request("`query` must not be empty."));
    }
    let owner = owner(&visitor);
    let identity = match visitor {
        Visitor::User(identity) => identity,
        Visitor::Site => None,
    };
    let site = &caller.site;
    let now = now_ms();
    // The session the caller names, if the server minted it for this site and this caller
    // and it is still live; else a fresh one (see the module's documentation).
    let named = body
        .session_id
        .as_deref()
        .map(str::trim)
        .filter(|id| well_formed(id));
    // A live one is used at `now` by the same call.
    let live = match named {
        Some(id) => {
            let key = format!("{owner}:{id}");
            let open: Option<String> =
                ask(env, &site.id, RentalCall::OpenSession(key, now)).await?;
            open.map(|conversation| (id.to_string(), conversation))
        }
        None => None,
    };
    let (assistant, services) = turn_context(env, site)?;
    let (session_id, conversation_id) = match live {
        Some(live) => live,
        None => {
            // A new session is a new conversation: with the public key, at most a few a
            // minute per client, as `POST /conversations`.
            auth::limit_conversation_start(&req, env, &caller).await?;
            let new = NewConversation {
                site_id: site.id.clone(),
                user_id: identity.as_ref().map(|i| i.sub.clone()),
                identity,
                language: site.config.language.as_deref().and_then(Language::parse),
            };
            let conversation = engine::create_conversation(&services, &assistant, new)
                .await?
                .conversation;
            let session_id = mint_session_id()?;
            let key = format!("{owner}:{session_id}");
            let start = RentalCall::StartSession(key, conversation.id.clone(), now);
            ask::<()>(env, &site.id, start).await?;
            (session_id, conversation.id)
        }
    };
    let input = TurnInput {
        site_id: site.id.clone(),
        conversation_id,
        text: query,
        idempotency_key: None,
    };
    let mut sink = |_event: TurnEvent| {};
    let outcome = engine::run_turn(&services, &assistant, &input, &mut sink).await;
    services.queue_flush().await;
    let reply = outcome?.reply;
    Ok(Response::from_json(&reply::chat_response(
        &reply,
        &session_id,
    ))?)
}

/// Deletes an idle session's conversation (the site object's alarm, for each session that
/// ended), with its messages' vectors.
pub(crate) async fn forget(env: &Env, site: &Site, conversation_id: &str) -> Result<(), ApiError> {
    let services = Services::new(env, site)?;
    let scope = Scope::new(&site.id, conversation_id);
    // Its object first (its record, the conversation's rows), as `DELETE /conversations`.
    crate::object::client::forget(env, &site.id, conversation_id).await?;
    let owned = services
        .store
        .delete_conversation(scope)
        .await
        .map_err(ApiError::store)?;
    if let Some(ids) = owned {
        use concierge_core::boundary::VectorIndex;
        let _ = services.vectors.delete(&ids).await;
    }
    Ok(())
}
