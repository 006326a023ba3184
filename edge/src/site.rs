//! Sites (merchants): their configuration, keys, and the D1/KV storage behind them.
//!
//! A site row holds SHA-256 digests of its public and secret keys, never the keys. The
//! configuration (persona, LLM settings, allowed origins, starter prompts) is JSON; it is
//! cached in KV under the key digest for [`CACHE_TTL_SECS`] and the cache entries are
//! deleted whenever the site changes.

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{D1Database, Env, kv::KvStore};

use crate::ApiError;

/// How long a site looked up by key stays cached in KV (KV's minimum TTL).
const CACHE_TTL_SECS: u64 = 60;

/// Answers are capped at this many tokens unless the site says otherwise: a chat widget
/// wants short answers, and a runaway model must not stream forever.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 1024;

/// Which templates exist.
pub(crate) const TEMPLATES: [&str; 5] = ["shop", "analyst", "rental", "knowledge", "support"];

/// LLM settings of a site; unset fields fall back to the Worker's vars.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct LlmSettings {
    /// `openai` (any OpenAI-compatible API) or `ollama`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Chat model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The site's own upstream key. Write-only: never returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Embeddings endpoint, when it differs from `base_url` (same protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_base_url: Option<String>,
    /// Embedding model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_model: Option<String>,
    /// Cap on answer length in tokens (default [`DEFAULT_MAX_TOKENS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// How long to wait for the first token before giving up (default: the Worker's
    /// `LLM_FIRST_TOKEN_TIMEOUT_MS`, 20 s); slow self-hosted models may need more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_timeout_ms: Option<u32>,
    /// Embedding dimensions (default 1024, bge-m3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_dimensions: Option<u32>,
}

/// A site's configuration, as merchants set it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct SiteConfig {
    /// Persona text (markdown; its `Greeting:` line is the greeting). Default: the template's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// Default language for greetings: `vi` or `en`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Upstream LLM settings.
    #[serde(default)]
    pub llm: LlmSettings,
    /// Origins (scheme://host[:port]) whose pages may use the public key.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Suggested first questions shown by the widget.
    #[serde(default)]
    pub starter_prompts: Vec<String>,
    /// Title shown in the widget header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A site as loaded for a request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Site {
    pub id: String,
    pub name: String,
    pub template: String,
    pub config: SiteConfig,
    pub public_key_hash: String,
    pub secret_key_hash: String,
}

impl Site {
    /// The site as the admin API shows it: no key digests, no upstream key.
    pub(crate) fn public_view(&self) -> serde_json::Value {
        let mut config = self.config.clone();
        let has_key = config.llm.api_key.take().is_some();
        serde_json::json!({
            "id": self.id,
            "name": self.name,
            "template": self.template,
            "config": config,
            "llm_api_key_set": has_key,
        })
    }
}

#[derive(Debug, Deserialize)]
struct SiteRow {
    id: String,
    name: String,
    template: String,
    config: String,
    public_key_hash: String,
    secret_key_hash: String,
}

impl SiteRow {
    fn into_site(self) -> Result<Site, ApiError> {
        let config = serde_json::from_str(&self.config)
            .map_err(|e| ApiError::Corrupt(format!("site config: {e}")))?;
        Ok(Site {
            id: self.id,
            name: self.name,
            template: self.template,
            config,
            public_key_hash: self.public_key_hash,
            secret_key_hash: self.secret_key_hash,
        })
    }
}

/// Which of a site's keys a digest is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Public,
    Secret,
}

/// Find the site whose public or secret key has digest `hash` (KV cache, then D1).
pub(crate) async fn find_by_key_hash(
    env: &Env,
    kind: KeyKind,
    hash: &str,
) -> Result<Option<Site>, ApiError> {
    let cache_key = format!("site-by-key:{hash}");
    if let Some(site) = memo::get(&cache_key) {
        return Ok(Some(site));
    }
    let cache = env.kv("CONFIG")?;
    if let Ok(Some(site)) = cache.get(&cache_key).json::<Site>().await {
        memo::put(&cache_key, &site);
        return Ok(Some(site));
    }
    let column = match kind {
        KeyKind::Public => "public_key_hash",
        KeyKind::Secret => "secret_key_hash",
    };
    let sql = format!(
        "SELECT id, name, template, config, public_key_hash, secret_key_hash FROM sites WHERE {column} = ?1"
    );
    let row = env
        .d1("DB")?
        .prepare(sql)
        .bind(&[hash.into()])?
        .first::<SiteRow>(None)
        .await?;
    let Some(site) = row.map(SiteRow::into_site).transpose()? else {
        return Ok(None);
    };
    if let Ok(put) = cache.put(&cache_key, &site) {
        let _ = put.expiration_ttl(CACHE_TTL_SECS).execute().await;
    }
    memo::put(&cache_key, &site);
    Ok(Some(site))
}

