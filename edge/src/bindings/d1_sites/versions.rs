//! A site's published versions (`site_config_versions`): every configuration that went
//! live, newest first (written by [`super::save_config`]).

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::error::ApiError;
use crate::site::Snapshot;

/// A version as D1 returns it.
#[derive(Debug, Deserialize)]
struct VersionRow {
    version: f64,
    snapshot: String,
    published_at: f64,
    source: String,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    restored_from: Option<f64>,
    #[serde(default)]
    regressions: Option<String>,
}

/// One version of a site's live configuration.
#[derive(Debug, Clone)]
pub(crate) struct Version {
    pub number: u64,
    /// When it went live, Unix milliseconds.
    pub published_at: u64,
    /// `created`, `edited`, `published`, `restored` or `migrated`.
    pub source: String,
    pub note: Option<String>,
    pub restored_from: Option<u64>,
    /// The regressions a publish was confirmed over (the publish gate's record).
    pub regressions: Option<serde_json::Value>,
    pub snapshot: Snapshot,
}

impl VersionRow {
    fn into_version(self) -> Result<Version, ApiError> {
        let snapshot = serde_json::from_str(&self.snapshot)
            .map_err(|e| ApiError::Corrupt(format!("site version: {e}")))?;
        Ok(Version {
            number: self.version as u64,
            published_at: self.published_at as u64,
            source: self.source,
            note: self.note,
            restored_from: self.restored_from.map(|n| n as u64),
            regressions: self
                .regressions
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
            snapshot,
        })
    }
}

const COLUMNS: &str = "version, snapshot, published_at, source, note, restored_from, regressions";

/// Site `site_id`'s versions, newest first.
pub(crate) async fn list(db: &D1Database, site_id: &str) -> Result<Vec<Version>, ApiError> {
    let rows = db
        .prepare(format!(
            "SELECT {COLUMNS} FROM site_config_versions WHERE site_id = ?1 \
             ORDER BY version DESC LIMIT 100"
        ))
        .bind(&[site_id.into()])?
        .all()
        .await?
        .results::<VersionRow>()?;
    rows.into_iter().map(VersionRow::into_version).collect()
}

/// Site `site_id`'s version `number`, if it is kept.
pub(crate) async fn get(
    db: &D1Database,
    site_id: &str,
    number: u64,
) -> Result<Option<Version>, ApiError> {
    let row = db
        .prepare(format!(
            "SELECT {COLUMNS} FROM site_config_versions WHERE site_id = ?1 AND version = ?2"
        ))
        .bind(&[site_id.into(), JsValue::from_f64(number as f64)])?
        .first::<VersionRow>(None)
        .await?;
    row.map(VersionRow::into_version).transpose()
}
