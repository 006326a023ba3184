//! The core's [`KvCache`] over Workers KV (the `CONFIG` namespace, beside the site
//! lookups' `site-by-key:` entries).
//!
//! Keys are [`CacheKey`]s (`cache:{site_id}:{digest}`), so a cached value is always one
//! site's and can never overwrite another kind of entry in the namespace. TTLs are raised
//! to KV's minimum, [`MIN_TTL_SECONDS`]. KV is eventually consistent: a read elsewhere may
//! miss a fresh write for up to a minute, which a cache tolerates.

use concierge_core::boundary::{CacheKey, KvCache, MIN_TTL_SECONDS};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use worker::Env;
use worker::kv::{KvError, KvStore};

/// The KV namespace binding the cache uses.
const BINDING: &str = "CONFIG";

/// The Worker's key-value cache.
#[derive(Debug)]
pub(crate) struct WorkerKvCache {
    kv: KvStore,
}

impl WorkerKvCache {
    /// The cache over the `CONFIG` namespace.
    pub(crate) fn from_env(env: &Env) -> worker::Result<Self> {
        Ok(Self {
            kv: env.kv(BINDING)?,
        })
    }
}

/// A KV failure as the core sees it.
fn unavailable(err: KvError) -> ServiceError {
    ServiceError::new(ServiceErrorKind::Unavailable, err.to_string())
}

impl KvCache for WorkerKvCache {
    async fn get(&self, key: &CacheKey) -> Result<Option<String>, ServiceError> {
        self.kv.get(key.as_str()).text().await.map_err(unavailable)
    }

    async fn put(&self, key: &CacheKey, value: &str, ttl_seconds: u32) -> Result<(), ServiceError> {
        self.kv
            .put(key.as_str(), value)
            .map_err(unavailable)?
            .expiration_ttl(u64::from(ttl_seconds.max(MIN_TTL_SECONDS)))
            .execute()
            .await
            .map_err(unavailable)
    }
}
