//! Changing a site: each change writes only its own columns, atomically, and only if the
//! row is still as it was read (compare-and-swap), so concurrent changes never undo each
//! other and a change authorised by a key rotated meanwhile writes nothing.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use super::{SITE_COLUMNS, SiteRow};
use crate::error::ApiError;
use crate::site::{Site, Snapshot};

/// A site read for a change, with its stored columns exactly as they were.
#[derive(Debug)]
pub(crate) struct Current {
    pub site: Site,
    name: String,
    template: String,
    config: String,
    draft: Option<String>,
    live_version: f64,
}

/// The site with id `id`, read from D1 (never from a cache) for a change.
pub(crate) async fn read_for_update(
    db: &D1Database,
    id: &str,
) -> Result<Option<Current>, ApiError> {
    let row = db
        .prepare(format!("SELECT {SITE_COLUMNS} FROM sites WHERE id = ?1"))
        .bind(&[id.into()])?
        .first::<SiteRow>(None)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let (name, template, config) = (row.name.clone(), row.template.clone(), row.config.clone());
    let (draft, live_version) = (row.draft.clone(), row.live_version.unwrap_or(1.0));
    Ok(Some(Current {
        site: row.into_site()?,
        name,
        template,
        config,
        draft,
        live_version,
    }))
}

/// Why a configuration went live (`site_config_versions.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VersionSource {
    /// The site was created with it.
    Created,
    /// A change made live directly (`PATCH /admin/site`).
    Edited,
    /// The draft published.
    Published,
    /// An earlier version made live again.
    Restored,
}

impl VersionSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Edited => "edited",
            Self::Published => "published",
            Self::Restored => "restored",
        }
    }
}

/// The new live configuration's record in the site's versions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Versions<'a> {
    pub source: VersionSource,
    /// The merchant's note.
    pub note: Option<&'a str>,
    /// The version restored.
    pub restored_from: Option<u64>,
    /// The publish gate's record when a publish was confirmed over regressions (JSON).
    pub regressions: Option<&'a str>,
}

impl Versions<'_> {
    /// A version recorded for `source`, without a note.
    pub(crate) fn of(source: VersionSource) -> Self {
        Self {
            source,
            note: None,
            restored_from: None,
            regressions: None,
        }
    }
}

/// What a change writes: the site as it is to be (name, template, live configuration,
/// origins), its pending draft afterwards, and, when the live configuration changes, its
/// record as a new version.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Change<'a> {
    pub site: &'a Site,
    pub draft: Option<&'a Snapshot>,
    pub version: Option<Versions<'a>>,
}

/// How many versions a site keeps.
const KEPT_VERSIONS: u64 = 100;

/// Write `change` if the row is still as `current` was read (same secret key, name,
/// template, configuration, draft and version), in one D1 batch: the row, its origins and
/// the new version. The live version after the change; `None` when the row changed
/// meanwhile: then nothing was written.
pub(crate) async fn save_config(
    db: &D1Database,
    current: &Current,
    change: Change<'_>,
    now_ms: u64,
) -> Result<Option<u64>, ApiError> {
    let site = change.site;
    let config =
        serde_json::to_string(&site.config).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let draft = change
        .draft
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let old_version = current.live_version as u64;
    let new_version = old_version + u64::from(change.version.is_some());
    let id = JsValue::from(site.id.as_str());
    let text = |value: &Option<String>| value.as_deref().map_or(JsValue::NULL, JsValue::from);
    let update = db
        .prepare(
            "UPDATE sites SET name = ?2, template = ?3, config = ?4, draft = ?5, \
             live_version = ?6, updated_at = ?7 \
             WHERE id = ?1 AND secret_key_hash = ?8 AND name = ?9 AND template = ?10 \
             AND config = ?11 AND draft IS ?12 AND live_version = ?13 \
             RETURNING id",
        )
        .bind(&[
            id.clone(),
            site.name.as_str().into(),
            site.template.as_str().into(),
            config.as_str().into(),
            text(&draft),
            JsValue::from_f64(new_version as f64),
            JsValue::from_f64(now_ms as f64),
            current.site.secret_key_hash.as_str().into(),
            current.name.as_str().into(),
            current.template.as_str().into(),
            current.config.as_str().into(),
            text(&current.draft),
            JsValue::from_f64(current.live_version),
        ])?;
    // The origins follow the configuration the row holds after the update: rewritten when
    // it is this one (the update applied), left alone otherwise.
    let holds = "EXISTS (SELECT 1 FROM sites WHERE id = ?1 AND config = ?2)";
    let mut statements = vec![
        update,
        db.prepare(format!(
            "DELETE FROM site_origins WHERE site_id = ?1 AND {holds}"
        ))
        .bind(&[id.clone(), config.as_str().into()])?,
    ];
    for origin in &site.config.allowed_origins {
        statements.push(
            db.prepare(format!(
                "INSERT OR IGNORE INTO site_origins (origin, site_id) SELECT ?3, ?1 WHERE {holds}"
            ))
            .bind(&[id.clone(), config.as_str().into(), origin.as_str().into()])?,
        );
    }
    if let Some(versions) = change.version {
        statements.push(version_insert(db, site, new_version, versions, now_ms)?);
        // The oldest beyond the kept number go (only when this change applied).
        statements.push(
            db.prepare(
                "DELETE FROM site_config_versions WHERE site_id = ?1 AND version <= ?2 \
                 AND EXISTS (SELECT 1 FROM sites WHERE id = ?1 AND live_version = ?3)",
            )
            .bind(&[
                id.clone(),
                JsValue::from_f64(new_version.saturating_sub(KEPT_VERSIONS) as f64),
                JsValue::from_f64(new_version as f64),
            ])?,
        );
    }
    let results = db.batch(statements).await?;
    let updated = match results.first() {
        Some(result) => !result.results::<serde_json::Value>()?.is_empty(),
        None => false,
    };
    Ok(updated.then_some(new_version))
}

