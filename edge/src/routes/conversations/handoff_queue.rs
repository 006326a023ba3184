//! The queue of conversations waiting for a person, capped (issue 39): before a visitor's
//! request for a person ([`asks_for_person`]) reaches the conversation's object, which
//! would put the conversation in the queue, the Worker checks the queue:
//! - one client (its rate-limit key: an IPv4 address or an IPv6 `/64`) keeps at most
//!   [`MAX_WAITING_PER_CLIENT`] conversations waiting;
//! - a site keeps at most [`MAX_WAITING_PER_SITE`] conversations waiting.
//!
//! Over either cap the message is refused before anything is stored: 429
//! `handoff_queue_full`, its message Vietnamese first ([`ApiError::HandoffQueueFull`]).
//! A conversation already waiting or held adds nothing to the queue and is never refused
//! here; nor is a request outside office hours (nobody is asked). Two requests at the
//! same instant may both pass the check: the caps can be passed by a burst's few.
//!
//! A request that joins the queue also records the page the visitor asked from (issue 45,
//! `routes::follow_up::visitor_page`), shown in the console's waiting list.

use concierge_core::conversation::Scope;
use concierge_core::handoff::asks_for_person;
use worker::{Env, Request};

use crate::auth::{self, Caller};
use crate::bindings::d1_handoff;
use crate::error::ApiError;
use crate::site::KeyKind;

/// Conversations one client keeps waiting for a person at most.
pub(crate) const MAX_WAITING_PER_CLIENT: u64 = 3;
/// Conversations a site keeps waiting for a person at most.
pub(crate) const MAX_WAITING_PER_SITE: u64 = 500;

/// Refuses `text`, a message to conversation `conversation_id`, when it asks for a person
/// and the queue is full for its client or its site (see the module's documentation).
pub(crate) async fn admit(
    req: &Request,
    env: &Env,
    caller: &Caller,
    conversation_id: &str,
    text: &str,
) -> Result<(), ApiError> {
    let Some(settings) = caller.site.config.handoff.as_ref().filter(|h| h.enabled) else {
        return Ok(());
    };
    if !asks_for_person(text) || !settings.open_at(crate::runtime::now_ms()) {
        return Ok(());
    }
    let client = match caller.kind {
        KeyKind::Public => Some(auth::client_key(req)?),
        KeyKind::Secret => None,
    };
    // The site's waiting list: the copy of its conversations in the site's object.
    let db = crate::bindings::record::site(env, &caller.site.id)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    let stand = d1_handoff::queue_stand(&db, scope, client.as_deref()).await?;
    if stand.already_in {
        return Ok(());
    }
    let client_full = client.is_some() && stand.client_waiting >= MAX_WAITING_PER_CLIENT;
    if client_full || stand.site_waiting >= MAX_WAITING_PER_SITE {
        return Err(ApiError::HandoffQueueFull);
    }
    // The conversation's own row: written in its record (its object), the one writer.
    let record = crate::bindings::record::remote(env, scope, false)?;
    d1_handoff::set_client(&record, scope, client.as_deref()).await?;
    record_page(req, env, caller, conversation_id).await;
    Ok(())
}

/// Records the page the visitor asks for a person from (`follow_up::visitor_page`), for
/// the console's waiting list. Best effort: a failure is logged and the request goes on.
async fn record_page(req: &Request, env: &Env, caller: &Caller, conversation_id: &str) {
    let Some(page) = crate::routes::follow_up::visitor_page(req) else {
        return;
    };
    // No identity check of its own (a D1 read): like the queue's own record above, it runs
    // before the conversation's object checks who may reach the conversation, whose id is
    // the visitor's secret; the page is display only, and old pages are dropped
    // (`follow_ups::set_page`).
    let pages = crate::site_object::follow_ups::SiteFollowUps::new(env);
    let recorded = pages
        .set_page(
            &caller.site.id,
            conversation_id,
            &page,
            crate::runtime::now_ms(),
        )
        .await;
    if let Err(error) = recorded {
        crate::routes::follow_up::warn("visitor page not recorded", &caller.site.id, &error);
    }
}
