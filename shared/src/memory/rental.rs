//! Rental roles and learned Q&A in memory.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::boundary::{QaRecord, RentalData, RentalFuture};
use crate::error::{ServiceError, ServiceErrorKind};

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
