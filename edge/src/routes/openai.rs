//! The OpenAI-compatible API, for the official OpenAI clients (secret key as
//! `Authorization: Bearer sk_…`; errors in OpenAI's shape, see [`crate::error`]):
//! - `GET /v1/models`, `GET /v1/models/{id}`: the site's assistant, one model whose id is
//!   [`concierge_core::openai_api::assistant_id`] and whose `template` names the template it runs;
//! - `POST /v1/chat/completions`: one turn (see [`concierge_core::openai_api`] for how the
//!   body maps onto a stateless, continued or new stored turn); streamed as
//!   `chat.completion.chunk`s when the body's `stream` is true (whatever `Accept` says),
//!   otherwise one `chat.completion`. A stored turn names its conversation in the
//!   `x-concierge-chat-id` header and the `chat_id` field of the answer (every chunk), and
//!   runs in the conversation's object (`object::openai`) like a native post: it waits for
//!   the turn in progress, and the clients attached to `GET /conversations/{id}/events`
//!   see it live. A stateless turn runs here, in the request;
//! - `GET /v1/conversations/{id}`: a stored conversation, shaped as OpenAI's `conversation`
//!   object plus its `messages`.
//!
//! Retries: the official clients retry 408/409/429/5xx. A request that failed before its
//! message was stored can be retried as is. Once a stored turn's message is stored, a
//! failure answers `x-should-retry: false` (the clients obey it), since a retry would store
//! the message again; a retry with the same `Idempotency-Key` header is safe (the message is
//! stored once per key and conversation, and the stored answer is replayed). A streamed
//! answer's status is 200 once its message is stored: later failures are in the stream.
//! Stateless turns store nothing and ignore the key.
//!
//! Tool calls the assistant ran, progress and structured payloads have no place in OpenAI's
//! format and are left out: the answer's text is the message content.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::{Conversation, Scope, StoredMessage};
use concierge_core::engine::{self, NewConversation, StatelessInput, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::openai_api::{ChatCompletion, ChatCompletionBody, ChatTarget, NEW_CHAT};
use concierge_core::stream::openai_out::OpenAiChunkEncoder;
use concierge_core::turn::TurnEvent;
use futures_channel::oneshot;
use serde::Deserialize;
use serde_json::json;
use worker::{Context, Env, Request, Response};

use crate::auth::{self, SecretCaller, Visitor};
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_stream::{self, TurnRun};
use crate::object::client::{self, Format, ObjectTurn, TurnKind};
use crate::object::openai::OpenAiAnswer;
use crate::site::Site;
use crate::templates::{self, SiteAssistant};

/// The response header naming the stored conversation a turn used.
const CHAT_ID_HEADER: &str = "x-concierge-chat-id";

/// Largest `/v1/chat/completions` body: a stateless client sends the whole history each
/// time (the engine keeps its last messages, up to the template's history window).
const MAX_COMPLETION_BODY_BYTES: usize = 256 * 1024;

/// The id `model` names the site's assistant by: the template's own when it sets one
/// (`guarded`'s `assistant_id`, the seed's `dental-duckduckgo`), else
/// [`concierge_core::openai_api::assistant_id`].
fn site_model_id(site: &Site) -> String {
    templates::openai_model_id(site)
}

/// The site's assistant as a model object.
fn model_json(site: &Site) -> serde_json::Value {
    json!({
        "id": site_model_id(site),
        "object": "model",
        "created": site.created_at / 1000,
        "owned_by": site.name,
        "template": site.template,
    })
}

/// `GET /v1/models`.
pub(crate) async fn models(caller: SecretCaller) -> Result<Response, ApiError> {
    let body = json!({"object": "list", "data": [model_json(&caller.site)]});
    Ok(Response::from_json(&body)?)
}

/// `GET /v1/models/{id}`.
pub(crate) async fn model(caller: SecretCaller, id: &str) -> Result<Response, ApiError> {
    if id != site_model_id(&caller.site) {
        return Err(ApiError::unknown_model(id));
    }
    Ok(Response::from_json(&model_json(&caller.site))?)
}

/// `GET /v1/conversations/{id}`.
pub(crate) async fn conversation(
    req: Request,
    env: &Env,
    caller: SecretCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let services = Services::new(env, &caller.site)?;
    let conversation = reachable(&services, &caller.site.id, id, &visitor).await?;
    let messages = services
        .store
        .load_recent_messages(conversation.scope(), 1_000)
        .await
        .map_err(ApiError::store)?;
    let summary = services
        .store
        .load_summary(conversation.scope())
        .await
        .map_err(ApiError::store)?;
    let body = json!({
        "id": conversation.id,
        "object": "conversation",
        "created_at": conversation.created_at / 1000,
        "metadata": {
            "language": conversation.language.as_str(),
            "template": caller.site.template,
        },
        "messages": messages.iter().map(message_json).collect::<Vec<_>>(),
        "summary": summary.map(|s| s.content).unwrap_or_default(),
    });
    Ok(Response::from_json(&body)?)
}

/// A stored message of [`conversation`] (times in seconds, as OpenAI's objects have them).
fn message_json(message: &StoredMessage) -> serde_json::Value {
    json!({
        "id": message.id,
        "role": message.role,
        "content": message.content,
        "kind": message.kind.as_str(),
        "created_at": message.created_at / 1000,
    })
}

/// Conversation `id` of site `site_id` if `visitor` may reach it, else 404
/// `conversation_not_found`.
async fn reachable(
    services: &Services,
    site_id: &str,
    id: &str,
    visitor: &Visitor,
) -> Result<Conversation, ApiError> {
    auth::reachable_conversation(&services.store, Scope::new(site_id, id), visitor)
        .await?
        .ok_or(ApiError::UnknownConversation)
}

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    ctx: &Context,
    request_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let idempotency_key = req.headers().get("idempotency-key").ok().flatten();
    let header_chat_id = req.headers().get("x-chat-id").ok().flatten();
    let raw: serde_json::Value = body::json_up_to(
        &mut req,
        MAX_COMPLETION_BODY_BYTES,
        "The request body is over 256 KB.",
    )
    .await?;
    let mut body = ChatCompletionBody::deserialize(&raw)
        .map_err(|e| ApiError::bad_request(format!("Invalid body: {e}")))?;
    let site = caller.into_inner().site;
    let named_chats = SiteAssistant::openai_named_chats(site.template);
    if named_chats && body.chat_id.is_none() {
        // A template whose clients always name their conversation (`chat_id`, or
        // `X-Chat-Id`, as `guarded`'s seed does): without one a new one is opened.
        body.chat_id = Some(header_chat_id.unwrap_or_else(|| NEW_CHAT.to_string()));
    }
    let request = body
        .validate()
        .map_err(|why| ApiError::BadField(why.param(), why.to_string()))?;
    let model = site_model_id(&site);
    if request.model != model {
        return Err(ApiError::unknown_model(&request.model));
    }
    let mut assistant = SiteAssistant::for_site(env, &site)?;
    assistant.openai_request(&site, &raw)?;
    let services = Services::new(env, &site)?;
    let identity = match &visitor {
        Visitor::User(identity) => identity.clone(),
        Visitor::Site => None,
    };
    let completion_id = format!("chatcmpl-{request_id}");
    let created_at = crate::runtime::now_ms() / 1000;
    let (stream, include_usage) = (request.stream, request.include_usage);
    let opening = Opening {
        site: &site,
        services: &services,
        assistant: &assistant,
        visitor: &visitor,
        named_chats,
    };
    // `created`: a conversation was opened for this request, so even a failure before its
    // message is stored must not be retried (a retry would open another).
    let (chat_id, text, created) = match request.target {
        ChatTarget::Stateless(messages) => {
            let input = StatelessInput {
                site_id: site.id.clone(),
                messages,
                identity,
            };
            let run = TurnRun::Stateless(input);
            if stream {
                let encoder = OpenAiChunkEncoder::new(completion_id, model, created_at)
                    .include_usage(include_usage);
                return turn_stream::respond(ctx, services, assistant, run, encoder, request_id)
                    .await;
            }
            let outcome = complete(ctx, services, assistant, run, request_id)
                .await
                .map_err(|(error, _)| error)?;
            let answer = ChatCompletion::of(&outcome, &completion_id, &model, created_at, None);
            return Ok(Response::from_json(&answer)?);
        }
        target => opening.open(target, identity).await?,
    };
    // A stored conversation's turn runs in its object, in the conversation's line, seen
    // live by its watchers; the object answers in OpenAI's format.
    let answer = OpenAiAnswer {
        stream,
        include_usage,
        completion_id,
        model,
        created: created_at,
        raw,
    };
    let site_id = site.id.clone();
    let job = ObjectTurn {
        site,
        conversation_id: chat_id.clone(),
        visitor,
        kind: TurnKind::Message {
            text,
            idempotency_key,
        },
        format: Format::OpenAi,
        limits: Vec::new(),
        request_id: request_id.to_string(),
        openai: Some(answer),
    };
    let response = client::turn(env, &site_id, job)
        .await
        .map_err(|error| if created { after_store(error) } else { error })?;
    if response.status_code() >= 400 {
        return openai_error(response, created).await;
    }
    let mut response = response;
    response.headers_mut().set(CHAT_ID_HEADER, &chat_id)?;
    Ok(response)
}

