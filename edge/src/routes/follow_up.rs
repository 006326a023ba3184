//! Visitors to call back when nobody is free (issue 45), and the page a visitor is on:
//! - `POST /conversations/{id}/follow-up` `{"contact", "question"}` → 201 `{"follow_up":
//!   {id, conversation_id, contact, kind, question, page, created_at, done_at},
//!   "replaced"}`: under the conversation routes' rules (key, origin, identity: 404 to
//!   anyone who may not reach the conversation; rate limits). `contact` must be a phone
//!   number or an e-mail address (`concierge_core::handoff::Contact`; else 400
//!   `invalid_contact`), `question` 1 to [`MAX_QUESTION_CHARS`] characters. One open
//!   follow-up per conversation: another replaces it (`"replaced": true`: the visitor
//!   corrects their number). Over the site's cap of open ones: 409 `limit_reached`.
//! - `GET /admin/follow-ups?limit=` (secret key) → `{"open": n, "follow_ups": [...]}`:
//!   open ones oldest first, then done ones, `limit` (1 to 500, default 200) in all.
//! - `POST /admin/follow-ups/{id}/done` (secret key) → `{"follow_up": {...}}`: called back
//!   (404 for an id the site does not have).
//!
//! The page: the panel's URL carries the embedding page's path and query (`/chat?site_key=
//! …&page=/products/x?y=1`, set by the loader, `widget/embed/embed.js`), so every request
//! the panel makes names it in its `Referer` (same-origin requests carry the full URL).
//! [`visitor_page`] reads it from there — no byte of the panel's first download spent —
//! and keeps a path and query only (the loader sends none from a page not served over
//! http(s)). It is the visitor's to say: stored and shown as text, never trusted.

use concierge_core::conversation::Scope;
use concierge_core::handoff::Contact;
use worker::{Env, Request, Response};

use crate::auth::{self, AnyKeyCaller, SecretCaller};
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;
use crate::site_object::follow_ups::SiteFollowUps;
use crate::site_object::json_text;

/// The longest question, in characters.
pub(crate) const MAX_QUESTION_CHARS: usize = 1_000;
/// The longest page kept, in characters (a longer one is cut).
pub(crate) const MAX_PAGE_CHARS: usize = 300;

/// The page the panel making `req` is shown on (see the module's documentation): a path
/// (and query) of at most [`MAX_PAGE_CHARS`] characters, or `None`.
pub(crate) fn visitor_page(req: &Request) -> Option<String> {
    let referer = req.headers().get("referer").ok().flatten()?;
    let referer = worker::Url::parse(&referer).ok()?;
    let own = req.url().ok()?;
    let same_origin = referer.scheme() == own.scheme()
        && referer.host_str() == own.host_str()
        && referer.port_or_known_default() == own.port_or_known_default();
    if !same_origin || referer.path() != "/chat" {
        return None;
    }
    let page = referer
        .query_pairs()
        .find(|(name, _)| name == "page")
        .map(|(_, page)| page.into_owned())?;
    page_text(&page)
}

/// `page` as kept: a site path (`/…`, not `//host`) without control characters, cut to
/// [`MAX_PAGE_CHARS`].
fn page_text(page: &str) -> Option<String> {
    let page = page.trim();
    let path = page.starts_with('/') && !page.starts_with("//") && !page.starts_with("/\\");
    (path && !page.chars().any(char::is_control))
        .then(|| page.chars().take(MAX_PAGE_CHARS).collect())
}

/// `POST /conversations/{id}/follow-up`.
pub(crate) async fn post(
    mut req: Request,
    env: &Env,
    caller: AnyKeyCaller,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let visitor = auth::visitor(&req, env, &caller)?;
    // Read as a JSON value (a struct of its own would cost the Worker's size its decoder).
    let body: serde_json::Value = body::json(&mut req).await?;
    let text = |name: &str| body.get(name).and_then(serde_json::Value::as_str);
    let known = body
        .as_object()
        .is_some_and(|o| o.keys().all(|k| k == "contact" || k == "question"));
    let (Some(contact), Some(question), true) = (text("contact"), text("question"), known) else {
        return Err(ApiError::bad_request(
            "The body must be {\"contact\": string, \"question\": string}.",
        ));
    };
    let contact = Contact::parse(contact).ok_or(ApiError::InvalidContact)?;
    let question = question.trim();
    if question.is_empty() {
        return Err(ApiError::bad_request("`question` must not be empty."));
    }
    if question.chars().count() > MAX_QUESTION_CHARS {
        return Err(ApiError::bad_request("`question` is over 1000 characters."));
    }
    let store = D1Store::new(env)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    auth::reachable_conversation(&store, scope, &visitor)
        .await?
        .ok_or(ApiError::NotFound)?;
    // The follow-up to leave, as the site's object reads it (`follow_ups::leave`).
    let new = serde_json::json!({
        "id": new_id(), "conversation_id": conversation_id, "contact": contact.as_str(),
        "kind": contact.kind(), "question": question, "page": visitor_page(&req),
        "at": now_ms(),
    });
    let left = SiteFollowUps::new(env).leave(&caller.site.id, &new).await?;
    if left == "null" {
        return Err(ApiError::LimitReached(
            "Too many open follow-ups; try again later.".into(),
        ));
    }
    Ok(json_text(left)?.with_status(201))
}

/// `GET /admin/follow-ups`.
pub(crate) async fn list(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let mut limit = 200u32;
    for (key, value) in req.url()?.query_pairs() {
        if key == "limit" {
            limit = value
                .parse()
                .ok()
                .filter(|n| (1..=500).contains(n))
                .ok_or_else(|| ApiError::bad_request("`limit` must be 1 to 500."))?;
        }
    }
    let listed = SiteFollowUps::new(env).list(&caller.site.id, limit).await?;
    json_text(listed)
}

/// `POST /admin/follow-ups/{id}/done`.
pub(crate) async fn done(env: &Env, caller: SecretCaller, id: &str) -> Result<Response, ApiError> {
    let follow_up = SiteFollowUps::new(env)
        .done(&caller.site.id, id, now_ms())
        .await?;
    if follow_up == "null" {
        return Err(ApiError::NotFound);
    }
    json_text(follow_up)
}

/// Logs a best-effort step that failed (the request goes on without it).
pub(crate) fn warn(msg: &str, site_id: &str, error: &ApiError) {
    let line = serde_json::json!({"level": "warn", "msg": msg, "site": site_id,
        "detail": format!("{error:?}")});
    worker::console_warn!("{line}");
}

fn new_id() -> String {
    use concierge_core::boundary::Ids;
    crate::bindings::services::RandomIds.new_id()
}

#[cfg(test)]
mod tests {
    use super::page_text;

    #[test]
    fn pages_are_site_paths() {
        assert_eq!(page_text("/p/1?a=b").as_deref(), Some("/p/1?a=b"));
        for bad in [
            "javascript:alert(1)",
            "//evil.example/x",
            "/\\evil",
            "https://x/y",
            "/a\nb",
            "",
        ] {
            assert_eq!(page_text(bad), None, "{bad:?}");
        }
        let long = format!("/{}", "x".repeat(400));
        assert_eq!(page_text(&long).map(|p| p.chars().count()), Some(300));
    }
}
