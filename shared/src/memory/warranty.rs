//! In-memory warranty records (the shop template's serial lookup).

use alloc::collections::BTreeMap;
use alloc::string::String;
use core::cell::{Cell, RefCell};

use crate::boundary::{WarrantyRecord, WarrantyRecords};
use crate::error::ServiceError;

/// Warranty records by site and upper-cased serial.
#[derive(Debug, Default)]
pub struct MemoryWarrantyRecords {
    records: RefCell<BTreeMap<(String, String), WarrantyRecord>>,
    unavailable: Cell<bool>,
}

impl MemoryWarrantyRecords {
    /// No records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Seed 000's demo record on `site_id`: serial `0979825281` → "S23 Ultra", warranty
    /// until 12/8/2026.
    pub fn demo(site_id: &str) -> Self {
        let records = Self::new();
        if let Some(until) = crate::boundary::CalendarDate::new(2026, 8, 12) {
            records.insert(
                site_id,
                WarrantyRecord {
                    serial: "0979825281".into(),
                    product: "S23 Ultra".into(),
                    warranty_until: until,
                },
            );
        }
        records
    }

    /// Adds (or replaces) a record.
    pub fn insert(&self, site_id: &str, record: WarrantyRecord) {
        self.records
            .borrow_mut()
            .insert((site_id.into(), record.serial.to_ascii_uppercase()), record);
    }

    /// Makes every lookup fail as an unreachable database would (`true`), or work again.
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }
}

impl WarrantyRecords for MemoryWarrantyRecords {
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError> {
        if self.unavailable.get() {
            return Err(ServiceError::new(
                crate::error::ServiceErrorKind::Unavailable,
                "warranty records unavailable",
            ));
        }
        Ok(self
            .records
            .borrow()
            .get(&(site_id.into(), serial.to_ascii_uppercase()))
            .cloned())
    }
}