/// What a stored conversation's completion is answered in.
struct Opening<'a> {
    site: &'a Site,
    services: &'a Services,
    assistant: &'a SiteAssistant,
    visitor: &'a Visitor,
    /// The template's clients always name their conversation (`guarded`'s seed).
    named_chats: bool,
}

impl Opening<'_> {
    /// The conversation `target` continues (reachable by this caller), or a new one:
    /// its id, the visitor's text, and whether it was opened for this request.
    async fn open(
        &self,
        target: ChatTarget,
        identity: Option<concierge_core::identity::UserIdentity>,
    ) -> Result<(String, String, bool), ApiError> {
        let (site, services, visitor) = (self.site, self.services, self.visitor);
        match target {
            ChatTarget::Continue { chat_id, text } if !self.named_chats => {
                reachable(services, &site.id, &chat_id, visitor).await?;
                Ok((chat_id, text, false))
            }
            // Named chats (`guarded`'s seed): an unknown `chat_id` opens a new
            // conversation, under a server-minted id (a client-chosen id is never adopted).
            ChatTarget::Continue { chat_id, text }
                if auth::reachable_conversation(
                    &services.store,
                    Scope::new(&site.id, &chat_id),
                    visitor,
                )
                .await?
                .is_some() =>
            {
                Ok((chat_id, text, false))
            }
            // Answered before a conversation is looked for (`chat_completions`).
            ChatTarget::Stateless(_) => Err(ApiError::bad_request("Which conversation?")),
            ChatTarget::Continue { text, .. } | ChatTarget::New { text } => {
                let new = NewConversation {
                    site_id: site.id.clone(),
                    user_id: identity.as_ref().map(|i| i.sub.clone()),
                    identity,
                    language: site
                        .config
                        .language
                        .as_deref()
                        .and_then(concierge_core::conversation::Language::parse),
                };
                let opened = engine::create_conversation(services, self.assistant, new).await?;
                Ok((opened.conversation.id, text, true))
            }
        }
    }
}

