//! The live streams' bounds (`GET /conversations/{id}/events`, issue 39). A live stream
//! keeps its conversation's object active, and every event is written to every watcher,
//! so each stream is held within a [`Grant`] the Worker gives it when it opens:
//!
//! - **caps**: at most [`MAX_STREAMS_PER_CONVERSATION`] streams per conversation and
//!   [`MAX_STREAMS_PER_CLIENT`] per client address within it; one more is 429
//!   `too_many_streams` ([`admit`]);
//! - **a bounded life**: a stream ends after [`LIFETIME_SECONDS`] (the Worker's
//!   `LIVE_STREAM_MAX_SECONDS` may shorten it) and at its user token's expiry, whichever
//!   comes first;
//! - **authorisation kept**: the key it was opened with is checked again at every ping
//!   (the site cache's bound: a rotated key ends its streams within about a minute); a
//!   deleted conversation ends its streams at once ([`Inner::close_watchers`]);
//! - **readers only**: a client that stops reading is dropped, its stream broken — when
//!   more than [`MAX_UNREAD_WRITES`] writes wait for it, or when it read nothing for a
//!   whole ping interval while writes waited.
//!
//! A stream that ends sends one last event, `closed` `{"code", "message", "reconnect"}`
//! ([`Closing`]), then ends: `reconnect` tells the client whether to open it again as it is
//! (after its bounded life), or not without something new (a fresh token) or at all.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::Inner;
use super::log::Watcher;
use super::watch::PING_SECONDS;
use crate::error::ApiError;
use crate::site::KeyKind;

/// Live streams one conversation may have open at once for its visitors (and as many for
/// the secret key).
pub(crate) const MAX_STREAMS_PER_CONVERSATION: usize = 8;
/// Live streams one client address may hold on one conversation at once.
pub(crate) const MAX_STREAMS_PER_CLIENT: usize = 4;
/// The longest a live stream lives, in seconds; then it ends with `closed`
/// `stream_expired` and the client reconnects.
pub(crate) const LIFETIME_SECONDS: u64 = 15 * 60;
/// Writes that may wait for a client that does not read before it is dropped.
pub(crate) const MAX_UNREAD_WRITES: u64 = 64;
/// Why a dropped reader's stream breaks.
pub(crate) const TOO_SLOW: &str = "the client stopped reading the live stream";
/// The request header carrying a stream's [`Grant`] to the object.
pub(crate) const GRANT_HEADER: &str = "x-concierge-grant";

/// Why a live stream ends (the `code` of its `closed` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Closing {
    /// Its bounded life is over: reconnect.
    StreamExpired,
    /// Its user token expired: reconnect only with a fresh token.
    TokenExpired,
    /// The conversation was deleted: never reconnect.
    ConversationDeleted,
    /// The key it was opened with no longer exists (rotated): never with that key.
    KeysRotated,
}

impl Closing {
    /// The event's `code`.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Self::StreamExpired => "stream_expired",
            Self::TokenExpired => "token_expired",
            Self::ConversationDeleted => "conversation_deleted",
            Self::KeysRotated => "keys_rotated",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Self::StreamExpired => "The live stream reached its longest life; open it again.",
            Self::TokenExpired => {
                "The user token expired; open the live stream again with a fresh token."
            }
            Self::ConversationDeleted => "The conversation was deleted.",
            Self::KeysRotated => "The site's keys were rotated; this key no longer works.",
        }
    }

    /// Whether the client may open the stream again as it did.
    pub(crate) fn reconnect(self) -> bool {
        self == Self::StreamExpired
    }

    /// The `closed` frame (no id: not an event of the conversation's log).
    pub(crate) fn frame(self) -> String {
        let data = serde_json::json!({
            "code": self.code(), "message": self.message(), "reconnect": self.reconnect(),
        });
        format!("event: closed\ndata: {data}\n\n")
    }
}

/// What the Worker grants a live stream as it opens it (the object trusts it: only the
/// Worker reaches the object).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Grant {
    /// The client, as the rate limits key it (an IPv4 address, an IPv6 /64; `secret` for
    /// the secret key), for the per-client cap.
    pub client: String,
    /// When the stream ends at the latest (Unix ms), and why then.
    pub until_ms: u64,
    pub ends_with: Closing,
    /// The digest of the key it was opened with, and whether it is the secret key.
    pub key_hash: String,
    pub secret: bool,
}

