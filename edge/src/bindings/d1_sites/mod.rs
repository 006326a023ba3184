//! Sites in D1 (`sites`, `site_origins`): inserted here, looked up by key or id through
//! bounded-trust caches ([`cache`]), changed by compare-and-swap writes ([`write`]).

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, Env};

use crate::error::ApiError;
use crate::site::{Site, Snapshot};
use concierge_core::template::Template;

mod cache;
pub(crate) mod versions;
mod write;

use cache::memo;
pub(crate) use cache::{find_by_id, find_by_key_hash, uncache};
pub(crate) use write::{
    Change, VersionSource, Versions, read_for_update, replace_keys, save_config,
};

/// A `sites` row as D1 returns it.
#[derive(Debug, Deserialize)]
pub(crate) struct SiteRow {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) template: String,
    pub(super) config: String,
    pub(super) public_key_hash: String,
    pub(super) secret_key_hash: String,
    #[serde(default)]
    pub(super) created_at: f64,
    /// The catalog vocabulary (a JSON array; `bindings::catalog`).
    #[serde(default)]
    pub(super) catalog: Option<String>,
    /// The pending draft (`site::Snapshot` as JSON), if any.
    #[serde(default)]
    pub(super) draft: Option<String>,
    /// The live configuration's version.
    #[serde(default)]
    pub(super) live_version: Option<f64>,
}

/// The columns a [`SiteRow`] is read from.
pub(super) const SITE_COLUMNS: &str = "id, name, template, config, public_key_hash, \
    secret_key_hash, created_at, catalog, draft, live_version";

impl SiteRow {
    pub(super) fn into_site(self) -> Result<Site, ApiError> {
        let config = serde_json::from_str(&self.config)
            .map_err(|e| ApiError::Corrupt(format!("site config: {e}")))?;
        // The schema admits only template names (migration 0008).
        let template = Template::parse(&self.template)
            .ok_or_else(|| ApiError::Corrupt(format!("site template: {}", self.template)))?;
        let draft = self
            .draft
            .as_deref()
            .map(serde_json::from_str::<Snapshot>)
            .transpose()
            .map_err(|e| ApiError::Corrupt(format!("site draft: {e}")))?
            .map(Box::new);
        Ok(Site {
            draft,
            version: self.live_version.unwrap_or(0.0) as u64,
            drafted: false,
            id: self.id,
            name: self.name,
            template,
            config,
            public_key_hash: self.public_key_hash,
            secret_key_hash: self.secret_key_hash,
            created_at: self.created_at as u64,
            catalog: self
                .catalog
                .as_deref()
                .map(concierge_core::retrieval::catalog::decode)
                .unwrap_or_default(),
        })
    }
}

/// Insert a new site and its allowed origins.
pub(crate) async fn insert(db: &D1Database, site: &Site, now_ms: u64) -> Result<(), ApiError> {
    let insert = db
        .prepare(
            "INSERT INTO sites (id, name, template, config, public_key_hash, secret_key_hash, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        )
        .bind(&row_params(site, now_ms)?)?;
    let mut statements = vec![insert];
    statements.extend(origin_statements(db, site)?);
    statements.push(write::version_insert(
        db,
        site,
        1,
        Versions::of(VersionSource::Created),
        now_ms,
    )?);
    db.batch(statements).await?;
    memo::forget_origins();
    Ok(())
}

/// `?1`…`?7` of the site row statements: id, name, template, config, key digests, time.
fn row_params(site: &Site, now_ms: u64) -> Result<[JsValue; 7], ApiError> {
    let config =
        serde_json::to_string(&site.config).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    Ok([
        site.id.as_str().into(),
        site.name.as_str().into(),
        site.template.as_str().into(),
        config.into(),
        site.public_key_hash.as_str().into(),
        site.secret_key_hash.as_str().into(),
        JsValue::from_f64(now_ms as f64),
    ])
}

fn origin_statements(
    db: &D1Database,
    site: &Site,
) -> Result<Vec<worker::D1PreparedStatement>, ApiError> {
    site.config
        .allowed_origins
        .iter()
        .map(|origin| {
            Ok(db
                .prepare("INSERT OR IGNORE INTO site_origins (origin, site_id) VALUES (?1, ?2)")
                .bind(&[origin.as_str().into(), site.id.as_str().into()])?)
        })
        .collect()
}

/// Whether any site allows `origin` (for CORS preflights, which carry no key).
pub(crate) async fn origin_known(env: &Env, origin: &str) -> Result<bool, ApiError> {
    if let Some(known) = memo::origin(origin) {
        return Ok(known);
    }
    let row = env
        .d1("DB")?
        .prepare("SELECT 1 AS known FROM site_origins WHERE origin = ?1 LIMIT 1")
        .bind(&[origin.into()])?
        .first::<serde_json::Value>(None)
        .await?;
    memo::put_origin(origin, row.is_some());
    Ok(row.is_some())
}
