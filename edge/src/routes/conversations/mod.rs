//! The conversation API (seed 000's paths):
//! - `POST /conversations` → 201 with the stored greeting;
//! - `POST /conversations/{id}/messages` → the native SSE stream of the turn, or with
//!   `Prefer: respond-async` → 202 `{"message_id"}` and the answer, produced on the turn
//!   queue, lands in history; `Idempotency-Key` makes either safe to repeat;
//!   `?format=ai-sdk` streams the turn as the AI SDK's UI message stream instead;
//! - `GET /conversations/{id}/history` (each answer with the caller's vote, `feedback`);
//! - `GET /conversations/{id}/stream`: the current (or last) turn resumed after
//!   `Last-Event-ID`; `GET /conversations/{id}/events`: the conversation live (both served
//!   by the conversation's object, `crate::object`).
//!
//! Identity: a conversation is bound to the identity it was created with (a signed user
//! token's, or one a secret-key call states in the body of `POST /conversations`), or to
//! none (anonymous). Every conversation route answers 404 to any other identity, and to
//! an anonymous caller on an identified conversation and an identified caller on an
//! anonymous one; a secret-key call without a token is the site's own server and reaches
//! them all. A token that does not verify is 401 `invalid_user_token`, before anything
//! is read or stored.
//!
//! Posting a message (streamed or accepted for the queue) is in `post`.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::{Language, Scope};
use concierge_core::engine::{self, Assistant, NewConversation};
use concierge_core::identity::UserIdentity;
use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, AnyKeyCaller, SecretCaller, Visitor};
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::object::client::{self, Watch};
use crate::object::streams::{self, Closing, Grant};
use crate::routes::feedback;
use crate::site::{KeyKind, Site};
use crate::templates::turn_context;

pub(crate) mod handoff_queue;
mod post;

pub(crate) use post::{ai_sdk_format, post_message};

/// The longest message a visitor may send, in characters.
const MAX_MESSAGE_CHARS: usize = 4_000;

/// The longest `user_id`, in characters (Unicode scalar values, not bytes).
const MAX_USER_ID_CHARS: usize = concierge_core::identity::MAX_SUBJECT_CHARS;

/// Body of `POST /conversations`. With the secret key, `user_id` (and optionally `role`,
/// `permissions`, `department`) is the identity the conversation is bound to. With a
/// public key, `user_id` is only a label (kept for compatibility, never used for
/// scoping) and the identity fields are refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    permissions: Option<Vec<String>>,
    #[serde(default)]
    department: Option<String>,
    #[serde(default)]
    language: Option<String>,
}

impl CreateBody {
    fn states_claims(&self) -> bool {
        self.role.is_some() || self.permissions.is_some() || self.department.is_some()
    }

    /// The identity the new conversation is bound to, for `visitor`.
    fn identity(&self, visitor: &Visitor) -> Result<Option<UserIdentity>, ApiError> {
        match visitor {
            Visitor::User(Some(token)) => {
                if self.states_claims() {
                    return Err(ApiError::bad_request(
                        "The identity comes from the user token: leave out `role`, \
                         `permissions` and `department`.",
                    ));
                }
                Ok(Some(token.clone()))
            }
            Visitor::User(None) => {
                if self.states_claims() {
                    return Err(ApiError::bad_request(
                        "`role`, `permissions` and `department` need the site's secret key \
                         (or a signed user token).",
                    ));
                }
                Ok(None)
            }
            Visitor::Site => match &self.user_id {
                Some(user_id) => UserIdentity::new(
                    user_id.clone(),
                    self.role.clone(),
                    self.permissions.clone().unwrap_or_default(),
                    self.department.clone(),
                )
                .map(Some)
                .map_err(|why| ApiError::bad_request(why.message())),
                None if self.states_claims() => Err(ApiError::bad_request(
                    "`role`, `permissions` and `department` need `user_id`.",
                )),
                None => Ok(None),
            },
        }
    }
}

pub(crate) use crate::http::message::message_json;

