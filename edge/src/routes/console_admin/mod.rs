//! The console's review and testing routes (secret key; each acts on the caller's site
//! only):
//! - `GET /admin/conversations/export?format=csv|json&…filter`: the messages of the
//!   conversations the list's filter takes, as a download;
//! - `GET /admin/conversations/{id}`: one conversation's messages with what the visitor
//!   saw besides the text (payloads, and the tool calls as name and outcome), and its
//!   handoff (`{"state", "since"?, "requested_at"?, "agent"?}`);
//! - `GET /admin/stats?days=N&tz=M`: the dashboard's figures;
//! - `POST /admin/try-token {"user_id", "role"?, "permissions"?, "department"?}`: a
//!   short-lived user token signed with the site's user-token secret, so the console's
//!   Try it panel can speak for a user (the secret itself never leaves the Worker);
//! - `GET /admin/rental-schema`: the site's listings schema (the entities records are
//!   uploaded under);
//! - handoff to a person: `GET /admin/handoffs`, `POST /admin/conversations/{id}/handoff`,
//!   `POST /admin/conversations/{id}/messages/human` (in `handoff`).
//!
//! The list's filter (`q`, `votes=down|up`, `unanswered=1`, `template=<name>|unknown`,
//! `from`/`to` in Unix milliseconds) is read by [`filter`]; a bad value is a 400 naming
//! the parameter.
//!
//! The export (CSV or JSON) is in `export`.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use concierge_core::identity::{self, UserIdentity};
use concierge_core::template::Template;
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_console_stats::{ConversationFilter, TemplateFilter};
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;
use crate::http::body;
use crate::routes::conversations::message_json;

mod export;
mod handoff;

pub(crate) use export::export;
pub(crate) use handoff::{list as handoffs, operate as handoff_operation, reply as human_reply};

/// How long a Try it token lives, in seconds.
const TRY_TOKEN_SECS: u64 = 15 * 60;
/// Conversations an export takes unless its `limit` says fewer: all (it is streamed).
const EXPORT_CONVERSATIONS: u32 = u32::MAX;
/// The longest search text, in characters.
const MAX_SEARCH_CHARS: usize = 200;

/// The conversation filter in `req`'s query, and its `limit` (`default`, 1 to `max`).
pub(crate) fn filter(
    req: &Request,
    default: u32,
    max: u32,
) -> Result<(ConversationFilter, u32), ApiError> {
    let mut filter = ConversationFilter::default();
    let mut limit = default;
    let time = |name: &str, value: &str| {
        value
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && (0.0..=1e14).contains(t))
            .ok_or_else(|| {
                ApiError::bad_request(format!("`{name}` must be a time in Unix milliseconds."))
            })
    };
    for (key, value) in req.url()?.query_pairs() {
        match key.as_ref() {
            "limit" => {
                limit = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=max).contains(n))
                    .ok_or_else(|| ApiError::bad_request(format!("`limit` must be 1 to {max}.")))?;
            }
            "q" => {
                let text = value.trim();
                if text.chars().count() > MAX_SEARCH_CHARS || text.chars().any(char::is_control) {
                    return Err(ApiError::bad_request(format!(
                        "`q` must be at most {MAX_SEARCH_CHARS} characters, no control characters."
                    )));
                }
                filter.search = Some(text.to_string()).filter(|t| !t.is_empty());
            }
            "votes" => {
                filter.rating = match value.as_ref() {
                    "down" => Some(-1),
                    "up" => Some(1),
                    "" | "any" => None,
                    _ => {
                        return Err(ApiError::bad_request(
                            "`votes` must be \"down\", \"up\" or \"any\".",
                        ));
                    }
                }
            }
            "unanswered" => {
                filter.unanswered = match value.as_ref() {
                    "1" | "true" => true,
                    "" | "0" | "false" => false,
                    _ => return Err(ApiError::bad_request("`unanswered` must be 1 or 0.")),
                }
            }
            "template" => {
                filter.template = match value.as_ref() {
                    "" | "any" => None,
                    "unknown" => Some(TemplateFilter::Unknown),
                    name => Some(Template::parse(name).map(TemplateFilter::Is).ok_or_else(
                        || {
                            ApiError::bad_request(format!(
                                "`template` must be one of {}, \"unknown\" or \"any\".",
                                Template::ALL
                                    .map(|t| format!("\"{}\"", t.as_str()))
                                    .join(", ")
                            ))
                        },
                    )?),
                }
            }
            "from" if !value.is_empty() => filter.from_ms = Some(time("from", &value)?),
            "to" if !value.is_empty() => filter.to_ms = Some(time("to", &value)?),
            _ => {}
        }
    }
    Ok((filter, limit))
}

