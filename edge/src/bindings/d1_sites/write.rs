//! Changing a site: each change writes only its own columns, atomically, and only if the
//! row is still as it was read (compare-and-swap), so concurrent changes never undo each
//! other and a change authorised by a key rotated meanwhile writes nothing.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use super::SiteRow;
use crate::error::ApiError;
use crate::site::Site;

/// A site read for a change, with its stored columns exactly as they were.
#[derive(Debug)]
pub(crate) struct Current {
    pub site: Site,
    name: String,
    template: String,
    config: String,
}

/// The site with id `id`, read from D1 (never from a cache) for a change.
pub(crate) async fn read_for_update(
    db: &D1Database,
    id: &str,
) -> Result<Option<Current>, ApiError> {
    let row = db
        .prepare("SELECT id, name, template, config, public_key_hash, secret_key_hash, created_at, catalog FROM sites WHERE id = ?1")
        .bind(&[id.into()])?
        .first::<SiteRow>(None)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let (name, template, config) = (row.name.clone(), row.template.clone(), row.config.clone());
    Ok(Some(Current {
        site: row.into_site()?,
        name,
        template,
        config,
    }))
}

/// Save `site`'s name, template and configuration, and its origins, if the row is still as
/// `current` was read (same secret key too). `false` when it changed meanwhile: then
/// nothing was written.
pub(crate) async fn save_config(
    db: &D1Database,
    current: &Current,
    site: &Site,
    now_ms: u64,
) -> Result<bool, ApiError> {
    let config =
        serde_json::to_string(&site.config).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let id = JsValue::from(site.id.as_str());
    let update = db
        .prepare(
            "UPDATE sites SET name = ?2, template = ?3, config = ?4, updated_at = ?5 \
             WHERE id = ?1 AND secret_key_hash = ?6 AND name = ?7 AND template = ?8 AND config = ?9 \
             RETURNING id",
        )
        .bind(&[
            id.clone(),
            site.name.as_str().into(),
            site.template.as_str().into(),
            config.as_str().into(),
            JsValue::from_f64(now_ms as f64),
            current.site.secret_key_hash.as_str().into(),
            current.name.as_str().into(),
            current.template.as_str().into(),
            current.config.as_str().into(),
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
    let results = db.batch(statements).await?;
    let updated = match results.first() {
        Some(result) => !result.results::<serde_json::Value>()?.is_empty(),
        None => false,
    };
    Ok(updated)
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
