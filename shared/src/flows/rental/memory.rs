//! `rental`'s dependencies in memory (feature `memory`), for tests and native tools: the
//! roles and learned Q&A ([`MemoryRental`]), the listings as read-only SQL whose
//! model-written statements `rental`'s validator checks ([`listings`]), and the backend a
//! `rental` turn runs on ([`MemoryRentalBackend`]: the generic backend with those two).
//!
//! ```
//! use concierge_core::flows::rental::RentalConfig;
//! use concierge_core::flows::rental::memory::MemoryRentalBackend;
//!
//! let backend = MemoryRentalBackend::default();
//! let rental = backend.assistant(RentalConfig::default());
//! // `backend.base` is the engine's platform; `backend.sql` and `backend.rental` are
//! // `rental`'s own dependencies, which `rental` holds.
//! # let _ = (&backend.base, rental);
//! ```

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::ops::Deref;

use super::{QaRecord, RentalAssistant, RentalConfig, RentalData, RentalFuture};
use crate::error::{ServiceError, ServiceErrorKind};
use crate::memory::{MemoryBackend, MemorySql};

/// The generic in-memory backend with `rental`'s own dependencies beside it.
#[derive(Debug)]
pub struct MemoryRentalBackend {
    /// The engine's platform (model, store, timer, …).
    pub base: MemoryBackend,
    /// The site's listings, as read-only SQL ([`listings`]).
    pub sql: MemorySql,
    /// Roles and learned Q&A.
    pub rental: MemoryRental,
}

impl Default for MemoryRentalBackend {
    fn default() -> Self {
        Self {
            base: MemoryBackend::default(),
            sql: listings(),
            rental: MemoryRental::default(),
        }
    }
}

impl MemoryRentalBackend {
    /// `rental` with `config`, over this backend's listings and rental data.
    pub fn assistant(&self, config: RentalConfig) -> RentalAssistant<&MemorySql, &MemoryRental> {
        RentalAssistant::new(config, &self.sql, &self.rental)
    }
}

/// The generic backend's parts (`backend.model`, `backend.timer`, …) read through.
impl Deref for MemoryRentalBackend {
    type Target = MemoryBackend;

    fn deref(&self) -> &MemoryBackend {
        &self.base
    }
}

/// Read-only SQL over tables in memory whose model-written statements are checked by
/// `rental`'s validator (feature `rental-sql`; without it they are refused).
pub fn listings() -> MemorySql {
    #[cfg(feature = "rental-sql")]
    {
        MemorySql::with_written_check(check_written)
    }
    #[cfg(not(feature = "rental-sql"))]
    {
        MemorySql::new()
    }
}

/// A model-written statement validated by `rental`'s validator against `tables`: the
/// statement to run and its first table, or the validator's sentence.
#[cfg(feature = "rental-sql")]
fn check_written(
    sql: &str,
    tables: &[crate::boundary::TableSchema],
) -> Result<(String, Option<String>), String> {
    let valid =
        super::sql::validate_in(sql, &super::schema::catalog_of(tables)).map_err(|r| r.0)?;
    Ok((valid.sql().into(), valid.first_table().map(Into::into)))
}

/// Roles and learned Q&A per site, in memory.
#[derive(Debug, Default)]
pub struct MemoryRental {
    roles: RefCell<Vec<(String, String, String)>>,
    qa: RefCell<Vec<(String, QaRecord)>>,
    unavailable: Cell<bool>,
}

impl MemoryRental {
    /// Sets `user_id`'s role on `site_id`.
    pub fn set_role(&self, site_id: &str, user_id: &str, role: &str) {
        let mut roles = self.roles.borrow_mut();
        roles.retain(|(s, u, _)| !(s == site_id && u == user_id));
        roles.push((site_id.into(), user_id.into(), role.into()));
    }

    /// The site's learned Q&A, oldest first.
    pub fn learned(&self, site_id: &str) -> Vec<QaRecord> {
        let qa = self.qa.borrow();
        qa.iter()
            .filter(|(s, _)| s == site_id)
            .map(|(_, r)| r.clone())
            .collect()
    }

    /// Makes every later call fail with `Unavailable` (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }

    fn check(&self) -> Result<(), ServiceError> {
        if self.unavailable.get() {
            return Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory rental data set unavailable",
            ));
        }
        Ok(())
    }
}

impl RentalData for MemoryRental {
    fn role<'a>(&'a self, site_id: &'a str, user_id: &'a str) -> RentalFuture<'a, Option<String>> {
        Box::pin(async move {
            self.check()?;
            let roles = self.roles.borrow();
            Ok(roles
                .iter()
                .find(|(s, u, _)| s == site_id && u == user_id)
                .map(|(_, _, r)| r.clone()))
        })
    }

    fn qa<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, Option<QaRecord>> {
        Box::pin(async move {
            self.check()?;
            let qa = self.qa.borrow();
            Ok(qa
                .iter()
                .find(|(s, r)| s == site_id && r.id == id)
                .map(|(_, r)| r.clone()))
        })
    }

    fn save_qa<'a>(&'a self, site_id: &'a str, record: &'a QaRecord) -> RentalFuture<'a, ()> {
        Box::pin(async move {
            self.check()?;
            let mut qa = self.qa.borrow_mut();
            qa.retain(|(s, r)| !(s == site_id && r.id == record.id));
            qa.push((site_id.into(), record.clone()));
            Ok(())
        })
    }

    fn qa_hit<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, ()> {
        Box::pin(async move {
            self.check()?;
            let mut qa = self.qa.borrow_mut();
            if let Some((_, record)) = qa.iter_mut().find(|(s, r)| s == site_id && r.id == id) {
                record.hits += 1;
            }
            Ok(())
        })
    }
}
