//! The key-value cache boundary: expensive results kept for a while (`knowledge`'s tool
//! answers for `cache_ttl_seconds` = 3600, search results for an hour).
//!
//! The Worker implements it over Workers KV; tests use
//! [`MemoryCache`](crate::memory::MemoryCache). A cache may forget anything at any time
//! (KV is eventually consistent: a read may miss a recent write for up to a minute), so a
//! miss is never an error and callers recompute.
//!
//! Keys are [`CacheKey`]s, which only [`CacheKey::for_site`] makes: every key is scoped to
//! one site, bounded in length, and cannot collide with the Worker's other keys in the same
//! KV namespace.

use alloc::format;
use alloc::string::String;
use core::fmt::Write as _;
use sha2::{Digest, Sha256};

use crate::error::ServiceError;

/// The shortest time an entry lives, in seconds (Workers KV's minimum `expirationTtl`).
/// Every implementation raises shorter TTLs to this, so a test sees what production does.
pub const MIN_TTL_SECONDS: u32 = 60;

/// What every cache key starts with.
pub const CACHE_KEY_PREFIX: &str = "cache:";

/// A site-scoped cache key: `cache:{site_id}:{sha256 of the parts}`.
///
/// The parts are what the cached value depends on (for `knowledge`: agent, tool, query,
/// sorted permission scopes and departments, knowledge-base version), so a value computed
/// for one caller's permissions is never served to another's. They are hashed with their
/// lengths, so `["ab", "c"]` and `["a", "bc"]` are different keys, and the key stays short
/// however long the parts are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheKey(String);

impl CacheKey {
    /// The key of `parts` on `site_id`.
    pub fn for_site(site_id: &str, parts: &[&str]) -> Self {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        let mut key = format!("{CACHE_KEY_PREFIX}{site_id}:");
        for byte in hasher.finalize() {
            let _ = write!(key, "{byte:02x}");
        }
        Self(key)
    }

    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this key belongs to `site_id`.
    pub fn is_for_site(&self, site_id: &str) -> bool {
        self.0
            .strip_prefix(CACHE_KEY_PREFIX)
            .and_then(|rest| rest.strip_prefix(site_id))
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|digest| digest.len() == 64 && !digest.contains(':'))
    }
}

/// A key-value cache with expiry.
///
/// Errors: [`Unavailable`](crate::error::ServiceErrorKind::Unavailable) when the backend
/// cannot be reached. Callers treat a failed `get` as a miss and a failed `put` as
/// nothing cached: a cache failure never fails a turn.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait KvCache {
    /// The value under `key`, unless it is absent or expired.
    async fn get(&self, key: &CacheKey) -> Result<Option<String>, ServiceError>;

    /// Stores `value` under `key` (replacing any value) for `ttl_seconds`, raised to
    /// [`MIN_TTL_SECONDS`] if shorter.
    async fn put(&self, key: &CacheKey, value: &str, ttl_seconds: u32) -> Result<(), ServiceError>;
}

impl<T: KvCache + ?Sized> KvCache for &T {
    async fn get(&self, key: &CacheKey) -> Result<Option<String>, ServiceError> {
        (**self).get(key).await
    }
    async fn put(&self, key: &CacheKey, value: &str, ttl_seconds: u32) -> Result<(), ServiceError> {
        (**self).put(key, value, ttl_seconds).await
    }
}