/// The object's error (the API's own shape) in OpenAI's, same status and retry headers;
/// `created`: the request opened a conversation, so it must not be retried.
async fn openai_error(mut response: Response, created: bool) -> Result<Response, ApiError> {
    let status = response.status_code();
    let mut headers = Vec::new();
    for name in ["retry-after", "x-should-retry"] {
        if let Some(value) = response.headers().get(name)? {
            headers.push((name, value));
        }
    }
    if created {
        headers.retain(|(name, _)| *name != "x-should-retry");
        headers.push(("x-should-retry", "false".into()));
    }
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    let error = &body["error"];
    let body = json!({"error": {
        "message": error["message"].as_str().unwrap_or("Internal error."),
        "type": crate::error::openai_type(status),
        "param": null,
        "code": error["code"].as_str().unwrap_or("internal"),
    }});
    let mut out = Response::from_json(&body)?.with_status(status);
    for (name, value) in headers {
        out.headers_mut().set(name, &value)?;
    }
    Ok(out)
}

/// `error`, marked as coming after the request stored something.
fn after_store(error: ApiError) -> ApiError {
    match error {
        ApiError::AfterStore(_) => error,
        error => ApiError::AfterStore(Box::new(error)),
    }
}

/// Runs `run` to its end (even if the client goes away, so that a stored turn's answer is
/// stored): its outcome, or its error and whether its message was stored (`Started`).
async fn complete(
    ctx: &Context,
    services: Services,
    assistant: SiteAssistant,
    run: TurnRun,
    request_id: &str,
) -> Result<TurnOutcome, (ApiError, bool)> {
    let (done_tx, done_rx) = oneshot::channel::<(Result<TurnOutcome, Error>, bool)>();
    let request_id = request_id.to_string();
    ctx.wait_until(async move {
        let mut started = false;
        let result = {
            let mut sink = |event: TurnEvent| {
                if matches!(event, TurnEvent::Started { .. }) {
                    started = true;
                }
            };
            run.run(&services, &assistant, &mut sink).await
        };
        if let Err(error) = &result {
            let line = json!({
                "level": "warn", "msg": "turn failed", "request_id": request_id,
                "code": error.code(), "detail": error.to_string(),
            });
            worker::console_warn!("{line}");
        }
        let _ = done_tx.send((result, started));
        services.queue_flush().await;
    });
    let (result, started) = done_rx.await.map_err(|_| {
        let error = worker::Error::RustError("turn ended early".into());
        (ApiError::Internal(error), true)
    })?;
    result.map_err(|error| (ApiError::from(error), started))
}
