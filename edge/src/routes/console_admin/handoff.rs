//! The console's handoff routes (secret key; each acts on the caller's site only):
//! - `GET /admin/handoffs?limit=&offset=`: `{"waiting": N, "held": M, "total": N + M,
//!   "limit", "offset", "next_offset", "conversations": [{id, user_id, user_id_verified,
//!   state, requested_at, since, agent, last_message, question}]}` — the conversations
//!   waiting for a
//!   person, newest request first (a flood of requests cannot hide a new one), then those
//!   a person holds, newest first; one page of `limit` (1 to 200, default 200) from
//!   `offset` (default 0); `next_offset` is the next page's, `null` after the last. The
//!   counts are the true ones, whatever the page. `question` is what the visitor wants:
//!   their last own message, or the one before it when the last only asks for a person
//!   ("Gặp nhân viên": [`question`]); `null` when they wrote nothing; `page` the page
//!   (path and query) they asked from, as the panel named it (`routes::follow_up`: the
//!   visitor's to say, display only), `null` when unknown;
//! - `POST /admin/conversations/{id}/handoff` `{"action": "take", "agent": "Lan"}` or
//!   `{"action": "release"}`: a person takes the conversation over (the assistant stops
//!   answering it) or hands it back (a waiting request is dismissed the same way);
//! - `POST /admin/conversations/{id}/messages/human` `{"content"}`: the person's reply
//!   (409 unless the conversation is held), stored like any message (role `assistant`,
//!   kind `human`, metadata `author`) and sent live to the visitor.
//!
//! The operations run in the conversation's object (`object::handoff::handle`), which
//! keeps the state, publishes every change and copies it to D1 for the list.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use concierge_core::handoff::asks_for_person;
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_handoff::{self, MAX_LISTED};
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;
use crate::http::body;
use crate::object::client;
use crate::object::handoff::HandoffOp;
use crate::site_object::follow_ups::SiteFollowUps;

/// The longest name a person may show the visitor.
const MAX_AGENT_CHARS: usize = 60;
/// The longest reply a person may send, in characters.
const MAX_REPLY_CHARS: usize = 4_000;

/// `?limit=&offset=` of `GET /admin/handoffs`: a 400 for anything but whole numbers in
/// range.
fn page(req: &Request) -> Result<(u32, u32), ApiError> {
    let url = req.url()?;
    let (mut limit, mut offset) = (MAX_LISTED, 0);
    for (name, value) in url.query_pairs() {
        let number = || value.parse::<u32>().ok();
        match name.as_ref() {
            "limit" => {
                limit = number()
                    .filter(|n| (1..=MAX_LISTED).contains(n))
                    .ok_or_else(|| {
                        ApiError::bad_request(format!("`limit` must be 1 to {MAX_LISTED}."))
                    })?;
            }
            "offset" => {
                offset = number().ok_or_else(|| {
                    ApiError::bad_request("`offset` must be a whole number from 0.")
                })?;
            }
            _ => {}
        }
    }
    Ok((limit, offset))
}

/// `GET /admin/handoffs`.
pub(crate) async fn list(
    req: &Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let (limit, offset) = page(req)?;
    let (listed, rows) = d1_handoff::list(
        &crate::bindings::record::site(env, &caller.site.id)?,
        &caller.site.id,
        limit,
        offset,
    )
    .await?;
    let pages = visitor_pages(env, &caller.site.id, &rows).await;
    let page = |id: &str| pages.get(id).cloned();
    let ms = |v: Option<f64>| v.map(|ms| ms as u64);
    let conversations: Vec<serde_json::Value> = rows
        .into_iter()
        .map(|row| {
            let verified = row.user_id.is_some() && row.verified.unwrap_or(0.0) > 0.0;
            let last_message = row.last_role.map(|role| {
                serde_json::json!({
                    "role": role,
                    "kind": row.last_kind,
                    "content": row.last_content,
                    "created_at": ms(row.last_created_at),
                })
            });
            serde_json::json!({
                "id": row.id,
                "user_id": row.user_id,
                "user_id_verified": verified,
                "state": row.handoff_state,
                "requested_at": ms(row.handoff_requested_at),
                "since": ms(row.handoff_since),
                "agent": row.handoff_agent,
                "last_message": last_message,
                "question": question(row.visitor_last, row.visitor_before),
                "page": page(&row.id),
            })
        })
        .collect();
    let total = listed.waiting + listed.held;
    let shown = u64::from(offset) + conversations.len() as u64;
    let next_offset = (shown < total && !conversations.is_empty()).then_some(shown);
    Ok(Response::from_json(&serde_json::json!({
        "waiting": listed.waiting,
        "held": listed.held,
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_offset": next_offset,
        "conversations": conversations,
    }))?)
}

