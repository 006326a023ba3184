//! Sites looked up by key or by id (background work), cached in KV and in this isolate's
//! memory: a turn, wherever it runs, reads no D1 while its site's copy is trusted.
//!
//! Each copy is stamped with when it was read from D1, and trusted for [`CACHE_TRUST_MS`]
//! after that read, wherever it is — and, in this isolate, never once the isolate has
//! changed the site after that read. So a change (a PATCH, a key rotation) applies at once
//! on the Worker that made it, and everywhere else within [`CACHE_TRUST_MS`]: a rotated key
//! stops working within 30 s worldwide, whatever KV's propagation delay (KV entries live
//! [`CACHE_TTL_SECS`], KV's minimum, but are not trusted that long).

use serde::{Deserialize, Serialize};
use worker::{Env, kv::KvStore};

use super::{SITE_COLUMNS, SiteRow};
use crate::error::ApiError;
use crate::site::{KeyKind, Site};

/// How long a KV entry lives (KV's minimum TTL); it is trusted for less.
const CACHE_TTL_SECS: u64 = 60;

/// How long any cached copy of a site is trusted after it was read from D1: the bound on
/// how long a rotated key keeps working, and a change takes to apply, anywhere.
const CACHE_TRUST_MS: u64 = 30_000;

/// A cached copy of a site, with when it was read from D1.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Cached {
    read_at: u64,
    site: Site,
}

/// Find the site whose public or secret key has digest `hash` (memory, KV, then D1).
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
    if let Ok(Some(cached)) = cache.get(&cache_key).json::<Cached>().await
        && memo::trusted(&cached)
    {
        memo::put(&cache_key, &cached);
        memo::put(&by_id(&cached.site.id), &cached);
        return Ok(Some(cached.site));
    }
    let column = match kind {
        KeyKind::Public => "public_key_hash",
        KeyKind::Secret => "secret_key_hash",
    };
    let sql = format!("SELECT {SITE_COLUMNS} FROM sites WHERE {column} = ?1");
    // Stamped before the read: a copy is never trusted past its data's age.
    let read_at = crate::runtime::now_ms();
    let row = env
        .d1("DB")?
        .prepare(sql)
        .bind(&[hash.into()])?
        .first::<SiteRow>(None)
        .await?;
    let Some(site) = row.map(SiteRow::into_site).transpose()? else {
        return Ok(None);
    };
    let cached = Cached { read_at, site };
    // Changed by this isolate while the read was in flight: use it, do not cache it.
    // Written as JSON text made here: `KvStore::put` of a value converts it to a JS value
    // first, which turns the site's config (a map, for its flattened template settings)
    // into a JS `Map` that JSON stores as `{}` — a fresh isolate then read a site with no
    // LLM endpoint, origins or handoff for 30 s.
    if memo::trusted(&cached) {
        if let Ok(text) = serde_json::to_string(&cached)
            && let Ok(put) = cache.put(&cache_key, text)
        {
            let _ = put.expiration_ttl(CACHE_TTL_SECS).execute().await;
        }
        memo::put(&cache_key, &cached);
        memo::put(&by_id(&cached.site.id), &cached);
    }
    Ok(Some(cached.site))
}

/// The cache key of the site with id `id`.
fn by_id(id: &str) -> String {
    format!("site-by-id:{id}")
}

/// The site with id `id`, for background work that carries a site id, not a key (memory,
/// KV, then D1): trusted like a copy found by key, so a queue consumer's turn reads no D1.
pub(crate) async fn find_by_id(env: &Env, id: &str) -> Result<Option<Site>, ApiError> {
    let cache_key = by_id(id);
    if let Some(site) = memo::get(&cache_key) {
        return Ok(Some(site));
    }
    let cache = env.kv("CONFIG")?;
    if let Ok(Some(cached)) = cache.get(&cache_key).json::<Cached>().await
        && memo::trusted(&cached)
    {
        memo::put(&cache_key, &cached);
        return Ok(Some(cached.site));
    }
    let read_at = crate::runtime::now_ms();
    let row = env
        .d1("DB")?
        .prepare(format!("SELECT {SITE_COLUMNS} FROM sites WHERE id = ?1"))
        .bind(&[id.into()])?
        .first::<SiteRow>(None)
        .await?;
    let Some(site) = row.map(SiteRow::into_site).transpose()? else {
        return Ok(None);
    };
    let cached = Cached { read_at, site };
    if memo::trusted(&cached) {
        if let Ok(text) = serde_json::to_string(&cached)
            && let Ok(put) = cache.put(&cache_key, text)
        {
            let _ = put.expiration_ttl(CACHE_TTL_SECS).execute().await;
        }
        memo::put(&cache_key, &cached);
    }
    Ok(Some(cached.site))
}