/// Forget the cached copies of `site` (after an update or key rotation): in KV, and in
/// this isolate (other isolates keep theirs for at most [`memo::TTL_MS`]).
pub(crate) async fn uncache(cache: &KvStore, site: &Site) {
    for hash in [&site.public_key_hash, &site.secret_key_hash] {
        let key = format!("site-by-key:{hash}");
        memo::forget(&key);
        let _ = cache.delete(&key).await;
    }
    memo::forget_origins();
}

/// Sites looked up by key digest, kept in this isolate's memory for a few seconds, so a
/// conversation's turns do not each read KV.
mod memo {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use super::Site;

    /// How long an isolate trusts its copy.
    pub(crate) const TTL_MS: u64 = 10_000;
    /// Entries kept at most; past it the map is cleared (a cache, not a store).
    const MAX_ENTRIES: usize = 1_000;

    thread_local! {
        static SITES: RefCell<HashMap<String, (u64, Site)>> = RefCell::new(HashMap::new());
        static ORIGINS: RefCell<HashMap<String, (u64, bool)>> = RefCell::new(HashMap::new());
    }

    fn fresh<T: Clone>(map: &RefCell<HashMap<String, (u64, T)>>, key: &str) -> Option<T> {
        let now = crate::now_ms();
        let map = map.borrow();
        let (at, value) = map.get(key)?;
        (now.saturating_sub(*at) < TTL_MS).then(|| value.clone())
    }

    fn insert<T>(map: &RefCell<HashMap<String, (u64, T)>>, key: &str, value: T) {
        let mut map = map.borrow_mut();
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(key.to_string(), (crate::now_ms(), value));
    }

    pub(crate) fn get(key: &str) -> Option<Site> {
        SITES.with(|m| fresh(m, key))
    }

    pub(crate) fn put(key: &str, site: &Site) {
        SITES.with(|m| insert(m, key, site.clone()));
    }

    pub(crate) fn forget(key: &str) {
        SITES.with(|m| m.borrow_mut().remove(key));
    }

    pub(crate) fn origin(origin: &str) -> Option<bool> {
        ORIGINS.with(|m| fresh(m, origin))
    }

    pub(crate) fn put_origin(origin: &str, known: bool) {
        ORIGINS.with(|m| insert(m, origin, known));
    }

    pub(crate) fn forget_origins() {
        ORIGINS.with(|m| m.borrow_mut().clear());
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
    db.batch(statements).await?;
    memo::forget_origins();
    Ok(())
}

/// Save `site`'s name, template, config and key digests, and its origins, atomically.
pub(crate) async fn update(db: &D1Database, site: &Site, now_ms: u64) -> Result<(), ApiError> {
    let update = db
        .prepare(
            "UPDATE sites SET name = ?2, template = ?3, config = ?4, public_key_hash = ?5, \
             secret_key_hash = ?6, updated_at = ?7 WHERE id = ?1",
        )
        .bind(&row_params(site, now_ms)?)?;
    let clear = db
        .prepare("DELETE FROM site_origins WHERE site_id = ?1")
        .bind(&[site.id.as_str().into()])?;
    let mut statements = vec![update, clear];
    statements.extend(origin_statements(db, site)?);
    db.batch(statements).await?;
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

/// Check and normalise an origin: `scheme://host[:port]`, no path.
pub(crate) fn normalize_origin(origin: &str) -> Option<String> {
    let url = worker::Url::parse(origin).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    let serialized = url.origin().ascii_serialization();
    (serialized != "null").then_some(serialized)
}

/// The site with id `id` (for background work that carries a site id, not a key).
pub(crate) async fn find_by_id(env: &Env, id: &str) -> Result<Option<Site>, ApiError> {
    let row = env
        .d1("DB")?
        .prepare("SELECT id, name, template, config, public_key_hash, secret_key_hash FROM sites WHERE id = ?1")
        .bind(&[id.into()])?
        .first::<SiteRow>(None)
        .await?;
    row.map(SiteRow::into_site).transpose()
}
