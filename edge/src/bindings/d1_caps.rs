//! The per-site caps ([`Caps`]) in D1: guard statements that end a write's batch and fail it
//! (D1 rolls the whole batch back) when the rows it left pass a cap, and the site's usage.
//!
//! A guard counts what the batch left, inside the batch's own transaction, so two
//! concurrent writes cannot pass a cap together. SQLite's `raise()` works only in triggers;
//! `json('over')` fails the same way wherever it is evaluated, with an error that names it.

use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

use super::d1_store::service_error;
use crate::site::caps::Caps;

/// What D1 answers when a guard fires.
const OVER: &str = "malformed JSON";

/// Why a capped write did not happen.
#[derive(Debug)]
pub(crate) enum CapError {
    /// The site would pass a cap; nothing was written.
    Over,
    /// D1 failed.
    Store(ServiceError),
}

impl CapError {
    /// A failed batch that ended with a guard: over a cap, or a store failure.
    pub(crate) fn from_batch(error: worker::Error) -> Self {
        if is_over(&error) {
            Self::Over
        } else {
            Self::Store(service_error(error))
        }
    }
}

impl From<ServiceError> for CapError {
    fn from(error: ServiceError) -> Self {
        Self::Store(error)
    }
}

/// Whether a failed batch failed at its guard.
pub(crate) fn is_over(error: &worker::Error) -> bool {
    error.to_string().contains(OVER)
}

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// A statement that fails when `over` (an SQL boolean over `params`) is true.
pub(crate) fn guard(
    db: &D1Database,
    over: &str,
    params: &[JsValue],
) -> Result<D1PreparedStatement, ServiceError> {
    db.prepare(format!(
        "SELECT json(CASE WHEN {over} THEN 'over' ELSE '0' END) AS guard"
    ))
    .bind(params)
    .map_err(service_error)
}

/// The data sets' guard: their count, rows and bytes.
pub(crate) fn data_guard(
    db: &D1Database,
    site_id: &str,
    caps: &Caps,
) -> Result<D1PreparedStatement, ServiceError> {
    guard(
        db,
        "(SELECT count(*) > ?2 OR coalesce(sum(row_count), 0) > ?3 OR coalesce(sum(bytes), 0) > ?4 \
         FROM data_connections WHERE site_id = ?1)",
        &[
            site_id.into(),
            num(caps.data_sets),
            num(caps.data_rows),
            num(caps.data_bytes),
        ],
    )
}

/// The knowledge documents' guard: their count and bytes of text.
pub(crate) fn documents_guard(
    db: &D1Database,
    site_id: &str,
    caps: &Caps,
) -> Result<D1PreparedStatement, ServiceError> {
    guard(
        db,
        "(SELECT count(*) > ?2 OR coalesce(sum(bytes), 0) > ?3 \
         FROM knowledge_documents WHERE site_id = ?1)",
        &[
            site_id.into(),
            num(caps.documents),
            num(caps.document_bytes),
        ],
    )
}

/// What a site holds in the shared database, against its caps.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) data_sets: u64,
    pub(crate) data_rows: u64,
    pub(crate) data_bytes: u64,
    pub(crate) documents: u64,
    pub(crate) document_bytes: u64,
    pub(crate) warranty_records: u64,
}

#[derive(Debug, Default, Deserialize)]
struct Counted {
    n: Option<f64>,
    rows: Option<f64>,
    bytes: Option<f64>,
}

impl Counted {
    fn n(&self) -> u64 {
        self.n.unwrap_or(0.0) as u64
    }
    fn rows(&self) -> u64 {
        self.rows.unwrap_or(0.0) as u64
    }
    fn bytes(&self) -> u64 {
        self.bytes.unwrap_or(0.0) as u64
    }
}

/// The site's usage in D1, in one batch (two aggregate reads over the site's index ranges).
pub(crate) async fn usage(db: &D1Database, site_id: &str) -> Result<Usage, ServiceError> {
    let site = [JsValue::from(site_id)];
    let read = |sql: &str| db.prepare(sql).bind(&site).map_err(service_error);
    let results = db
        .batch(vec![
            read(
                "SELECT count(*) AS n, coalesce(sum(row_count), 0) AS rows, \
                 coalesce(sum(bytes), 0) AS bytes FROM data_connections WHERE site_id = ?1",
            )?,
            read(
                "SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes \
                 FROM knowledge_documents WHERE site_id = ?1",
            )?,
        ])
        .await
        .map_err(service_error)?;
    let mut counted = results.into_iter().map(|r| {
        r.results::<Counted>()
            .ok()
            .and_then(|rows| rows.into_iter().next())
            .unwrap_or_default()
    });
    let (data, documents) = (
        counted.next().unwrap_or_default(),
        counted.next().unwrap_or_default(),
    );
    Ok(Usage {
        data_sets: data.n(),
        data_rows: data.rows(),
        data_bytes: data.bytes(),
        documents: documents.n(),
        document_bytes: documents.bytes(),
        // In the site's object (`crate::site_object::warranty`): the caller asks it.
        warranty_records: 0,
    })
}
