//! The MCP server at `/mcp`: Streamable HTTP transport, JSON-RPC 2.0, authenticated with
//! the site's secret key (`Authorization: Bearer sk_…`). What a body means and what to
//! answer is decided in `concierge_core::mcp`; the tools run in [`super::mcp_tools`].
//!
//! - The key is checked before anything else: none or a wrong one is 401 in the API's
//!   error shape, a public key 403.
//! - `POST`: one JSON-RPC message (or, for a session at protocol 2025-03-26, a batch of at
//!   most [`MAX_BATCH`](mcp::MAX_BATCH) messages — a longer one is refused whole, 400
//!   -32600 —, each counted against the rate limits as a request of its own: a batch
//!   over the limit is 429 and none of it runs).
//!   Requests are answered as `application/json` — or as a one-event SSE stream when the
//!   client accepts only `text/event-stream` —, notifications and responses with 202 and
//!   no body. `initialize` answers the client's version when supported, else the latest,
//!   and returns the session id in `Mcp-Session-Id`; `tools/list` and `tools/call` need
//!   that header (400 without, 404 for an unknown, expired or ended session), and a
//!   `MCP-Protocol-Version` header, when sent, must be the session's (400). `ping` and
//!   unknown methods are answered at once, with or without a session (unknown: -32601).
//!   A body that is not JSON is -32700, a message that is not JSON-RPC -32600 (400).
//! - `DELETE`: ends the session (204).
//! - Any other method: 405 (the server sends nothing of its own, so it offers no `GET`
//!   stream).

use concierge_core::mcp::rpc::{self, Body, INVALID_REQUEST, Message, Method, RpcError};
use concierge_core::mcp::session::Session;
use concierge_core::mcp::tools::TemplateTools;
use concierge_core::mcp::{self, ServerInfo, tools};
use serde_json::{Value, json};
use worker::{Env, Request, Response};

use super::mcp_tools::{self, ToolContext};
use crate::auth::{self, Admission, Admitted, Caller, SecretCaller};
use crate::bindings::mcp_sessions;
use crate::error::ApiError;
use crate::http::body;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// How responses to requests are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `application/json`.
    Json,
    /// A `text/event-stream` of one `message` event per response, then the end.
    Sse,
}

/// An answer before it is encoded.
#[derive(Debug)]
struct Reply {
    status: u16,
    body: Option<Value>,
    session_id: Option<String>,
}

impl Reply {
    fn status(status: u16, body: Option<Value>) -> Self {
        Self {
            status,
            body,
            session_id: None,
        }
    }

    /// A transport-level refusal: `status` with a JSON-RPC error (id `null` unless known).
    fn refuse(status: u16, id: &Value, code: i64, message: &str) -> Self {
        Self::status(
            status,
            Some(rpc::failure(id, &RpcError::new(code, message))),
        )
    }
}

/// `/mcp`, any method.
pub(crate) async fn handle(
    req: Request,
    env: &Env,
    Admitted { caller, admission }: Admitted<SecretCaller>,
) -> Result<Response, ApiError> {
    admission.check().await?;
    match req.method() {
        worker::Method::Post => post(req, env, &caller, &admission).await,
        worker::Method::Delete => end(&req, env, &caller).await,
        _ => {
            let mut response = ApiError::MethodNotAllowed.into_response()?;
            response.headers_mut().set("allow", "POST, DELETE")?;
            Ok(response)
        }
    }
}

