//! The `rental` template's own data port (TEMPLATES.md §2.3): the roles a merchant uploaded for
//! known users, and the learned Q&A (validated questions with their SQL) reused by
//! canonical lookup. Listings themselves are read through
//! [`SqlReader`](crate::boundary::SqlReader).
//!
//! Object-safe (boxed futures), so a [`Platform`](crate::engine::Platform) offers it with a
//! default method and platforms without rental data need not change.

use alloc::boxed::Box;
use alloc::string::String;
use core::future::Future;
use core::pin::Pin;
use serde::{Deserialize, Serialize};

use crate::error::ServiceError;

/// A future borrowed from the store (single-threaded: no `Send`).
pub type RentalFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ServiceError>> + 'a>>;

/// One learned question and the SQL that answered it (stored only when the result
/// validator said valid).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QaRecord {
    /// Its id (also its vector's id suffix).
    pub id: String,
    /// The visitor's question.
    pub question: String,
    /// The validated, re-serialised statement (identity-free).
    pub sql: String,
    /// The orchestrator's request type (`QUERY`).
    pub request_type: String,
    /// The answer's mode (`LIST`, `TABLE`, `CHART`).
    pub mode: Option<String>,
    /// When it was learned (ms since the epoch).
    pub created_at: u64,
    /// How often it was reused.
    pub hits: u64,
    /// The role the SQL was written for (`GUEST`, `TENANT`, `LANDLORD`); reused only for
    /// the same role. `None` for entries learned before roles were recorded.
    #[serde(default)]
    pub role: Option<String>,
    /// Whether the SQL model's prompt held the question and nothing of the conversation
    /// (no earlier turns): only such entries are reused. `false` for entries learned
    /// before this was recorded, which stay listed for the merchant to review.
    #[serde(default)]
    pub context_free: bool,
}

impl QaRecord {
    /// Whether a visitor with `role` may be answered with this entry's SQL.
    pub fn reusable_by(&self, role: &str) -> bool {
        self.context_free && self.role.as_deref() == Some(role)
    }
}

/// Roles and learned Q&A of rental sites, always scoped by site.
pub trait RentalData {
    /// The role the merchant uploaded for `user_id` (`TENANT` or `LANDLORD`), if any.
    fn role<'a>(&'a self, site_id: &'a str, user_id: &'a str) -> RentalFuture<'a, Option<String>>;

    /// One learned Q&A of the site.
    fn qa<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, Option<QaRecord>>;

    /// Stores a learned Q&A.
    fn save_qa<'a>(&'a self, site_id: &'a str, record: &'a QaRecord) -> RentalFuture<'a, ()>;

    /// Counts one reuse of a learned Q&A.
    fn qa_hit<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, ()>;
}

impl<T: RentalData + ?Sized> RentalData for &T {
    fn role<'a>(&'a self, site_id: &'a str, user_id: &'a str) -> RentalFuture<'a, Option<String>> {
        (**self).role(site_id, user_id)
    }
    fn qa<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, Option<QaRecord>> {
        (**self).qa(site_id, id)
    }
    fn save_qa<'a>(&'a self, site_id: &'a str, record: &'a QaRecord) -> RentalFuture<'a, ()> {
        (**self).save_qa(site_id, record)
    }
    fn qa_hit<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, ()> {
        (**self).qa_hit(site_id, id)
    }
}