/// The pages the listed conversations asked for a person from (the site's object; best
/// effort: the list shows without them when the object fails).
async fn visitor_pages(
    env: &Env,
    site_id: &str,
    rows: &[d1_handoff::HandoffRow],
) -> serde_json::Value {
    if rows.is_empty() {
        return serde_json::Value::Null;
    }
    let ids = rows.iter().map(|r| r.id.clone()).collect();
    match SiteFollowUps::new(env).pages(site_id, ids).await {
        Ok(pages) => pages,
        Err(error) => {
            crate::routes::follow_up::warn("visitor pages not read", site_id, &error);
            serde_json::Value::Null
        }
    }
}

/// The most words a message has that is only a request for a person ("cho mình gặp nhân
/// viên với ạ"), not a question with it.
const BARE_REQUEST_WORDS: usize = 7;

/// What the visitor wants, from their last own message and the one before it: the last,
/// unless it is only a short request for a person and there is an earlier one.
fn question(last: Option<String>, before: Option<String>) -> Option<String> {
    let last = last?;
    let bare = last.split_whitespace().count() <= BARE_REQUEST_WORDS && asks_for_person(&last);
    match before {
        Some(before) if bare && !before.trim().is_empty() => Some(before),
        _ => Some(last),
    }
}

/// Body of `POST /admin/conversations/{id}/handoff`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OperationBody {
    action: String,
    #[serde(default)]
    agent: Option<String>,
}

/// `POST /admin/conversations/{id}/handoff`.
pub(crate) async fn operate(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let body: OperationBody = body::json(&mut req).await?;
    let op = match body.action.as_str() {
        "take" => HandoffOp::Take {
            agent: agent_name(body.agent.as_deref())?,
        },
        "release" => HandoffOp::Release,
        _ => {
            return Err(ApiError::bad_request(
                "`action` must be \"take\" or \"release\".",
            ));
        }
    };
    existing(env, &caller, id).await?;
    client::handoff(env, &caller.site.id, id, op).await
}

/// Body of `POST /admin/conversations/{id}/messages/human`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyBody {
    content: String,
}

/// `POST /admin/conversations/{id}/messages/human`.
pub(crate) async fn reply(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let body: ReplyBody = body::json(&mut req).await?;
    let content = body.content.trim();
    if content.is_empty() || content.chars().count() > MAX_REPLY_CHARS {
        return Err(ApiError::bad_request(format!(
            "`content` must be 1 to {MAX_REPLY_CHARS} characters."
        )));
    }
    existing(env, &caller, id).await?;
    let op = HandoffOp::Reply {
        content: content.to_string(),
    };
    client::handoff(env, &caller.site.id, id, op).await
}

/// The person's name as the visitor sees it: trimmed, 1 to [`MAX_AGENT_CHARS`]
/// characters, no control characters.
fn agent_name(agent: Option<&str>) -> Result<String, ApiError> {
    let name = agent.map(str::trim).unwrap_or_default();
    if name.is_empty()
        || name.chars().count() > MAX_AGENT_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(ApiError::bad_request(format!(
            "`agent` (the name the visitor sees) must be 1 to {MAX_AGENT_CHARS} characters to take a conversation."
        )));
    }
    Ok(name.to_string())
}

/// A conversation's handoff as the console shows it (`{"state", "since"?,
/// "requested_at"?, "agent"?}`), as its record holds it.
pub(crate) async fn state_of(env: &Env, scope: Scope<'_>) -> Result<serde_json::Value, ApiError> {
    let record = d1_handoff::read(&crate::bindings::record::remote(env, scope, false)?, scope)
        .await?
        .unwrap_or_default();
    Ok(crate::object::handoff::state_json(&record))
}

/// 404 unless conversation `id` exists on the caller's site.
async fn existing(env: &Env, caller: &SecretCaller, id: &str) -> Result<(), ApiError> {
    D1Store::new(env)?
        .load_conversation(Scope::new(&caller.site.id, id))
        .await
        .map_err(ApiError::store)?
        .map(|_| ())
        .ok_or(ApiError::UnknownConversation)
}
