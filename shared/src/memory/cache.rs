//! A [`KvCache`] in memory, with expiry against a [`Clock`], and [`ManualClock`], a clock
//! that moves only when a test says so.

use alloc::collections::BTreeMap;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::boundary::{CacheKey, Clock, KvCache, MIN_TTL_SECONDS};
use crate::error::{ServiceError, ServiceErrorKind};

/// A clock that stands still until told to move. Clones share one time, so a test keeps a
/// clone to advance the time a [`MemoryCache`] (or anything else) reads.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Rc<Cell<u64>>,
}

impl ManualClock {
    /// A clock reading `now_ms` (Unix milliseconds).
    pub fn new(now_ms: u64) -> Self {
        Self {
            now: Rc::new(Cell::new(now_ms)),
        }
    }

    /// Moves the time forward by `ms`.
    pub fn advance_ms(&self, ms: u64) {
        self.now.set(self.now.get().saturating_add(ms));
    }

    /// Sets the time.
    pub fn set_ms(&self, now_ms: u64) {
        self.now.set(now_ms);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.get()
    }
}

/// One cached value and when it stops being served.
#[derive(Debug, Clone)]
struct Entry {
    value: String,
    expires_at_ms: u64,
}

/// A key-value cache in memory. An entry put at time `t` with TTL `s` seconds (raised to
/// [`MIN_TTL_SECONDS`], as on Workers KV) is served while the clock reads less than
/// `t + s·1000`, and gone from then on.
#[derive(Debug, Default)]
pub struct MemoryCache<C = ManualClock> {
    clock: C,
    entries: RefCell<BTreeMap<CacheKey, Entry>>,
    unavailable: Cell<bool>,
}

impl<C: Clock> MemoryCache<C> {
    /// An empty cache reading time from `clock`.
    pub fn new(clock: C) -> Self {
        Self {
            clock,
            entries: RefCell::new(BTreeMap::new()),
            unavailable: Cell::new(false),
        }
    }

    /// The clock it reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The keys of the entries not yet expired, in order (expired ones are dropped).
    pub fn keys(&self) -> Vec<CacheKey> {
        self.purge(self.clock.now_ms());
        self.entries.borrow().keys().cloned().collect()
    }

    /// Makes every later call fail with `Unavailable` (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }

    fn check(&self) -> Result<(), ServiceError> {
        if self.unavailable.get() {
            return Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory cache set unavailable",
            ));
        }
        Ok(())
    }

    /// Drops every entry expired at `now_ms`.
    fn purge(&self, now_ms: u64) {
        self.entries
            .borrow_mut()
            .retain(|_, entry| entry.expires_at_ms > now_ms);
    }
}

impl<C: Clock> KvCache for MemoryCache<C> {
    async fn get(&self, key: &CacheKey) -> Result<Option<String>, ServiceError> {
        self.check()?;
        let now = self.clock.now_ms();
        let mut entries = self.entries.borrow_mut();
        match entries.get(key) {
            Some(entry) if entry.expires_at_ms > now => Ok(Some(entry.value.clone())),
            Some(_) => {
                entries.remove(key);
                Ok(None)
            }
            None => Ok(None),
        }
    }

    async fn put(&self, key: &CacheKey, value: &str, ttl_seconds: u32) -> Result<(), ServiceError> {
        self.check()?;
        let now = self.clock.now_ms();
        self.purge(now);
        let ttl_ms = u64::from(ttl_seconds.max(MIN_TTL_SECONDS)) * 1000;
        self.entries.borrow_mut().insert(
            key.clone(),
            Entry {
                value: value.into(),
                expires_at_ms: now.saturating_add(ttl_ms),
            },
        );
        Ok(())
    }
}
