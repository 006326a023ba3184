//! The Worker's side of the conversation objects: typed calls over internal requests
//! (`stub.fetch_with_request`, `https://object/<op>`). The object is reachable only through
//! the `CONVERSATIONS` binding, so it trusts what it is sent: the Worker has authenticated
//! the caller, validated the body and resolved who the visitor is before it calls.
//!
//! A turn's stream is relayed to the client as the object writes it (the body is piped
//! natively, never decoded or re-encoded here). Should the object's stream break before
//! its terminal event (the object was reset mid-turn), the Worker asks the object — a new
//! instance, which has recorded the turn's failure — for that terminal event and ends the
//! client's stream with it: exactly one terminal event, whatever happens.

use serde::{Deserialize, Serialize};
use worker::{Env, Headers, Method, Request, RequestInit, Response, ResponseBody, Stub};

use super::handoff::HandoffOp;
use super::log::LiveEvent;
use super::openai::OpenAiAnswer;
use crate::auth::Visitor;
use crate::bindings::js_stream::Piped;
use crate::error::ApiError;
use crate::site::Site;

/// The binding of the conversation objects' namespace (`wrangler.toml`).
pub(crate) const BINDING: &str = "CONVERSATIONS";

/// Headers of every internal request: which conversation the object serves (an object
/// learns its names from its first request and keeps them for its alarms).
pub(crate) const SITE_HEADER: &str = "x-concierge-site";
pub(crate) const CONVERSATION_HEADER: &str = "x-concierge-conversation";
/// Response header of a turn's stream: the id of its first event (`started`), by which
/// the Worker asks for its terminal event should the stream break.
pub(crate) const FIRST_EVENT_HEADER: &str = "x-concierge-first-event";

/// The object of conversation `conversation_id` of site `site_id` (named
/// `"{site_id}/{conversation_id}"`).
pub(crate) fn stub(env: &Env, site_id: &str, conversation_id: &str) -> Result<Stub, ApiError> {
    let namespace = env.durable_object(BINDING)?;
    let id = namespace.id_from_name(&format!("{site_id}/{conversation_id}"))?;
    Ok(id.get_stub()?)
}

/// How the poster wants its turn answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Format {
    /// The native SSE stream (`id: <n>` on every frame, conversation-wide).
    Native,
    /// The AI SDK's UI message stream v1.
    AiSdk,
    /// One JSON document once the turn is over (`Accept: application/json`).
    Json,
    /// `Prefer: respond-async`: stored now, answered on the turn queue (202).
    Accept,
    /// `/v1/chat/completions`: OpenAI's chunks or `chat.completion` ([`ObjectTurn::openai`]).
    OpenAi,
}

/// What the turn does.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum TurnKind {
    /// A visitor's message.
    Message {
        text: String,
        #[serde(default)]
        idempotency_key: Option<String>,
    },
    /// The last answer, answered again (`POST …/regenerate`).
    Regenerate {
        #[serde(default)]
        expected: Option<String>,
    },
}

/// A stored conversation's turn, forwarded to its object.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ObjectTurn {
    /// The site the caller authenticated with (the object does not read it again).
    pub site: Site,
    pub conversation_id: String,
    /// Who asks: the object checks that they may reach the conversation (from its own
    /// memory of it) before anything is stored.
    pub visitor: Visitor,
    pub kind: TurnKind,
    pub format: Format,
    /// The rate limits the turn counts against, `(binding, key)`; checked by the object
    /// while the turn reads the conversation. Empty: already checked (or none).
    #[serde(default)]
    pub limits: Vec<(String, String)>,
    pub request_id: String,
    /// With [`Format::OpenAi`].
    #[serde(default)]
    pub openai: Option<OpenAiAnswer>,
}

/// What a client watches.
#[derive(Debug, Clone)]
pub(crate) enum Watch {
    /// `GET /conversations/{id}/stream`: the current (or last) turn's events after
    /// `after` (all of them without), then its terminal event, then the end; 204 when
    /// there is nothing after it.
    Resume { after: Option<u64> },
    /// `GET /api/chat/{id}/stream`: a turn in progress replayed from its start as a UI
    /// message stream; 204 when none is in progress.
    AiSdkResume,
    /// `GET /conversations/{id}/events`: every event from now on (after `after`, missed
    /// ones first), kept open within `grant`'s bounds (`super::streams`).
    Events {
        after: Option<u64>,
        grant: super::streams::Grant,
    },
}

