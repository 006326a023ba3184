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

/// What a site holds, against its caps (its knowledge documents in the shared database; the
/// rest in its object, which the caller asks).
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
    bytes: Option<f64>,
}

impl Counted {
    fn n(&self) -> u64 {
        self.n.unwrap_or(0.0) as u64
    }
    fn bytes(&self) -> u64 {
        self.bytes.unwrap_or(0.0) as u64
    }
}

/// The site's usage in D1: one aggregate read over the site's index range. What the site's
/// object holds (data sets, `crate::site_object::data`; warranty records,
/// `crate::site_object::warranty`) is 0 here: the caller asks it.
pub(crate) async fn usage(db: &D1Database, site_id: &str) -> Result<Usage, ServiceError> {
    let documents: Counted = db
        .prepare(
            "SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes \
             FROM knowledge_documents WHERE site_id = ?1",
        )
        .bind(&[JsValue::from(site_id)])
        .map_err(service_error)?
        .first(None)
        .await
        .map_err(service_error)?
        .unwrap_or_default();
    Ok(Usage {
        documents: documents.n(),
        document_bytes: documents.bytes(),
        ..Usage::default()
    })
}
