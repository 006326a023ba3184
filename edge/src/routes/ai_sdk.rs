//! The Vercel AI SDK's chat route: `POST /api/chat` accepts the body `useChat` sends
//! through its default transport (`DefaultChatTransport`: `{id, messages, trigger,
//! messageId}` plus the app's own `body` fields, which are ignored) and answers with the
//! turn as a UI message stream v1 (`concierge_core::stream::ai_sdk`).
//!
//! Which conversation `id` names:
//! - a Concierge conversation id (32 lowercase hex digits, what `POST /conversations`
//!   returns): that stored conversation, continued with the last message's text (the rest
//!   of `messages` is already stored). It must be one the caller reaches under the
//!   conversation routes' rules, else 404 — never a silent fall-back to a stateless turn,
//!   so a mistyped or foreign id shows at once. The last message's id (with its text) is
//!   the turn's idempotency key unless the request has an `Idempotency-Key`: a resent or
//!   regenerated message replays its stored answer instead of being stored twice;
//! - any other id (`useChat` mints 16-character ones): a stateless turn whose history is
//!   `messages`' text parts. Nothing is stored, and no stored conversation is read.
//!
//! Authentication, CORS and rate limits are the conversation routes': a public key from
//! an allowed origin (with an optional signed user token), or the secret key.
//!
//! A stored conversation's turn runs in the conversation's object (`crate::object`), one
//! at a time, and outlives the client: `GET /api/chat/{id}/stream` (what `useChat({resume:
//! true})` asks on load) replays a turn still in progress (or ended less than a minute ago)
//! from its start, as the AI SDK expects (the client lost its partial message); with no
//! such turn, or for a stateless chat's id, it answers 204 (the stored answer is in the
//! conversation's history).

use concierge_core::chat::Role;
use concierge_core::engine::StatelessInput;
use serde::Deserialize;
use worker::{Context, Env, Request, Response};

use crate::auth::reachable;
use crate::auth::{self, AnyKeyCaller, Visitor};
use crate::error::ApiError;
use crate::http::body;
use crate::http::turn_stream::{self, TurnRun};
use crate::object::client::{self, Format, ObjectTurn, TurnKind, Watch};
use crate::templates::turn_context;

/// Largest chat body accepted: `useChat` sends the whole chat (every message with its
/// parts) on every turn, which outgrows the other routes' 32 KB within a few dozen
/// messages.
const MAX_CHAT_BODY_BYTES: usize = 256 * 1024;

/// The body `DefaultChatTransport` sends (extra fields from the app's `body` are allowed
/// and ignored).
#[derive(Debug, Deserialize)]
struct ChatBody {
    id: String,
    messages: Vec<UiMessage>,
    #[serde(default)]
    trigger: Option<String>,
}

/// A `UIMessage`: only its id, role and text parts are read.
#[derive(Debug, Deserialize)]
struct UiMessage {
    #[serde(default)]
    id: String,
    role: String,
    #[serde(default)]
    parts: Vec<UiPart>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum UiPart {
    #[serde(rename = "text")]
    Text { text: String },
    /// Files, reasoning, tool and data parts: not part of the text history.
    #[serde(other)]
    Other,
}

impl UiMessage {
    /// The message's text parts, joined by a blank line.
    fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|part| match part {
                UiPart::Text { text } if !text.trim().is_empty() => Some(text.trim()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }
}

/// Whether `id` has the shape of a Concierge conversation id (see `RandomIds`).
fn is_conversation_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `POST /api/chat`.
pub(crate) async fn chat(
    mut req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    ctx: &Context,
    request_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let idempotency_key = req.headers().get("idempotency-key").ok().flatten();
    let body: ChatBody = body::json_up_to(
        &mut req,
        MAX_CHAT_BODY_BYTES,
        "The request body is over 256 KB.",
    )
    .await?;
    match body.trigger.as_deref() {
        None | Some("submit-message" | "regenerate-message") => {}
        Some(_) => {
            return Err(ApiError::bad_request(
                "`trigger` must be \"submit-message\" or \"regenerate-message\".",
            ));
        }
    }
    let last = match body.messages.last() {
        Some(last) if last.role == "user" => last,
        _ => {
            return Err(ApiError::bad_request(
                "The last of `messages` must be the user's message to answer.",
            ));
        }
    };
    if is_conversation_id(&body.id) {
        crate::routes::conversations::handoff_queue::admit(
            &req,
            env,
            &caller,
            &body.id,
            &last.text(),
        )
        .await?;
    }
    let site = caller.into_inner().site;
    if is_conversation_id(&body.id) {
        let text = last.text();
        // The message's own id keys the turn: a resend stores nothing twice. Its text is
        // in the key so that an edited message (same id, new text) is a new message.
        let derived = (!last.id.is_empty()).then(|| {
            format!(
                "ui-{}",
                &auth::sha256_hex(&format!("{}\n{text}", last.id))[..40]
            )
        });
        // The conversation's object checks that the caller reaches it, then runs the turn
        // in the conversation's line.
        let job = ObjectTurn {
            conversation_id: body.id,
            visitor,
            kind: TurnKind::Message {
                text,
                idempotency_key: idempotency_key.or(derived),
            },
            format: Format::AiSdk,
            limits: Vec::new(),
            request_id: request_id.to_string(),
            openai: None,
            site,
        };
        let site_id = job.site.id.clone();
        return client::turn(env, &site_id, job).await;
    }
    let (assistant, services) = turn_context(env, &site)?;
    let mut messages = Vec::with_capacity(body.messages.len());
    let last_index = body.messages.len() - 1;
    for (index, message) in body.messages.iter().enumerate() {
        let role = match message.role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => {
                return Err(ApiError::bad_request(
                    "`messages` may hold only \"user\" and \"assistant\" messages: the \
                     site's assistant has its own instructions.",
                ));
            }
        };
        let text = message.text();
        // Messages without text (files only, tool calls only) carry nothing the
        // assistant reads; the last one stays, to be refused as empty.
        if !text.is_empty() || index == last_index {
            messages.push((role, text));
        }
    }
    let identity = match visitor {
        Visitor::User(identity) => identity,
        Visitor::Site => None,
    };
    let run = TurnRun::Stateless(StatelessInput {
        site_id: site.id.clone(),
        messages,
        identity,
    });
    turn_stream::respond_ai_sdk(ctx, services, assistant, run, request_id).await
}

/// `GET /api/chat/{id}/stream` (what `useChat({resume: true})` asks on load): a turn of
/// stored conversation `id` in progress (or ended less than a minute ago) replayed from
/// its start as a UI message stream — the client lost its partial message; else 204. The
/// caller must reach the conversation (404 otherwise); a stateless chat's id has nothing
/// to resume (204).
pub(crate) async fn resume(
    req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    if !is_conversation_id(id) {
        return Ok(Response::empty()?.with_status(204));
    }
    let site = caller.into_inner().site;
    if !matches!(visitor, Visitor::Site) {
        let services = crate::bindings::services::Services::new(env, &site)?;
        reachable(&services, &site.id, id, &visitor).await?;
    }
    client::watch(env, &site.id, id, Watch::AiSdkResume).await
}