/// The statement recording `site`'s live configuration as version `version`, written
/// only while the row holds that version and configuration (in a batch after the write
/// that made them so).
pub(super) fn version_insert(
    db: &D1Database,
    site: &Site,
    version: u64,
    versions: Versions<'_>,
    now_ms: u64,
) -> Result<worker::D1PreparedStatement, ApiError> {
    let config =
        serde_json::to_string(&site.config).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let snapshot =
        serde_json::to_string(&Snapshot::of(site)).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    Ok(db
        .prepare(
            "INSERT OR IGNORE INTO site_config_versions \
             (site_id, version, snapshot, published_at, source, note, restored_from, regressions) \
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9 \
             WHERE EXISTS (SELECT 1 FROM sites WHERE id = ?1 AND live_version = ?2 AND config = ?8)",
        )
        .bind(&[
            site.id.as_str().into(),
            JsValue::from_f64(version as f64),
            snapshot.into(),
            JsValue::from_f64(now_ms as f64),
            versions.source.as_str().into(),
            versions.note.map_or(JsValue::NULL, JsValue::from),
            versions
                .restored_from
                .map_or(JsValue::NULL, |n| JsValue::from_f64(n as f64)),
            config.into(),
            versions.regressions.map_or(JsValue::NULL, JsValue::from),
        ])?)
}

/// Replace site `id`'s key digests (and the public key its configuration shows) if its
/// secret key digest is still `old_secret_hash`.
/// The old public key digest when it was; `None` when the key was already rotated (or
/// the site is gone): then nothing was written.
pub(crate) async fn replace_keys(
    db: &D1Database,
    id: &str,
    old_secret_hash: &str,
    new_public_key: &str,
    new_secret_hash: &str,
    now_ms: u64,
) -> Result<Option<String>, ApiError> {
    let new_public_hash = crate::runtime::sha256_hex(new_public_key);
    #[derive(Deserialize)]
    struct Old {
        public_key_hash: String,
    }
    let guard = [JsValue::from(id), JsValue::from(old_secret_hash)];
    let read = db
        .prepare("SELECT public_key_hash FROM sites WHERE id = ?1 AND secret_key_hash = ?2")
        .bind(&guard)?;
    let swap = db
        .prepare(
            "UPDATE sites SET public_key_hash = ?3, secret_key_hash = ?4, updated_at = ?5, \
             config = json_set(config, '$.public_key', ?6) \
             WHERE id = ?1 AND secret_key_hash = ?2",
        )
        .bind(&[
            guard[0].clone(),
            guard[1].clone(),
            new_public_hash.as_str().into(),
            new_secret_hash.into(),
            JsValue::from_f64(now_ms as f64),
            new_public_key.into(),
        ])?;
    // One transaction: the digest read is the one the update replaced.
    let results = db.batch(vec![read, swap]).await?;
    let old = match results.first() {
        Some(result) => result.results::<Old>()?.into_iter().next(),
        None => None,
    };
    Ok(old.map(|o| o.public_key_hash))
}