/// An internal request to the object.
pub(super) fn internal(
    method: Method,
    site_id: &str,
    conversation_id: &str,
    path_and_query: &str,
    body: Option<String>,
) -> Result<Request, ApiError> {
    let headers = Headers::new();
    headers.set(SITE_HEADER, site_id)?;
    headers.set(CONVERSATION_HEADER, conversation_id)?;
    let mut init = RequestInit::new();
    init.with_method(method).with_headers(headers);
    if let Some(body) = body {
        init.with_body(Some(body.into()));
    }
    Ok(Request::new_with_init(
        &format!("https://object/{path_and_query}"),
        &init,
    )?)
}

/// Forward a stored conversation's turn; the object answers with the response the client
/// gets (a stream is relayed as it comes, see the module's documentation).
pub(crate) async fn turn(env: &Env, site_id: &str, job: ObjectTurn) -> Result<Response, ApiError> {
    let conversation_id = job.conversation_id.clone();
    let format = job.format;
    let body = serde_json::to_string(&job).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let req = internal(Method::Post, site_id, &conversation_id, "turn", Some(body))?;
    let stub = stub(env, site_id, &conversation_id)?;
    let response = stub.fetch_with_request(req).await?;
    let first = response
        .headers()
        .get(FIRST_EVENT_HEADER)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<u64>().ok());
    match (first, format) {
        // OpenAI's stream has no resume: a break ends it with the interruption's error.
        (Some(_), Format::OpenAi) => {
            let frame = job
                .openai
                .as_ref()
                .map(OpenAiAnswer::interrupted)
                .unwrap_or_default();
            relay_turn(response, move || async move { frame })
        }
        (Some(first), Format::Native | Format::AiSdk) => {
            let env = env.clone();
            let (site_id, conversation) = (site_id.to_string(), conversation_id);
            relay_turn(response, move || async move {
                terminal(&env, &site_id, &conversation, first, format).await
            })
        }
        _ => relay(response),
    }
}

/// A client's watch of the conversation (resume, live events).
pub(crate) async fn watch(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
    watch: Watch,
) -> Result<Response, ApiError> {
    let path = match &watch {
        Watch::Resume { after: Some(after) } => format!("stream?after={after}"),
        Watch::Resume { after: None } => "stream".to_string(),
        Watch::AiSdkResume => "stream?format=ai_sdk".to_string(),
        Watch::Events {
            after: Some(after), ..
        } => format!("events?after={after}"),
        Watch::Events { after: None, .. } => "events".to_string(),
    };
    let req = internal(Method::Get, site_id, conversation_id, &path, None)?;
    if let Watch::Events { grant, .. } = &watch {
        let grant = serde_json::to_string(grant).map_err(|e| ApiError::Corrupt(e.to_string()))?;
        req.headers().set(super::streams::GRANT_HEADER, &grant)?;
    }
    let response = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    relay(response)
}

/// A live event from outside a turn (a person's message, a handoff change): stored
/// already; the object numbers it, keeps it in its log, and sends it to attached clients.
#[allow(dead_code)] // the handoff routes' (owner B)
pub(crate) async fn publish(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
    event: LiveEvent,
) -> Result<(), ApiError> {
    let body = serde_json::to_string(&event).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let req = internal(
        Method::Post,
        site_id,
        conversation_id,
        "publish",
        Some(body),
    )?;
    let response = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    match response.status_code() {
        200..=299 => Ok(()),
        status => Err(ApiError::Internal(worker::Error::RustError(format!(
            "publish: the object answered {status}"
        )))),
    }
}

/// A handoff operation (its handler runs inside the object).
#[allow(dead_code)] // the handoff routes' (owner B)
pub(crate) async fn handoff(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
    op: HandoffOp,
) -> Result<Response, ApiError> {
    let body = serde_json::to_string(&op).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let req = internal(
        Method::Post,
        site_id,
        conversation_id,
        "handoff",
        Some(body),
    )?;
    let response = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    relay(response)
}

