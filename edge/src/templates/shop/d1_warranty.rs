//! Warranty records (the shop template's serial lookup) over D1.

use concierge_core::boundary::{WarrantyRecord, WarrantyRecords};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;

use crate::bindings::d1_store::{D1Store, service_error};

impl WarrantyRecords for D1Store {
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError> {
        #[derive(Deserialize)]
        struct Row {
            serial: String,
            product: String,
            warranty_until: String,
        }
        let row = self
            .db()
            .prepare(
                "SELECT serial, product, warranty_until FROM warranty_records \
                 WHERE site_id = ?1 AND serial = ?2 COLLATE NOCASE LIMIT 1",
            )
            .bind(&[site_id.into(), serial.into()])
            .map_err(service_error)?
            .first::<Row>(None)
            .await
            .map_err(service_error)?;
        row.map(|r| {
            let until = concierge_core::boundary::CalendarDate::parse_iso(&r.warranty_until)
                .ok_or_else(|| {
                    ServiceError::new(ServiceErrorKind::Other, "stored warranty date")
                })?;
            Ok(WarrantyRecord {
                serial: r.serial,
                product: r.product,
                warranty_until: until,
            })
        })
        .transpose()
    }
}
