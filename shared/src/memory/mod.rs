//! In-memory implementations of the boundary traits (feature `memory`), for tests,
//! benchmarks and native tools. Single-threaded (`RefCell`), deterministic, `no_std`.
//!
//! [`MemoryBackend`] bundles one of each and is a [`Platform`].

mod cache;
mod data;
mod logs;
mod model;
mod rental;
mod search;
mod sql;
mod store;
mod timer;
mod vector;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

pub use cache::{ManualClock, MemoryCache};
pub use data::MemoryDataSets;
pub use logs::MemoryKnowledgeBase;
pub use model::{Script, ScriptedChatModel};
pub use rental::MemoryRental;
pub use search::{MemoryPage, MemorySearch};
pub use sql::{MemorySql, MemoryTable};
pub use store::MemoryStore;
pub use timer::MemoryTimer;
pub use vector::{HashEmbedder, MemoryVectorIndex, cosine};

use crate::boundary::ChatModel;
use crate::boundary::{
    Clock, EmbedQueue, Ids, KnowledgeState, LogEntry, LogQuery, LogRecord, Logger, WarrantyRecord,
    WarrantyRecords,
};
use crate::conversation::EmbedJob;
use crate::engine::Platform;
use crate::error::{Error, ServiceError};
use crate::retrieval::index_message;

/// Ids `{prefix}1`, `{prefix}2`, …
#[derive(Debug)]
pub struct SequentialIds {
    prefix: String,
    next: Cell<u64>,
}

impl SequentialIds {
    /// Ids starting at `{prefix}1`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.into(),
            next: Cell::new(1),
        }
    }
}

impl Default for SequentialIds {
    fn default() -> Self {
        Self::new("id")
    }
}

impl Ids for SequentialIds {
    fn new_id(&self) -> String {
        let n = self.next.get();
        self.next.set(n + 1);
        format!("{}{n}", self.prefix)
    }
}

/// A clock that starts at a given time and advances by a fixed step on every reading.
#[derive(Debug)]
pub struct SteppingClock {
    now: Cell<u64>,
    step: u64,
}

impl SteppingClock {
    /// Starts at `start_ms`, advancing `step_ms` per reading.
    pub fn new(start_ms: u64, step_ms: u64) -> Self {
        Self {
            now: Cell::new(start_ms),
            step: step_ms,
        }
    }
}

impl Default for SteppingClock {
    /// 2026-01-01T00:00:00Z, one second per reading.
    fn default() -> Self {
        Self::new(1_767_225_600_000, 1000)
    }
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> u64 {
        let now = self.now.get();
        self.now.set(now + self.step);
        now
    }
}

/// An embedding queue that keeps the jobs.
#[derive(Debug, Default)]
pub struct RecordingQueue {
    jobs: RefCell<Vec<EmbedJob>>,
}

impl RecordingQueue {
    /// The jobs queued so far.
    pub fn jobs(&self) -> Vec<EmbedJob> {
        self.jobs.borrow().clone()
    }

    /// Takes the queued jobs.
    pub fn drain(&self) -> Vec<EmbedJob> {
        core::mem::take(&mut *self.jobs.borrow_mut())
    }
}

impl EmbedQueue for RecordingQueue {
    fn enqueue(&self, job: EmbedJob) {
        self.jobs.borrow_mut().push(job);
    }
}

/// A logger that keeps each record as its JSON line.
#[derive(Debug, Default)]
pub struct RecordingLogger {
    lines: RefCell<Vec<String>>,
}

impl RecordingLogger {
    /// The lines logged so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.borrow().clone()
    }
}

impl Logger for RecordingLogger {
    fn log(&self, record: &LogRecord<'_>) {
        self.lines.borrow_mut().push(record.to_json_line());
    }
}

/// Warranty records by site and upper-cased serial.
#[derive(Debug, Default)]
pub struct MemoryWarrantyRecords {
    records: RefCell<BTreeMap<(String, String), WarrantyRecord>>,
    unavailable: Cell<bool>,
}

impl MemoryWarrantyRecords {
    /// No records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Seed 000's demo record on `site_id`: serial `0979825281` → "S23 Ultra", warranty
    /// until 12/8/2026.
    pub fn demo(site_id: &str) -> Self {
        let records = Self::new();
        if let Some(until) = crate::boundary::CalendarDate::new(2026, 8, 12) {
            records.insert(
                site_id,
                WarrantyRecord {
                    serial: "0979825281".into(),
                    product: "S23 Ultra".into(),
                    warranty_until: until,
                },
            );
        }
        records
    }

    /// Adds (or replaces) a record.
    pub fn insert(&self, site_id: &str, record: WarrantyRecord) {
        self.records
            .borrow_mut()
            .insert((site_id.into(), record.serial.to_ascii_uppercase()), record);
    }

    /// Makes every lookup fail as an unreachable database would (`true`), or work again.
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }
}

impl WarrantyRecords for MemoryWarrantyRecords {
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError> {
        if self.unavailable.get() {
            return Err(ServiceError::new(
                crate::error::ServiceErrorKind::Unavailable,
                "warranty records unavailable",
            ));
        }
        Ok(self
            .records
            .borrow()
            .get(&(site_id.into(), serial.to_ascii_uppercase()))
            .cloned())
    }
}