fn header(req: &Request, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .ok()
        .flatten()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The format the client accepts: JSON unless it accepts only SSE; `None` when it accepts
/// neither.
fn format(req: &Request) -> Option<Format> {
    let Some(accept) = header(req, "accept") else {
        return Some(Format::Json);
    };
    let types: Vec<String> = accept
        .split(',')
        .map(|part| {
            let media = part.split(';').next().unwrap_or_default();
            media.trim().to_ascii_lowercase()
        })
        .collect();
    let accepts = |media: &str| types.iter().any(|t| t == media);
    if accepts("application/json") || accepts("application/*") || accepts("*/*") {
        Some(Format::Json)
    } else if accepts("text/event-stream") || accepts("text/*") {
        Some(Format::Sse)
    } else {
        None
    }
}

/// The session a request names in `Mcp-Session-Id`.
#[derive(Debug)]
enum Named {
    /// No header.
    Nothing,
    /// A live session of the caller's site: its id and what it carries.
    Live(String, Session),
    /// One that does not verify for this site, has expired or was ended: 404.
    Unknown,
}

async fn named_session(req: &Request, env: &Env, caller: &Caller) -> Result<Named, ApiError> {
    let Some(id) = header(req, SESSION_HEADER) else {
        return Ok(Named::Nothing);
    };
    Ok(match mcp_sessions::find(env, &caller.site, &id).await? {
        Some(found) => Named::Live(id, found),
        None => Named::Unknown,
    })
}

fn unknown_session() -> Reply {
    Reply::refuse(
        404,
        &Value::Null,
        INVALID_REQUEST,
        "Session not found: it ended or expired. Initialize a new one.",
    )
}

async fn post(
    mut req: Request,
    env: &Env,
    caller: &Caller,
    admission: &Admission,
) -> Result<Response, ApiError> {
    let Some(format) = format(&req) else {
        let reply = Reply::refuse(
            406,
            &Value::Null,
            INVALID_REQUEST,
            "Not acceptable: accept application/json or text/event-stream.",
        );
        return encode(reply, Format::Json);
    };
    let session = match named_session(&req, env, caller).await? {
        Named::Nothing => None,
        Named::Live(_, found) => Some(found),
        Named::Unknown => return encode(unknown_session(), format),
    };
    if let (Some(found), Some(version)) = (&session, header(&req, VERSION_HEADER))
        && version != found.version
    {
        let message = format!(
            "Unsupported MCP-Protocol-Version {version}: this session speaks {}.",
            found.version
        );
        return encode(
            Reply::refuse(400, &Value::Null, INVALID_REQUEST, &message),
            format,
        );
    }
    let visitor = auth::visitor(&req, env, caller)?;
    let bytes = body::capped(&mut req, body::MAX_BODY_BYTES, body::OVER_MAX_BODY).await?;
    let server = Server {
        tools: ToolContext {
            env,
            site: &caller.site,
            visitor: &visitor,
        },
        session,
    };
    let reply = match rpc::parse(&bytes) {
        Err(error) => Reply::status(400, Some(rpc::failure(&Value::Null, &error))),
        Ok(Body::Single(Err(invalid))) => {
            Reply::status(400, Some(rpc::failure(&invalid.id, &invalid.error)))
        }
        Ok(Body::Single(Ok(Message::Request { id, method, params }))) => {
            server.request(&id, &method, params.as_ref()).await?
        }
        Ok(Body::Single(Ok(_))) => Reply::status(202, None),
        Ok(Body::Batch(messages)) => server.batch(messages, admission).await?,
    };
    encode(reply, format)
}

/// One request's context.
struct Server<'a> {
    tools: ToolContext<'a>,
    session: Option<Session>,
}

