//! The conversation API (seed 000's paths):
//! - `POST /conversations` → 201 with the stored greeting;
//! - `POST /conversations/{id}/messages` → the native SSE stream of the turn, or with
//!   `Prefer: respond-async` → 202 `{"message_id"}` and the answer, produced on the turn
//!   queue, lands in history; `Idempotency-Key` makes either safe to repeat;
//!   `?format=ai-sdk` streams the turn as the AI SDK's UI message stream instead;
//! - `GET /conversations/{id}/history` (each answer with the caller's vote, `feedback`).
//!
//! Identity: a conversation is bound to the identity it was created with (a signed user
//! token's, or one a secret-key call states in the body of `POST /conversations`), or to
//! none (anonymous). Every conversation route answers 404 to any other identity, and to
//! an anonymous caller on an identified conversation and an identified caller on an
//! anonymous one; a secret-key call without a token is the site's own server and reaches
//! them all. A token that does not verify is 401 `invalid_user_token`, before anything
//! is read or stored.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::{Language, Scope, StoredMessage};
use concierge_core::engine::{self, Assistant, NewConversation, Received};
use concierge_core::identity::UserIdentity;
use concierge_core::stream::native::NativeEncoder;
use concierge_core::turn::{TurnInput, TurnJob};
use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::ApiError;
use crate::auth::{self, Caller, Visitor};
use crate::bindings::d1_store::remembered;
use crate::bindings::services::Services;
use crate::bindings::turn_queue;
use crate::routes::turn_stream::{self, TurnRun};
use crate::routes::{body, feedback};
use crate::site::SiteAssistant;

/// The longest message a visitor may send, in characters.
const MAX_MESSAGE_CHARS: usize = 4_000;

/// The longest `user_id`, in characters (Unicode scalar values, not bytes).
const MAX_USER_ID_CHARS: usize = 128;

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

/// A stored message as the API shows it.
pub(crate) fn message_json(message: &StoredMessage) -> serde_json::Value {
    let mut json = serde_json::json!({
        "id": message.id,
        "role": message.role,
        "content": message.content,
        "kind": message.kind.as_str(),
        "created_at": message.created_at,
        "metadata": message.metadata,
    });
    // A reply's structured content, as its `payload` events carried it (tool rounds stay
    // internal: they are the model's working, not the visitor's answer).
    if !message.payloads.is_empty() {
        json["payloads"] = serde_json::to_value(&message.payloads).unwrap_or_default();
    }
    json
}

/// `POST /conversations`.
pub(crate) async fn create(
    mut req: Request,
    env: &Env,
    ctx: &Context,
) -> Result<Response, ApiError> {
    let caller = auth::site_caller(&req, env, true).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    auth::limit_conversation_start(&req, env, &caller).await?;
    let body: CreateBody = body::json(&mut req).await?;
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
    if body
        .user_id
        .as_ref()
        .is_some_and(|u| u.is_empty() || u.chars().count() > MAX_USER_ID_CHARS)
    {
        return Err(ApiError::bad_request(format!(
            "`user_id` must be 1 to {MAX_USER_ID_CHARS} characters."
        )));
    }
    let identity = body.identity(&visitor)?;
    let assistant = SiteAssistant::for_site(&caller.site)?;
    let services = Services::new(env, &caller.site)?;
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
    ctx.wait_until(async move {
        flushed.await;
        // Read once now, so the conversation's first turn starts without reading it.
        let _ = services
            .store
            .read_turn(Scope::new(&site_id, &id), window)
            .await;
    });
    let body = serde_json::json!({
        "conversation_id": created.conversation.id,
        "messages": [message_json(&created.greeting)],
    });
    Ok(Response::from_json(&body)?.with_status(201))
}

/// `GET /conversations/{id}/history`.
pub(crate) async fn history(
    req: Request,
    env: &Env,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let caller = auth::site_caller(&req, env, true).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    let services = Services::new(env, &caller.site)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    reachable(&services, &caller.site.id, conversation_id, &visitor).await?;
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
    let body = serde_json::json!({
        "conversation_id": conversation_id,
        "messages": messages,
    });
    Ok(Response::from_json(&body)?)
}

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
    ctx: &Context,
    conversation_id: &str,
    request_id: &str,
) -> Result<Response, ApiError> {
    let (caller, admission) = auth::admitted_caller(&req, env, true).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    let ai_sdk = ai_sdk_format(&req)?;
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
    let Caller { site, .. } = caller;
    // The site runs the template it names (an unbuilt one is refused before anything is
    // stored).
    // With `DEBUG_ROUTES` on (tests, dev), a staged test script plays instead.
    let assistant = SiteAssistant::for_site(&site)?.with_debug_scripts(env);
    let services = Services::new(env, &site)?;
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

/// `DELETE /conversations/{id}` (secret key): the conversation, its messages and their
/// vectors. The vectors go first: if the index fails, the conversation stays whole (503)
/// and can be deleted again, rather than leaving vectors of deleted messages. Vectors an
/// indexing job wrote in between are deleted after the rows.
pub(crate) async fn delete(
    req: Request,
    env: &Env,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    use concierge_core::boundary::VectorIndex;
    let caller = auth::site_caller(&req, env, false).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    let services = Services::new(env, &caller.site)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    if !matches!(visitor, Visitor::Site) {
        reachable(&services, &caller.site.id, conversation_id, &visitor).await?;
    }
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
            "site": caller.site.id, "conversation_id": conversation_id,
            "detail": err.to_string(),
        });
        worker::console_warn!("{line}");
    }
    Ok(Response::empty()?.with_status(204))
}

/// 404 unless conversation `conversation_id` of site `site_id` exists and `visitor` may
/// reach it.
pub(crate) async fn reachable(
    services: &Services,
    site_id: &str,
    conversation_id: &str,
    visitor: &Visitor,
) -> Result<(), ApiError> {
    let scope = Scope::new(site_id, conversation_id);
    auth::reachable_conversation(&services.store, scope, visitor)
        .await?
        .map(|_| ())
        .ok_or(ApiError::NotFound)
}