/// Forget the cached copies of site `site_id` under the key digests `hashes` (after an
/// update or key rotation): in KV, and in this isolate, where every copy of the site read
/// before now stops being trusted. Other isolates and locations drop theirs within
/// [`CACHE_TRUST_MS`].
pub(crate) async fn uncache(cache: &KvStore, site_id: &str, hashes: &[&str]) {
    memo::invalidate(site_id);
    memo::forget(&by_id(site_id));
    let _ = cache.delete(&by_id(site_id)).await;
    for hash in hashes {
        let key = format!("site-by-key:{hash}");
        memo::forget(&key);
        let _ = cache.delete(&key).await;
    }
    memo::forget_origins();
}

/// Sites looked up by key digest, kept in this isolate's memory, so a conversation's turns
/// do not each read KV; and which sites this isolate changed, and when.
pub(super) mod memo {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use super::{CACHE_TRUST_MS, Cached, Site};

    /// How long an isolate trusts its copy of an origin lookup.
    const ORIGIN_TTL_MS: u64 = 10_000;
    /// Entries kept at most; past it the map is cleared (a cache, not a store).
    const MAX_ENTRIES: usize = 1_000;

    thread_local! {
        static SITES: RefCell<HashMap<String, Cached>> = RefCell::new(HashMap::new());
        static ORIGINS: RefCell<HashMap<String, (u64, bool)>> = RefCell::new(HashMap::new());
        /// Site id → when this isolate last changed it.
        static CHANGED: RefCell<HashMap<String, u64>> = RefCell::new(HashMap::new());
        /// Copies read at or before this are not trusted (set when `CHANGED` overflows).
        static FLOOR: RefCell<u64> = const { RefCell::new(0) };
    }

    /// Whether a copy read at `cached.read_at` may be used now.
    pub(crate) fn trusted(cached: &Cached) -> bool {
        let now = crate::runtime::now_ms();
        if now.saturating_sub(cached.read_at) >= CACHE_TRUST_MS {
            return false;
        }
        if FLOOR.with(|f| cached.read_at <= *f.borrow()) {
            return false;
        }
        CHANGED.with(|m| {
            m.borrow()
                .get(&cached.site.id)
                .is_none_or(|changed| cached.read_at > *changed)
        })
    }

    /// Every copy of site `id` read until now is stale.
    pub(crate) fn invalidate(id: &str) {
        let now = crate::runtime::now_ms();
        CHANGED.with(|m| {
            let mut map = m.borrow_mut();
            map.retain(|_, at| now.saturating_sub(*at) < CACHE_TRUST_MS);
            if map.len() >= MAX_ENTRIES {
                // Too many to track: distrust every copy read until now instead.
                map.clear();
                FLOOR.with(|f| *f.borrow_mut() = now);
            }
            map.insert(id.to_string(), now);
        });
    }

    pub(crate) fn get(key: &str) -> Option<Site> {
        let cached = SITES.with(|m| m.borrow().get(key).cloned())?;
        trusted(&cached).then_some(cached.site)
    }

    pub(crate) fn put(key: &str, cached: &Cached) {
        SITES.with(|m| {
            let mut map = m.borrow_mut();
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
            map.insert(key.to_string(), cached.clone());
        });
    }

    pub(crate) fn forget(key: &str) {
        SITES.with(|m| m.borrow_mut().remove(key));
    }

    pub(crate) fn origin(origin: &str) -> Option<bool> {
        let now = crate::runtime::now_ms();
        ORIGINS.with(|m| {
            let map = m.borrow();
            let (at, known) = map.get(origin)?;
            (now.saturating_sub(*at) < ORIGIN_TTL_MS).then_some(*known)
        })
    }

    pub(crate) fn put_origin(origin: &str, known: bool) {
        ORIGINS.with(|m| {
            let mut map = m.borrow_mut();
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
            map.insert(origin.to_string(), (crate::runtime::now_ms(), known));
        });
    }

    pub(crate) fn forget_origins() {
        ORIGINS.with(|m| m.borrow_mut().clear());
    }
}
