//! Feedback on answers:
//! - `POST /conversations/{id}/messages/{message_id}/feedback` `{"rating": "up"|"down",
//!   "comment"?}` → 200 `{"feedback": {"rating", "comment"}}`: the caller's vote on one
//!   assistant answer, under the conversation routes' rules (key, origin, identity: 404 to
//!   anyone who may not reach the conversation, or when the message is not one of its
//!   answers). One vote per message per voter; voting again replaces it. The voter is the
//!   verified user, the anonymous visitor of an anonymous conversation, or the site.
//! - `GET /admin/feedback?limit=N` (secret key) → `{"feedback": [...]}`: the site's latest
//!   votes (default 100, at most 500), newest first, with the answers voted on.
//!
//! History shows each answer's vote by the caller (`feedback` on the message).

use concierge_core::conversation::Scope;
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::auth::{self, AnyKeyCaller, SecretCaller, Visitor};
use crate::bindings::d1_feedback::FeedbackRow;
use crate::bindings::d1_store::D1Store;
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;

/// The longest comment, in characters.
const MAX_COMMENT_CHARS: usize = 1_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeedbackBody {
    rating: String,
    #[serde(default)]
    comment: Option<String>,
}

/// Who votes, as stored.
pub(crate) fn voter(visitor: &Visitor) -> String {
    match visitor {
        Visitor::Site => "site".into(),
        Visitor::User(Some(identity)) => format!("user:{}", identity.sub),
        Visitor::User(None) => "anonymous".into(),
    }
}

/// A vote as the API shows it.
pub(crate) fn feedback_json(row: &FeedbackRow) -> serde_json::Value {
    serde_json::json!({
        "rating": if row.rating > 0.0 { "up" } else { "down" },
        "comment": row.comment,
    })
}

/// `voter`'s votes in a conversation, by message id (history).
pub(crate) async fn votes(
    store: &D1Store,
    scope: Scope<'_>,
    voter: &str,
) -> Result<Vec<FeedbackRow>, ApiError> {
    store
        .conversation_feedback(scope, voter)
        .await
        .map_err(ApiError::store)
}

/// `POST /conversations/{id}/messages/{message_id}/feedback`.
pub(crate) async fn post(
    mut req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    conversation_id: &str,
    message_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    let body: FeedbackBody = body::json(&mut req).await?;
    let rating: i8 = match body.rating.as_str() {
        "up" => 1,
        "down" => -1,
        _ => {
            return Err(ApiError::bad_request(
                "`rating` must be \"up\" or \"down\".",
            ));
        }
    };
    let comment = body
        .comment
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    if comment.is_some_and(|c| c.chars().count() > MAX_COMMENT_CHARS) {
        return Err(ApiError::bad_request(format!(
            "`comment` is over {MAX_COMMENT_CHARS} characters."
        )));
    }
    let services = Services::new(env, &caller.site)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    auth::reachable_conversation(&services.store, scope, &visitor)
        .await?
        .ok_or(ApiError::NotFound)?;
    // The vote is the conversation's: written in its record (its object).
    let stored = services
        .store
        .writer(scope, false)
        .map_err(ApiError::store)?
        .put_feedback(
            scope,
            message_id,
            &voter(&visitor),
            rating,
            comment,
            now_ms(),
        )
        .await
        .map_err(ApiError::store)?;
    if !stored {
        return Err(ApiError::NotFound);
    }
    let body = serde_json::json!({"feedback": {
        "rating": body.rating, "comment": comment,
    }});
    Ok(Response::from_json(&body)?)
}

/// `GET /admin/feedback`.
pub(crate) async fn list(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let mut limit = 100u32;
    for (key, value) in req.url()?.query_pairs() {
        if key == "limit" {
            limit = value
                .parse()
                .ok()
                .filter(|n| (1..=500).contains(n))
                .ok_or_else(|| ApiError::bad_request("`limit` must be 1 to 500."))?;
        }
    }
    let services = Services::new(env, &caller.site)?;
    let rows = services
        .store
        .site_feedback(&caller.site.id, limit)
        .await
        .map_err(ApiError::store)?;
    let feedback: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let mut json = feedback_json(row);
            json["conversation_id"] = row.conversation_id.clone().into();
            json["message_id"] = row.message_id.clone().into();
            json["voter"] = row.voter.clone().into();
            json["updated_at"] = (row.updated_at as u64).into();
            json["answer"] = row.answer.clone().into();
            json
        })
        .collect();
    Ok(Response::from_json(
        &serde_json::json!({ "feedback": feedback }),
    )?)
}