/// `GET /admin/conversations/{id}`.
pub(crate) async fn conversation(
    env: &Env,
    caller: SecretCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let store = D1Store::new(env)?;
    let scope = Scope::new(&caller.site.id, id);
    let conversation = store
        .load_conversation(scope)
        .await
        .map_err(ApiError::store)?
        .ok_or(ApiError::NotFound)?;
    let messages = store
        .load_recent_messages(scope, 1_000)
        .await
        .map_err(ApiError::store)?;
    let messages: Vec<serde_json::Value> = messages
        .iter()
        .map(|message| {
            let mut json = message_json(message);
            let mut tools: Vec<serde_json::Value> = message
                .tool_steps
                .iter()
                .flat_map(|step| &step.calls)
                .map(|call| serde_json::json!({"id": call.id, "name": call.name, "ok": call.ok}))
                .collect();
            // Templates that keep their calls in the metadata (`analyst`: `tool_calls`).
            if tools.is_empty()
                && let Some(calls) = message
                    .metadata
                    .get("tool_calls")
                    .and_then(|c| c.as_array())
            {
                tools = calls
                    .iter()
                    .filter_map(|call| {
                        let name = call.get("tool_name")?.as_str()?;
                        let id = call
                            .get("tool_call_id")
                            .and_then(|v| v.as_str())
                            .unwrap_or(name);
                        let ok = call.get("error").is_none_or(serde_json::Value::is_null);
                        Some(serde_json::json!({"id": id, "name": name, "ok": ok}))
                    })
                    .collect();
            }
            if !tools.is_empty() {
                json["tools"] = tools.into();
            }
            json
        })
        .collect();
    let body = serde_json::json!({
        "conversation_id": id,
        "user_id": conversation.identity.as_ref().map(|i| i.sub.clone()),
        // The label a public-key caller gave, when no identity proves a user.
        "user_label": conversation.identity.is_none().then(|| conversation.user_id.clone()).flatten(),
        "user_id_verified": conversation.identity.is_some(),
        "language": conversation.language.as_str(),
        "messages": messages,
        "handoff": handoff::state_of(env, scope).await?,
    });
    Ok(Response::from_json(&body)?)
}

/// `GET /admin/stats?days=N` (1 to 90, default 14) `&tz=M` (minutes east of UTC the days
/// are counted in, -840 to 840, default 0). Besides the activity, outcomes, votes and top
/// questions (requests for a person left out), `handoff`: `{requested, taken, timed_out,
/// median_take_ms}` over the period, read from the handoff lines the log keeps (the
/// median over the latest 500 taken waits; `null` when none was taken).
pub(crate) async fn stats(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let mut days = 14u32;
    let mut offset = 0i32;
    for (key, value) in req.url()?.query_pairs() {
        match key.as_ref() {
            "days" => {
                days = value
                    .parse()
                    .ok()
                    .filter(|d| (1..=90).contains(d))
                    .ok_or_else(|| ApiError::bad_request("`days` must be 1 to 90."))?;
            }
            "tz" => {
                offset = value
                    .parse()
                    .ok()
                    .filter(|m: &i32| (-840..=840).contains(m))
                    .ok_or_else(|| {
                        ApiError::bad_request("`tz` must be minutes east of UTC, -840 to 840.")
                    })?;
            }
            _ => {}
        }
    }
    // From the start of the first day shown, in the caller's time zone.
    let now = crate::runtime::now_ms() as f64;
    let local_midnight = ((now + f64::from(offset) * 60_000.0) / 86_400_000.0).floor()
        * 86_400_000.0
        - f64::from(offset) * 60_000.0;
    let since = local_midnight - f64::from(days - 1) * 86_400_000.0;
    let store = D1Store::new(env)?;
    let site = caller.site.id.as_str();
    let per_day = store
        .activity_by_day(site, since, offset)
        .await
        .map_err(ApiError::store)?;
    let outcomes = store.outcomes(site, since).await.map_err(ApiError::store)?;
    let top = store
        .top_questions(site, since, 5)
        .await
        .map_err(ApiError::store)?;
    let body = serde_json::json!({
        "days": days,
        "since": since,
        "per_day": per_day,
        "answered": outcomes.answered,
        "unanswered": outcomes.unanswered,
        "down_votes": outcomes.down_votes,
        "up_votes": outcomes.up_votes,
        "top_questions": top,
        "handoff": {
            "requested": outcomes.handoff_requested as u64,
            "taken": outcomes.handoff_taken as u64,
            "timed_out": outcomes.handoff_timed_out as u64,
            "median_take_ms": outcomes.median_take_ms,
        },
    });
    Ok(Response::from_json(&body)?)
}