/// `POST /conversations`.
pub(crate) async fn create(
    mut req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    ctx: &Context,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    auth::limit_conversation_start(&req, env, &caller).await?;
    let mut body: CreateBody = body::json(&mut req).await?;
    let language = match body.language.as_deref() {
        None => caller
            .site
            .config
            .language
            .as_deref()
            .and_then(Language::parse),
        Some(code) => Some(
            Language::parse(code)
                .ok_or_else(|| ApiError::bad_request("`language` must be \"vi\" or \"en\"."))?,
        ),
    };
    // A `user_id` is kept trimmed; control and bidirectional-control characters are
    // refused (with a public key it is a label nobody proved, shown in the console and
    // exported as CSV).
    if let Some(user_id) = body.user_id.take() {
        let label = concierge_core::identity::user_label(&user_id).ok_or_else(|| {
            ApiError::bad_request(format!(
                "`user_id` must be 1 to {MAX_USER_ID_CHARS} characters, without control or \
                 bidirectional-control characters."
            ))
        })?;
        body.user_id = Some(label.to_string());
    }
    let identity = body.identity(&visitor)?;
    let (assistant, services) = turn_context(env, &caller.site)?;
    let new = NewConversation {
        site_id: caller.site.id.clone(),
        // An identified conversation's user is its identity's subject; otherwise the
        // label a caller gave.
        user_id: identity.as_ref().map(|i| i.sub.clone()).or(body.user_id),
        identity,
        language,
    };
    let created = engine::create_conversation(&services, &assistant, new).await?;
    let flushed = services.queue_flush();
    let window = assistant.config().history_window;
    let (site_id, id) = (caller.site.id.clone(), created.conversation.id.clone());
    let env = env.clone();
    ctx.wait_until(async move {
        // Its object woken and the conversation read into its memory now, so the first
        // turn starts without waiting for either.
        let warmed = client::warm(&env, &site_id, &id, window);
        let _ = futures_util::future::join(flushed, warmed).await;
    });
    let body = if created.greeting_stored() {
        serde_json::json!({
            "conversation_id": created.conversation.id,
            "messages": [message_json(&created.greeting)],
        })
    } else {
        // Not a message of the conversation: shown, never stored (`guarded`).
        serde_json::json!({
            "conversation_id": created.conversation.id,
            "messages": [],
            "greeting": greeting_json(&created.greeting.content),
        })
    };
    Ok(Response::from_json(&body)?.with_status(201))
}

/// A greeting that is not stored (`greeting` beside `messages`): what the widget shows
/// first.
fn greeting_json(content: &str) -> serde_json::Value {
    serde_json::json!({"role": "assistant", "kind": "greeting", "content": content})
}

/// `GET /conversations/{id}/history`.
pub(crate) async fn history(
    req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let (assistant, services) = turn_context(env, &caller.site)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    let conversation = auth::reachable_conversation(&services.store, scope, &visitor)
        .await?
        .ok_or(ApiError::NotFound)?;
    let messages = services
        .store
        .load_recent_messages(scope, 1_000)
        .await
        .map_err(ApiError::store)?;
    // The caller's own votes on the answers.
    let votes = feedback::votes(&services.store, scope, &feedback::voter(&visitor)).await?;
    let messages: Vec<serde_json::Value> = messages
        .iter()
        .map(|message| {
            let mut json = message_json(message);
            if let Some(vote) = votes.iter().find(|v| v.message_id == message.id) {
                json["feedback"] = feedback::feedback_json(vote);
            }
            json
        })
        .collect();
    let mut body = serde_json::json!({
        "conversation_id": conversation_id,
        "messages": messages,
    });
    if !assistant.stores_greeting() {
        body["greeting"] = greeting_json(assistant.greeting(conversation.language));
    }
    Ok(Response::from_json(&body)?)
}

/// The event id a client last saw: the `Last-Event-ID` header, or `?last_event_id=`
/// (for clients that cannot set headers); 400 when it is not a number.
fn last_event_id(req: &Request) -> Result<Option<u64>, ApiError> {
    let header = req.headers().get("last-event-id").ok().flatten();
    let query = req
        .url()?
        .query_pairs()
        .find(|(k, _)| k == "last_event_id")
        .map(|(_, v)| v.into_owned());
    match header.or(query).filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(id) => id.trim().parse::<u64>().map(Some).map_err(|_| {
            ApiError::bad_request("`Last-Event-ID` must be an event id (a whole number).")
        }),
    }
}

/// `GET /conversations/{id}/stream`: resumes the current (or last) turn's native stream —
/// its events after `Last-Event-ID` (all of them without one), then its terminal event,
/// then the end of the stream; 204 when there is nothing after that id (no turn, or the
/// client saw its end).
pub(crate) async fn resume(
    req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let after = last_event_id(&req)?;
    let site_id = watched(&req, env, &caller, conversation_id).await?;
    client::watch(env, &site_id, conversation_id, Watch::Resume { after }).await
}

/// `GET /conversations/{id}/events`: the conversation live, a native SSE stream kept open:
/// every event from now on (after `Last-Event-ID`, the missed ones the object still holds
/// first) — `message` (a stored message that was not streamed to this client: a visitor's
/// from another tab, a person's reply, a handoff notice), the turns' events as on the
/// native stream, `handoff` — and a `: ping` comment every 20 s.
pub(crate) async fn events(
    req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let after = last_event_id(&req)?;
    let site_id = watched(&req, env, &caller, conversation_id).await?;
    let grant = live_grant(&req, env, &caller);
    client::watch(
        env,
        &site_id,
        conversation_id,
        Watch::Events { after, grant },
    )
    .await
}