/// Wakes conversation `conversation_id`'s object (a new conversation) and has it read the
/// conversation (its last `window` messages) into its memory: its first turn then starts
/// without waiting for its home to start or reading D1 first.
pub(crate) async fn warm(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
    window: usize,
) -> Result<(), ApiError> {
    let path = format!("warm?window={window}");
    let req = internal(Method::Post, site_id, conversation_id, &path, None)?;
    stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    Ok(())
}

/// Tells the object its conversation was deleted: it forgets it (memory and storage) and
/// ends its live streams; every later request to it is 404, as for an unknown one.
pub(crate) async fn forget(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
) -> Result<(), ApiError> {
    let req = internal(Method::Post, site_id, conversation_id, "forget", None)?;
    let response = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    match response.status_code() {
        200..=299 => Ok(()),
        status => Err(ApiError::Internal(worker::Error::RustError(format!(
            "forget: the object answered {status}"
        )))),
    }
}

/// What the object holds (the debug route): its storage's keys, its deleted mark, its
/// handoff, its live streams.
pub(crate) async fn debug_state(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let req = internal(Method::Get, site_id, conversation_id, "state", None)?;
    let response = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    relay(response)
}

/// Tells the object to reset itself (the debug route; the reset's error is expected).
pub(crate) async fn abort(env: &Env, site_id: &str, conversation_id: &str) -> Result<(), ApiError> {
    let req = internal(Method::Post, site_id, conversation_id, "abort", None)?;
    let _ = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await;
    Ok(())
}

/// The terminal event of the turn whose first event is `first`, encoded for `format`
/// (after a broken stream); a generic failure when the object cannot say.
async fn terminal(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
    first: u64,
    format: Format,
) -> String {
    let format_query = if format == Format::AiSdk {
        "&format=ai_sdk"
    } else {
        ""
    };
    let path = format!("terminal?first={first}{format_query}");
    let asked = async {
        let req = internal(Method::Get, site_id, conversation_id, &path, None)?;
        let mut response = stub(env, site_id, conversation_id)?
            .fetch_with_request(req)
            .await?;
        if response.status_code() != 200 {
            return Err(ApiError::NotFound);
        }
        Ok::<_, ApiError>(response.text().await?)
    };
    match asked.await {
        Ok(text) if !text.is_empty() => text,
        _ => super::log::interrupted_frame(None, format == Format::AiSdk),
    }
}

/// The object's response as one the Worker can change (its headers are the fetch's,
/// immutable): same status, headers and body (not read).
pub(crate) fn relay(response: Response) -> Result<Response, ApiError> {
    let status = response.status_code();
    let headers = Headers::new();
    for (name, value) in response.headers().entries() {
        if name != FIRST_EVENT_HEADER {
            headers.set(&name, &value)?;
        }
    }
    let (_, body) = response.into_parts();
    Ok(Response::from_body(body)?
        .with_status(status)
        .with_headers(headers))
}

/// A turn's stream relayed through a pipe of the Worker's own: the object's body is piped
/// into it natively; if that breaks (the object's stream errored), `on_break`'s frame
/// ends it.
fn relay_turn<F, Fut>(response: Response, on_break: F) -> Result<Response, ApiError>
where
    F: FnOnce() -> Fut + 'static,
    Fut: std::future::Future<Output = String> + 'static,
{
    let relayed = relay(response)?;
    let status = relayed.status_code();
    let headers = relayed.headers().clone();
    let (_, body) = relayed.into_parts();
    let ResponseBody::Stream(source) = body else {
        return Ok(Response::from_body(body)?
            .with_status(status)
            .with_headers(headers));
    };
    let (readable, piped) = Piped::from(&source)?;
    wasm_bindgen_futures::spawn_local(async move {
        let (ended, writer) = piped.finish().await;
        if !ended {
            let frame = on_break().await;
            writer.write(frame.as_bytes());
        }
        writer.close();
    });
    Ok(Response::from_body(ResponseBody::Stream(readable))?
        .with_status(status)
        .with_headers(headers))
}