/// `GET /admin/template-defaults`: each template's settings as a site without any of its
/// own reads them (`{"guarded": {…}, "knowledge": {…}, "rental": {…}, "analyst": {…}}`,
/// the keys `PATCH /admin/site` takes under the template's name), for the console to show
/// beside the settings a site sets. The same for every site (the caller's key only admits).
pub(crate) fn template_defaults(_caller: SecretCaller) -> Result<Response, ApiError> {
    use concierge_core::flows::{
        analyst::AnalystConfig, guarded::GuardedConfig, knowledge::KnowledgeConfig,
        rental::RentalConfig,
    };
    let guarded = GuardedConfig::default();
    let knowledge = KnowledgeConfig::default();
    let rental = RentalConfig::default();
    let analyst = AnalystConfig::default();
    let body = serde_json::json!({
        "guarded": {
            "domain_vi": guarded.domain_vi,
            "domain_en": guarded.domain_en,
            "refusal_vi": guarded.vi.refusal,
            "refusal_en": guarded.en.refusal,
            "auto_compress": guarded.auto_compress,
            "compression_deletes": guarded.compression_deletes,
            "debug_log": guarded.debug_log,
            "guardrail_with_context": guarded.guardrail_with_context,
            "search": {"provider": "local", "timeout_ms": 5000},
        },
        "knowledge": {
            "agents": knowledge.agents,
            "workflow": knowledge.workflow,
            "rules": knowledge.rules,
            "permissions": knowledge.permissions,
        },
        "rental": {
            "schema": rental.schema,
            "show_role_label": rental.show_role_label,
            "row_cap": rental.row_cap,
        },
        "analyst": {
            "formatter_llm": analyst.formatter_llm,
            "max_rows": analyst.max_rows,
            "json_tool_calls": false,
        },
    });
    Ok(Response::from_json(&body)?)
}

/// Body of `POST /admin/try-token`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TryTokenBody {
    user_id: String,
    role: Option<String>,
    #[serde(default)]
    permissions: Vec<String>,
    department: Option<String>,
}

/// `POST /admin/try-token`.
pub(crate) async fn try_token(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let body: TryTokenBody = body::json(&mut req).await?;
    let blank = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let identity = UserIdentity::new(
        body.user_id.trim().to_string(),
        blank(body.role),
        body.permissions
            .into_iter()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
        blank(body.department),
    )
    .map_err(|err| {
        ApiError::bad_request(err.message().replace("`sub` (or `user_id`)", "`user_id`"))
    })?;
    let secret = caller
        .site
        .user_token_secret(env)?
        .ok_or(ApiError::Conflict(
            "This site has no user-token secret yet: create one (Try it, or \
         POST /admin/site/user-token-secret), then try again.",
        ))?;
    let expires_at = crate::runtime::now_ms() / 1000 + TRY_TOKEN_SECS;
    let mut claims =
        serde_json::to_value(&identity).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    claims["exp"] = expires_at.into();
    let token = identity::sign_user_token(claims.to_string().as_bytes(), secret.as_bytes());
    Ok(Response::from_json(&serde_json::json!({
        "user_token": token,
        "user_id": identity.sub,
        "expires_at": expires_at,
    }))?)
}