/// The bounds of a live stream (see `crate::object::streams`): its client's address, its
/// end — its bounded life (`LIVE_STREAM_MAX_SECONDS` may shorten it) or its user token's
/// expiry, whichever comes first — and the key it is opened with.
fn live_grant(req: &Request, env: &Env, caller: &AnyKeyCaller) -> Grant {
    let now = crate::runtime::now_ms();
    let lifetime = env
        .var("LIVE_STREAM_MAX_SECONDS")
        .ok()
        .and_then(|v| v.to_string().trim().parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map_or(streams::LIFETIME_SECONDS, |secs| {
            secs.min(streams::LIFETIME_SECONDS)
        });
    let lived = now.saturating_add(lifetime * 1000);
    let (until_ms, ends_with) = match auth::user_token_expiry_ms(req) {
        Some(expiry) if expiry < lived => (expiry, Closing::TokenExpired),
        _ => (lived, Closing::StreamExpired),
    };
    // The client as the rate limits count it (an IPv6 client is its /64); a secret-key
    // caller (the merchant's console, a server) is one client of its own, counted apart.
    let secret = caller.kind == KeyKind::Secret;
    let client = if secret {
        String::from("secret")
    } else {
        auth::client_key(req).unwrap_or_default()
    };
    let key_hash = if secret {
        caller.site.secret_key_hash.clone()
    } else {
        caller.site.public_key_hash.clone()
    };
    Grant {
        client,
        until_ms,
        ends_with,
        key_hash,
        secret,
    }
}

/// `POST /conversations/{id}/stop`: the running turn ends now, as the visitor saw it —
/// its model request cancelled, what was streamed stored as the reply (marked stopped),
/// one `completed` (`"reply": {"kind": "stopped", "stopped": true}`) on every stream
/// following it, the next post in line started. 200 `{"stopped": true, "message_id"}`
/// once it has ended; 204 when no turn runs. See `crate::object::stop`.
pub(crate) async fn stop(
    req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let site_id = watched(&req, env, &caller, conversation_id).await?;
    crate::object::stop::stop(env, &site_id, conversation_id).await
}

/// The caller's site, once the visitor is known to reach the conversation (404 otherwise).
async fn watched(
    req: &Request,
    env: &Env,
    caller: &AnyKeyCaller,
    conversation_id: &str,
) -> Result<String, ApiError> {
    let visitor = auth::visitor(req, env, caller)?;
    let services = Services::new(env, &caller.site)?;
    auth::reachable(&services, &caller.site.id, conversation_id, &visitor).await?;
    Ok(caller.site.id.clone())
}

/// `DELETE /conversations/{id}` (secret key): the conversation, its messages and their
/// vectors, and its object's memory and storage. The vectors go first: if the index fails,
/// the conversation stays whole (503) and can be deleted again, rather than leaving vectors
/// of deleted messages; then the object, then the rows. Vectors an indexing job wrote in
/// between are deleted after the rows.
pub(crate) async fn delete(
    req: Request,
    env: &Env,
    caller: SecretCaller,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    if !matches!(visitor, Visitor::Site) {
        let services = Services::new(env, &caller.site)?;
        auth::reachable(&services, &caller.site.id, conversation_id, &visitor).await?;
    }
    erase(env, &caller.site, conversation_id).await?;
    Ok(Response::empty()?.with_status(204))
}

/// Delete conversation `conversation_id` of `site`: its vectors first (if the index fails,
/// the conversation stays whole, 503, and can be deleted again), then its object's memory,
/// then its rows (vectors an indexing job wrote in between after them). 404 when it does
/// not exist.
pub(crate) async fn erase(env: &Env, site: &Site, conversation_id: &str) -> Result<(), ApiError> {
    use concierge_core::boundary::VectorIndex;
    let services = Services::new(env, site)?;
    let scope = Scope::new(&site.id, conversation_id);
    let ids = services
        .store
        .conversation_vector_ids(scope)
        .await
        .map_err(ApiError::store)?
        .ok_or(ApiError::NotFound)?;
    services
        .vectors
        .delete(&ids)
        .await
        .map_err(|e| ApiError::from(concierge_core::error::Error::VectorIndex(e)))?;
    // Its object forgets it first (memory, storage, live streams; no turn runs from
    // then on): a later post to its id, in any isolate, is 404 — never the deleted
    // history sent to the model. Should that fail, nothing more is deleted (503) and the
    // delete can be sent again; the object's forgetting is idempotent.
    if let Err(err) = client::forget(env, &site.id, conversation_id).await {
        let line = serde_json::json!({
            "level": "error", "msg": "conversation object not cleared; delete stopped",
            "site": site.id, "conversation_id": conversation_id,
            "detail": format!("{err:?}"),
        });
        worker::console_error!("{line}");
        return Err(ApiError::Unavailable);
    }
    let owned = services
        .store
        .delete_conversation(scope)
        .await
        .map_err(ApiError::store)?;
    if let Some(owned) = owned
        && let Err(err) = services.vectors.delete(&owned).await
    {
        // The messages are gone; retrieval never returns vectors of a missing message.
        let line = serde_json::json!({
            "level": "warn", "msg": "message vectors left after delete",
            "site": site.id, "conversation_id": conversation_id,
            "detail": err.to_string(),
        });
        worker::console_warn!("{line}");
    }
    Ok(())
}