/// 429 `too_many_streams` when `grant`'s stream would pass a cap (the watchers that are
/// gone or dropped are not counted). The secret key's streams (the console following a
/// conversation it holds) are counted apart from the visitors', so visitors filling the
/// conversation's cap never shut the merchant out.
pub(super) fn admit(watchers: &mut Vec<Rc<Watcher>>, grant: &Grant) -> Result<(), ApiError> {
    watchers.retain(|w| w.kept());
    let same_side = watchers
        .iter()
        .filter(|w| w.grant.secret == grant.secret)
        .count();
    let from_client = watchers
        .iter()
        .filter(|w| w.grant.client == grant.client)
        .count();
    if same_side >= MAX_STREAMS_PER_CONVERSATION || from_client >= MAX_STREAMS_PER_CLIENT {
        return Err(ApiError::TooManyStreams);
    }
    Ok(())
}

impl Inner {
    /// Ends every live stream with `closed` (`why`).
    pub(super) fn close_watchers(&self, why: Closing) {
        let watchers = std::mem::take(&mut self.log.borrow_mut().watchers);
        for watcher in watchers {
            end(&watcher, why);
        }
    }

    /// Ends `watcher`'s stream with `closed` (`why`), if it is still open.
    fn close_watcher(&self, watcher: &Rc<Watcher>, why: Closing) {
        let held = {
            let mut log = self.log.borrow_mut();
            let before = log.watchers.len();
            log.watchers.retain(|w| !Rc::ptr_eq(w, watcher));
            log.watchers.len() != before
        };
        if held {
            end(watcher, why);
        }
    }

    fn watches(&self, watcher: &Rc<Watcher>) -> bool {
        self.log
            .borrow()
            .watchers
            .iter()
            .any(|w| Rc::ptr_eq(w, watcher))
    }

    /// Drops `watcher` (a reader that stopped reading): its stream breaks.
    fn drop_watcher(&self, watcher: &Rc<Watcher>) {
        self.log
            .borrow_mut()
            .watchers
            .retain(|w| !Rc::ptr_eq(w, watcher));
        watcher.writer.abort(TOO_SLOW);
    }
}

fn end(watcher: &Watcher, why: Closing) {
    watcher.writer.write_now(why.frame().as_bytes());
    watcher.writer.close();
}

/// The life of `watcher`'s stream: a `: ping` every [`PING_SECONDS`] s, the key checked
/// at each, the end at its grant's bound; a reader that stopped reading dropped.
pub(super) fn follow(inner: Rc<Inner>, watcher: Rc<Watcher>) {
    wasm_bindgen_futures::spawn_local(async move {
        let mut settled = watcher.writer.settled_writes();
        loop {
            let left = watcher
                .grant
                .until_ms
                .saturating_sub(crate::runtime::now_ms());
            if left == 0 {
                inner.close_watcher(&watcher, watcher.grant.ends_with);
                return;
            }
            let wait = left.min(PING_SECONDS * 1000);
            worker::Delay::from(std::time::Duration::from_millis(wait)).await;
            if !inner.watches(&watcher) || watcher.writer.is_gone() {
                inner
                    .log
                    .borrow_mut()
                    .watchers
                    .retain(|w| !Rc::ptr_eq(w, &watcher));
                return;
            }
            if watcher.grant.until_ms <= crate::runtime::now_ms() {
                continue;
            }
            // Nothing read for a whole interval while writes waited: not a reader.
            let now_settled = watcher.writer.settled_writes();
            if watcher.writer.unread_writes() > 0 && now_settled == settled {
                inner.drop_watcher(&watcher);
                return;
            }
            settled = now_settled;
            if !key_holds(&inner, &watcher.grant).await {
                inner.close_watcher(&watcher, Closing::KeysRotated);
                return;
            }
            watcher.writer.write_now(b": ping\n\n");
        }
    });
}

/// Whether the key `grant`'s stream was opened with is still its site's (the site cache:
/// a rotation shows within its trust bound). A lookup that fails keeps the stream.
async fn key_holds(inner: &Inner, grant: &Grant) -> bool {
    let kind = if grant.secret {
        KeyKind::Secret
    } else {
        KeyKind::Public
    };
    let site_id = inner.names.borrow().as_ref().map(|n| n.site_id.clone());
    match crate::bindings::d1_sites::find_by_key_hash(&inner.env, kind, &grant.key_hash).await {
        Ok(Some(site)) => site_id.is_none_or(|id| id == site.id),
        Ok(None) => false,
        Err(_) => true,
    }
}
