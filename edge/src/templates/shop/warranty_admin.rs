//! `POST /admin/warranty`: the shop template's warranty records, uploaded in bulk.

use concierge_core::boundary::{CalendarDate, WarrantyRecord};
use concierge_core::flows::shop::warranty::{SERIAL_MAX_CHARS, SERIAL_MIN_CHARS, is_valid_serial};
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::error::ApiError;
use crate::http::body;
use crate::site::caps::Caps;
use crate::site_object::warranty::SiteWarranty;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WarrantyUpsert {
    records: Vec<WarrantyRecordIn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WarrantyRecordIn {
    serial: String,
    product: String,
    /// `YYYY-MM-DD`.
    warranty_until: String,
}

/// `POST /admin/warranty`: bulk upsert warranty records (all or nothing). Serials follow
/// the core's rule and are unique per site whatever their letter case; dates are
/// `YYYY-MM-DD` days that exist.
pub(crate) async fn upsert_warranty(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let body: WarrantyUpsert = body::json(&mut req).await?;
    if body.records.is_empty() || body.records.len() > 500 {
        return Err(ApiError::bad_request(
            "`records` must hold 1 to 500 records.",
        ));
    }
    let mut records = Vec::with_capacity(body.records.len());
    for (i, record) in body.records.iter().enumerate() {
        let serial = record.serial.trim();
        if !is_valid_serial(serial) {
            return Err(ApiError::bad_request(format!(
                "records[{i}].serial must be {SERIAL_MIN_CHARS} to {SERIAL_MAX_CHARS} letters, digits or '-'."
            )));
        }
        let Some(warranty_until) = CalendarDate::parse_iso(&record.warranty_until) else {
            return Err(ApiError::bad_request(format!(
                "records[{i}].warranty_until must be a date that exists, as YYYY-MM-DD."
            )));
        };
        let product = record.product.trim();
        if product.is_empty() {
            return Err(ApiError::bad_request(format!(
                "records[{i}].product must not be empty."
            )));
        }
        records.push(WarrantyRecord {
            serial: serial.to_string(),
            product: product.to_string(),
            warranty_until,
        });
    }
    let caps = Caps::of(env);
    let upserted = records.len();
    let written = SiteWarranty::new(env)
        .upsert(&caller.site.id, records, caps.warranty_records)
        .await?;
    if !written {
        return Err(caps.warranty_full());
    }
    Ok(Response::from_json(
        &serde_json::json!({"upserted": upserted}),
    )?)
}
