//! The `rental` template's own rows, in the site's object (`crate::site_object::rental`):
//! roles of known users, learned Q&A, and the seed endpoint's sessions. Every call goes to
//! the object of the site it names, so nothing reaches another site's rows.

use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::flows::rental::{QaRecord, RentalData, RentalFuture};
use serde::de::DeserializeOwned;
use worker::Env;

use crate::error::ApiError;
use crate::site_object::rental::RentalCall;
use crate::site_object::{SiteCall, call};

/// Sends `rental` to `site_id`'s object.
pub(crate) async fn ask<T: DeserializeOwned>(
    env: &Env,
    site_id: &str,
    rental: RentalCall,
) -> Result<T, ApiError> {
    call(env, site_id, &SiteCall::Rental(rental)).await
}

/// Roles and learned Q&A in the site's object.
#[derive(Debug)]
pub(crate) struct SiteRental {
    env: Env,
}

impl SiteRental {
    pub(crate) fn new(env: &Env) -> Self {
        Self { env: env.clone() }
    }

    fn ask<'a, T: DeserializeOwned + 'a>(
        &'a self,
        site_id: &'a str,
        rental: RentalCall,
    ) -> RentalFuture<'a, T> {
        Box::pin(async move {
            ask(&self.env, site_id, rental)
                .await
                .map_err(|e| ServiceError::new(ServiceErrorKind::Unavailable, e.to_string()))
        })
    }
}

/// A page of the admin list: entries older than `before`, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QaCursor {
    /// The last listed entry's `created_at`.
    pub(crate) created_at: u64,
    /// The last listed entry's id.
    pub(crate) id: String,
}

impl QaCursor {
    /// `{created_at}.{id}`, as `next` carries it.
    pub(crate) fn after(record: &QaRecord) -> String {
        format!("{}.{}", record.created_at, record.id)
    }

    /// A cursor as `next` gave it; `None` when it is not one.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (created_at, id) = text.split_once('.')?;
        let valid_id = (1..=64).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        (valid_id && created_at.len() <= 16).then_some(())?;
        Some(Self {
            created_at: created_at.parse().ok()?,
            id: id.to_string(),
        })
    }
}

impl RentalData for SiteRental {
    fn role<'a>(&'a self, site_id: &'a str, user_id: &'a str) -> RentalFuture<'a, Option<String>> {
        let user_id = user_id.to_string();
        self.ask(site_id, RentalCall::Role(user_id))
    }

    fn qa<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, Option<QaRecord>> {
        let id = id.to_string();
        self.ask(site_id, RentalCall::Qa(id))
    }

    fn save_qa<'a>(&'a self, site_id: &'a str, record: &'a QaRecord) -> RentalFuture<'a, ()> {
        let record = record.clone();
        self.ask(site_id, RentalCall::SaveQa(record))
    }

    fn qa_hit<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, ()> {
        let id = id.to_string();
        self.ask(site_id, RentalCall::QaHit(id))
    }
}