/// One of each in-memory boundary.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    /// The scripted chat model.
    pub model: ScriptedChatModel,
    /// The conversation store.
    pub store: MemoryStore,
    /// The hashing embedder.
    pub embedder: HashEmbedder,
    /// The vector index.
    pub index: MemoryVectorIndex,
    /// Warranty records.
    pub warranty: MemoryWarrantyRecords,
    /// Ids `id1`, `id2`, …
    pub ids: SequentialIds,
    /// A stepping clock.
    pub clock: SteppingClock,
    /// The embedding queue.
    pub queue: RecordingQueue,
    /// The log.
    pub logger: RecordingLogger,
    /// Virtual time for timeouts and retries.
    pub timer: MemoryTimer,
    /// The site's tables for read-only SQL.
    pub sql: MemorySql,
    /// A web corpus to search.
    pub search: MemorySearch,
    /// The key-value cache (its own manual clock).
    pub cache: MemoryCache,
    /// Rental roles and learned Q&A.
    pub rental: MemoryRental,
    /// Uploaded logs and knowledge-base versions (`knowledge`).
    pub knowledge: MemoryKnowledgeBase,
    /// Merchant data sets (`analyst`).
    pub data: MemoryDataSets,
}

impl MemoryBackend {
    /// A backend with seed 000's demo warranty record on `site_id`.
    pub fn demo(site_id: &str) -> Self {
        Self {
            warranty: MemoryWarrantyRecords::demo(site_id),
            ..Self::default()
        }
    }

    /// This backend with another chat model (e.g. a failing one).
    pub fn with_model<'a, M: ChatModel>(&'a self, model: &'a M) -> WithModel<'a, M> {
        WithModel {
            backend: self,
            model,
        }
    }

    /// Embeds and indexes every queued message (what the Worker's queue consumer does).
    /// Returns the number of chunks indexed.
    pub async fn index_queued(&self) -> Result<usize, Error> {
        let mut chunks = 0;
        for job in self.queue.drain() {
            chunks += index_message(&self.embedder, &self.index, &job).await?;
        }
        Ok(chunks)
    }
}

impl Platform for MemoryBackend {
    type Model = ScriptedChatModel;
    type Store = MemoryStore;
    type Embedder = HashEmbedder;
    type Index = MemoryVectorIndex;
    type Records = MemoryWarrantyRecords;
    type Timer = MemoryTimer;
    type Sql = MemorySql;
    type Search = MemorySearch;
    type Cache = MemoryCache;

    fn model(&self) -> &ScriptedChatModel {
        &self.model
    }
    fn store(&self) -> &MemoryStore {
        &self.store
    }
    fn embedder(&self) -> &HashEmbedder {
        &self.embedder
    }
    fn index(&self) -> &MemoryVectorIndex {
        &self.index
    }
    fn records(&self) -> &MemoryWarrantyRecords {
        &self.warranty
    }
    fn timer(&self) -> &MemoryTimer {
        &self.timer
    }
    fn sql(&self) -> &MemorySql {
        &self.sql
    }
    fn search(&self) -> &MemorySearch {
        &self.search
    }
    fn cache(&self) -> &MemoryCache {
        &self.cache
    }
    fn ids(&self) -> &dyn Ids {
        &self.ids
    }
    fn clock(&self) -> &dyn Clock {
        &self.clock
    }
    fn queue(&self) -> &dyn EmbedQueue {
        &self.queue
    }
    fn logger(&self) -> &dyn Logger {
        &self.logger
    }
    fn rental(&self) -> Option<&dyn crate::boundary::RentalData> {
        Some(&self.rental)
    }
    fn data_sets(&self) -> Option<&dyn crate::boundary::DataSets> {
        Some(&self.data)
    }
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        Ok(self.knowledge.search(site_id, query))
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        Ok(self.knowledge.state(site_id))
    }
}

/// A [`MemoryBackend`] with another chat model ([`MemoryBackend::with_model`]).
#[derive(Debug)]
pub struct WithModel<'a, M> {
    backend: &'a MemoryBackend,
    model: &'a M,
}

impl<M: ChatModel> Platform for WithModel<'_, M> {
    type Model = M;
    type Store = MemoryStore;
    type Embedder = HashEmbedder;
    type Index = MemoryVectorIndex;
    type Records = MemoryWarrantyRecords;
    type Timer = MemoryTimer;
    type Sql = MemorySql;
    type Search = MemorySearch;
    type Cache = MemoryCache;

    fn model(&self) -> &M {
        self.model
    }
    fn store(&self) -> &MemoryStore {
        &self.backend.store
    }
    fn embedder(&self) -> &HashEmbedder {
        &self.backend.embedder
    }
    fn index(&self) -> &MemoryVectorIndex {
        &self.backend.index
    }
    fn records(&self) -> &MemoryWarrantyRecords {
        &self.backend.warranty
    }
    fn timer(&self) -> &MemoryTimer {
        &self.backend.timer
    }
    fn sql(&self) -> &MemorySql {
        &self.backend.sql
    }
    fn search(&self) -> &MemorySearch {
        &self.backend.search
    }
    fn cache(&self) -> &MemoryCache {
        &self.backend.cache
    }
    fn ids(&self) -> &dyn Ids {
        &self.backend.ids
    }
    fn clock(&self) -> &dyn Clock {
        &self.backend.clock
    }
    fn queue(&self) -> &dyn EmbedQueue {
        &self.backend.queue
    }
    fn logger(&self) -> &dyn Logger {
        &self.backend.logger
    }
    fn rental(&self) -> Option<&dyn crate::boundary::RentalData> {
        Some(&self.backend.rental)
    }
    fn data_sets(&self) -> Option<&dyn crate::boundary::DataSets> {
        Some(&self.backend.data)
    }
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        Ok(self.backend.knowledge.search(site_id, query))
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        Ok(self.backend.knowledge.state(site_id))
    }
}
