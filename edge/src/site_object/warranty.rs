//! The site's warranty records (`shop`'s serial lookup) in its object: serials unique per
//! site whatever their letter case, uploaded all or nothing under the site's cap.

use concierge_core::boundary::{CalendarDate, WarrantyRecord, WarrantyRecords};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use worker::{D1Database, Env, SqlStorage};

use super::{SiteCall, SiteObject, call, forget_imported};
use crate::error::ApiError;

pub(super) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS warranty (
    serial         TEXT PRIMARY KEY COLLATE NOCASE,
    product        TEXT NOT NULL,
    warranty_until TEXT NOT NULL
);";

/// Records read from D1 per import statement.
const IMPORT_PAGE: usize = 5_000;

/// Inserts or replaces `records`: a record replaces the one with the same serial in any
/// letter case, taking its spelling.
pub(super) fn upsert(sql: &SqlStorage, records: &[WarrantyRecord]) -> worker::Result<()> {
    for record in records {
        sql.exec(
            "INSERT INTO warranty (serial, product, warranty_until) VALUES (?1, ?2, ?3) \
             ON CONFLICT (serial) DO UPDATE SET serial = excluded.serial, \
             product = excluded.product, warranty_until = excluded.warranty_until",
            vec![
                record.serial.as_str().into(),
                record.product.as_str().into(),
                record.warranty_until.iso().into(),
            ],
        )?;
    }
    Ok(())
}

/// How many records the site holds.
pub(super) fn count(sql: &SqlStorage) -> worker::Result<u64> {
    super::count(sql, "SELECT count(*) AS n FROM warranty")
}

/// The record of `serial`, any letter case.
pub(super) fn find(sql: &SqlStorage, serial: &str) -> worker::Result<Option<WarrantyRecord>> {
    #[derive(Deserialize)]
    struct Row {
        serial: String,
        product: String,
        warranty_until: String,
    }
    let rows: Vec<Row> = sql
        .exec(
            "SELECT serial, product, warranty_until FROM warranty WHERE serial = ?1 LIMIT 1",
            vec![serial.into()],
        )?
        .to_array()?;
    Ok(rows.into_iter().next().and_then(|r| {
        Some(WarrantyRecord {
            warranty_until: CalendarDate::parse_iso(&r.warranty_until)?,
            serial: r.serial,
            product: r.product,
        })
    }))
}

/// The site's records of D1's `warranty_records`, copied here page by page in one
/// transaction, then deleted there; how many.
pub(super) async fn import(
    object: &SiteObject,
    db: &D1Database,
    site_id: &str,
) -> Result<usize, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        serial: String,
        product: String,
        warranty_until: String,
    }
    let mut records = Vec::new();
    let mut after = String::new();
    loop {
        let page: Vec<Row> = db
            .prepare(
                "SELECT serial, product, warranty_until FROM warranty_records \
                 WHERE site_id = ?1 AND serial > ?2 ORDER BY serial LIMIT ?3",
            )
            .bind(&[
                site_id.into(),
                after.as_str().into(),
                (IMPORT_PAGE as f64).into(),
            ])?
            .all()
            .await?
            .results()?;
        let full = page.len() == IMPORT_PAGE;
        if let Some(last) = page.last() {
            after = last.serial.clone();
        }
        records.extend(page.into_iter().filter_map(|r| {
            Some(WarrantyRecord {
                warranty_until: CalendarDate::parse_iso(&r.warranty_until)?,
                serial: r.serial,
                product: r.product,
            })
        }));
        if !full {
            break;
        }
    }
    let n = records.len();
    if n > 0 {
        let sql = object.sql();
        object.transaction(move || upsert(&sql, &records))?;
        forget_imported(
            db,
            site_id,
            "DELETE FROM warranty_records WHERE site_id = ?1",
        )
        .await;
    }
    Ok(n)
}

/// A site's warranty records, in its object: what `shop` looks serials up in.
#[derive(Debug, Clone)]
pub(crate) struct SiteWarranty {
    env: Env,
}

impl SiteWarranty {
    pub(crate) fn new(env: &Env) -> Self {
        Self { env: env.clone() }
    }

    /// Inserts or replaces `records` of `site_id`, all or nothing: refused whole (nothing
    /// written, `false`) when the site would hold more than `cap`.
    pub(crate) async fn upsert(
        &self,
        site_id: &str,
        records: Vec<WarrantyRecord>,
        cap: u64,
    ) -> Result<bool, ApiError> {
        #[derive(Deserialize)]
        struct Answer {
            over: bool,
        }
        let answer: Answer = call(
            &self.env,
            site_id,
            &SiteCall::UpsertWarranty { records, cap },
        )
        .await?;
        Ok(!answer.over)
    }

    /// How many records `site_id` holds.
    pub(crate) async fn count(&self, site_id: &str) -> Result<u64, ApiError> {
        #[derive(Deserialize)]
        struct Answer {
            n: u64,
        }
        let answer: Answer = call(&self.env, site_id, &SiteCall::CountWarranty).await?;
        Ok(answer.n)
    }
}

impl WarrantyRecords for SiteWarranty {
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError> {
        let find = SiteCall::FindWarranty {
            serial: serial.to_string(),
        };
        call(&self.env, site_id, &find)
            .await
            .map_err(|e| ServiceError::new(ServiceErrorKind::Unavailable, e.to_string()))
    }
}