impl Server<'_> {
    /// A single request.
    async fn request(
        &self,
        id: &Value,
        method: &str,
        params: Option<&Value>,
    ) -> Result<Reply, ApiError> {
        if Method::of(method).needs_session() && self.session.is_none() {
            return Ok(Reply::refuse(
                400,
                id,
                INVALID_REQUEST,
                "Missing Mcp-Session-Id header: send initialize first.",
            ));
        }
        let (answer, session_id) = self.answer(id, method, params).await?;
        Ok(Reply {
            status: 200,
            body: Some(answer),
            session_id,
        })
    }

    /// A batch: allowed only in a session at a protocol version that has batches, of at
    /// most [`mcp::MAX_BATCH`] messages, each counted by `admission` (the first already
    /// was, as the HTTP request), and without `initialize`. Answered with the responses to
    /// its requests in order (202 when it holds none).
    async fn batch(
        &self,
        messages: Vec<Result<Message, rpc::Invalid>>,
        admission: &Admission,
    ) -> Result<Reply, ApiError> {
        if !self
            .session
            .is_some_and(|s| mcp::batches_allowed(s.version))
        {
            return Ok(Reply::refuse(
                400,
                &Value::Null,
                INVALID_REQUEST,
                "Batches are not supported at this protocol version.",
            ));
        }
        if messages.len() > mcp::MAX_BATCH {
            let message = format!(
                "A batch holds at most {} messages; this one holds {}. Send them in smaller batches.",
                mcp::MAX_BATCH,
                messages.len()
            );
            return Ok(Reply::refuse(400, &Value::Null, INVALID_REQUEST, &message));
        }
        admission
            .check_more(messages.len().saturating_sub(1))
            .await?;
        let mut answers = Vec::new();
        for message in messages {
            match message {
                Err(invalid) => answers.push(rpc::failure(&invalid.id, &invalid.error)),
                Ok(Message::Request { id, method, .. })
                    if Method::of(&method) == Method::Initialize =>
                {
                    let error =
                        RpcError::new(INVALID_REQUEST, "initialize cannot be sent in a batch.");
                    answers.push(rpc::failure(&id, &error));
                }
                Ok(Message::Request { id, method, params }) => {
                    answers.push(self.answer(&id, &method, params.as_ref()).await?.0);
                }
                Ok(_) => {}
            }
        }
        Ok(if answers.is_empty() {
            Reply::status(202, None)
        } else {
            Reply::status(200, Some(Value::Array(answers)))
        })
    }

    /// The response to request `id` (and the new session's id, for `initialize`).
    async fn answer(
        &self,
        id: &Value,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(Value, Option<String>), ApiError> {
        let site = self.tools.site;
        let response = match Method::of(method) {
            Method::Initialize => {
                let requested = match rpc::requested_version(params) {
                    Ok(requested) => requested,
                    Err(error) => return Ok((rpc::failure(id, &error), None)),
                };
                let version = mcp::negotiate(requested);
                let session_id = mcp_sessions::issue(site, version)?;
                let instructions = instructions(&site.template.mcp_tools(), &site.name);
                let info = ServerInfo {
                    name: "concierge",
                    title: &site.name,
                    version: env!("CARGO_PKG_VERSION"),
                    instructions: &instructions,
                };
                let result = mcp::initialize_result(version, &info);
                return Ok((rpc::success(id, result), Some(session_id)));
            }
            Method::Ping => rpc::success(id, json!({})),
            Method::ToolsList => rpc::success(
                id,
                json!({"tools": tools::list(&site.template.mcp_tools())}),
            ),
            Method::ToolsCall => match tools::call_params(params) {
                Err(error) => rpc::failure(id, &error),
                Ok((name, arguments)) => {
                    let result =
                        match tools::parse_call(&site.template.mcp_tools(), name, arguments) {
                            Ok(call) => mcp_tools::run(&self.tools, call).await,
                            Err(message) => tools::error(&message),
                        };
                    rpc::success(id, result)
                }
            },
            Method::Unknown => rpc::failure(id, &RpcError::method_not_found(method)),
        };
        Ok((response, None))
    }
}

/// What the client's model is told about this server (with the template's own words).
fn instructions(own: &TemplateTools, site_name: &str) -> String {
    let own = own.instructions;
    format!(
        "Tools of the assistant of \"{site_name}\": search the site's knowledge, read its \
         conversations, ask its assistant{own}. Everything is limited to this site."
    )
}

/// `DELETE /mcp`: end the session the request names.
async fn end(req: &Request, env: &Env, caller: &Caller) -> Result<Response, ApiError> {
    match named_session(req, env, caller).await? {
        Named::Live(id, found) => {
            mcp_sessions::end(env, &id, &found).await?;
            Ok(Response::empty()?.with_status(204))
        }
        Named::Nothing => Err(ApiError::bad_request(
            "Name the session to end in Mcp-Session-Id.",
        )),
        Named::Unknown => encode(unknown_session(), Format::Json),
    }
}

/// The reply as HTTP; refusals (4xx) always as JSON.
fn encode(reply: Reply, format: Format) -> Result<Response, ApiError> {
    let format = if reply.status >= 400 {
        Format::Json
    } else {
        format
    };
    let mut response = match (reply.body, format) {
        (None, _) => Response::empty()?,
        (Some(body), Format::Json) => Response::from_json(&body)?,
        (Some(body), Format::Sse) => {
            let events = match body {
                Value::Array(items) => items,
                one => vec![one],
            };
            let text: String = events
                .iter()
                .map(|event| format!("event: message\ndata: {event}\n\n"))
                .collect();
            let mut response = Response::ok(text)?;
            let headers = response.headers_mut();
            headers.set("content-type", "text/event-stream; charset=utf-8")?;
            headers.set("cache-control", "no-cache, no-transform")?;
            response
        }
    }
    .with_status(reply.status);
    if let Some(id) = reply.session_id {
        response.headers_mut().set(SESSION_HEADER, &id)?;
    }
    Ok(response)
}
