//! A request's admission by its rate limits (see [`super`] for the limits), and how a turn
//! may run ahead of it.
//!
//! Each limiter call is a round trip. A turn need not wait for it to *start* its answer
//! when the caller was admitted the last time this isolate asked: the answer then runs
//! while the limiter decides, held back and dropped unseen (nothing stored) if the caller
//! is refused after all. A caller refused last time, or one never seen, waits as before;
//! and at most [`MAX_AHEAD`] turns of one caller run ahead at once, so a burst cannot
//! reach the model much beyond its limit.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;

use concierge_core::engine;
use worker::{Env, Request};

use super::{client_key, limit};
use crate::error::ApiError;
use crate::site::{KeyKind, Site};

/// Turns of one caller (its first limit's key) answering ahead of their verdict at once.
const MAX_AHEAD: u32 = 4;
/// Verdicts remembered at most; past it the memory is cleared (a hint, not a record).
const MAX_VERDICTS: usize = 10_000;

thread_local! {
    /// `binding:key` → whether the limiter admitted its last request.
    static VERDICTS: RefCell<HashMap<String, bool>> = RefCell::new(HashMap::new());
    /// A caller's first limit `binding:key` → its turns answering ahead of their verdict.
    static AHEAD: RefCell<HashMap<String, u32>> = RefCell::new(HashMap::new());
}

fn memo_key(binding: &str, key: &str) -> String {
    format!("{binding}:{key}")
}

fn remember(binding: &str, key: &str, admitted: bool) {
    VERDICTS.with(|v| {
        let mut verdicts = v.borrow_mut();
        if verdicts.len() >= MAX_VERDICTS {
            verdicts.clear();
        }
        verdicts.insert(memo_key(binding, key), admitted);
    });
}

/// A turn answering ahead of its verdict; counted in [`AHEAD`] while it lives.
struct Ahead(String);

impl Ahead {
    /// A place ahead for a caller whose every limit admitted its last request, if one is free.
    fn take(limits: &[(&'static str, String)]) -> Option<Self> {
        let admitted_last = VERDICTS.with(|v| {
            let verdicts = v.borrow();
            limits
                .iter()
                .all(|(binding, key)| verdicts.get(&memo_key(binding, key)) == Some(&true))
        });
        let (binding, key) = limits.first()?;
        let caller = memo_key(binding, key);
        if !admitted_last {
            return None;
        }
        AHEAD.with(|a| {
            let mut ahead = a.borrow_mut();
            let running = ahead.entry(caller.clone()).or_insert(0);
            (*running < MAX_AHEAD).then(|| {
                *running += 1;
                Self(caller)
            })
        })
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        AHEAD.with(|a| {
            let mut ahead = a.borrow_mut();
            if let Some(running) = ahead.get_mut(&self.0) {
                *running -= 1;
                if *running == 0 {
                    ahead.remove(&self.0);
                }
            }
        });
    }
}

/// The rate limits one request of a caller counts against: with a public key, the site and
/// client's (`PUBLIC_RATE_LIMIT`, the client keyed by [`client_key`]), then the site's
/// ceiling for visitors (`SITE_RATE_LIMIT`); with the secret key, the site's own budget
/// (`SECRET_RATE_LIMIT`), which visitors' requests never use up.
pub(crate) struct Admission {
    env: Env,
    limits: Vec<(&'static str, String)>,
    /// Why [`admit`](Self::admit) refused, once it did.
    refusal: Rc<RefCell<Option<ApiError>>>,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Admission {
    pub(super) fn new(
        req: &Request,
        env: &Env,
        site: &Site,
        kind: KeyKind,
    ) -> Result<Self, ApiError> {
        let mut limits = Vec::with_capacity(2);
        match kind {
            KeyKind::Public => {
                let client = client_key(req)?;
                limits.push(("PUBLIC_RATE_LIMIT", format!("{}:{client}", site.id)));
                limits.push(("SITE_RATE_LIMIT", site.id.clone()));
            }
            KeyKind::Secret => limits.push(("SECRET_RATE_LIMIT", site.id.clone())),
        }
        Ok(Self {
            env: env.clone(),
            limits,
            refusal: Rc::default(),
        })
    }

    /// The limits this admission counts against (`binding`, `key`): what the Worker sends
    /// the conversation's object, which admits the turn itself ([`Self::from_limits`]).
    pub(crate) fn limits(&self) -> Vec<(String, String)> {
        self.limits
            .iter()
            .map(|(binding, key)| ((*binding).to_string(), key.clone()))
            .collect()
    }

    /// The admission of [`Self::limits`], in the object (unknown bindings are left out).
    pub(crate) fn from_limits(env: &Env, limits: &[(String, String)]) -> Self {
        let limits = limits
            .iter()
            .filter_map(|(binding, key)| {
                let binding = match binding.as_str() {
                    "PUBLIC_RATE_LIMIT" => "PUBLIC_RATE_LIMIT",
                    "SITE_RATE_LIMIT" => "SITE_RATE_LIMIT",
                    "SECRET_RATE_LIMIT" => "SECRET_RATE_LIMIT",
                    _ => return None,
                };
                Some((binding, key.clone()))
            })
            .collect();
        Self {
            env: env.clone(),
            limits,
            refusal: Rc::default(),
        }
    }

    /// Counts the request against each limit in turn; the first refusal ends it.
    pub(crate) async fn check(&self) -> Result<(), ApiError> {
        for (binding, key) in &self.limits {
            let counted = limit(&self.env, binding, key).await;
            remember(binding, key, counted.is_ok());
            counted?;
        }
        Ok(())
    }

    /// Counts `n` more requests against each limit at once (the other messages of a batch
    /// admitted as one request); refused when any count is.
    pub(crate) async fn check_more(&self, n: usize) -> Result<(), ApiError> {
        for (binding, key) in &self.limits {
            let counts = (0..n).map(|_| limit(&self.env, binding, key));
            let counted = futures_util::future::join_all(counts).await;
            let refused = counted.into_iter().find_map(Result::err);
            remember(binding, key, refused.is_none());
            if let Some(error) = refused {
                return Err(error);
            }
        }
        Ok(())
    }

    /// This admission as a turn takes it: [likely](engine::Admission::likely) when the
    /// caller was admitted last time and may run ahead (see the module's documentation).
    pub(crate) fn for_turn(self) -> engine::Admission<impl Future<Output = bool>> {
        let ahead = Ahead::take(&self.limits);
        let likely = ahead.is_some();
        let verdict = async move {
            let admitted = self.admit().await;
            drop(ahead);
            admitted
        };
        engine::Admission { verdict, likely }
    }

    /// [`check`](Self::check) as a yes or no, keeping the refusal for [`refusal`](Self::refusal).
    pub(crate) async fn admit(&self) -> bool {
        match self.check().await {
            Ok(()) => true,
            Err(error) => {
                *self.refusal.borrow_mut() = Some(error);
                false
            }
        }
    }

    /// Where [`admit`](Self::admit) leaves its refusal.
    pub(crate) fn refusal(&self) -> Rc<RefCell<Option<ApiError>>> {
        self.refusal.clone()
    }
}
