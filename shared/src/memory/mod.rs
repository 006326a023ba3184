//! In-memory implementations of the boundary traits (feature `memory`), for tests,
//! benchmarks and native tools. Single-threaded (`RefCell`), deterministic, `no_std`.
//!
//! [`MemoryBackend`] bundles one of each and is a [`Platform`] (the engine's boundaries);
//! its other parts (warranty records, search, cache, logs, data sets) are what templates
//! take as their own dependencies, e.g. `&backend.warranty`. [`MemorySql`] (read-only SQL
//! over tables in memory) is not part of it: a template that reads SQL builds its reader
//! with its own validator of model-written statements, and its own test backend, in its
//! folder (feature `memory`).

mod basics;
mod cache;
mod data;
mod logs;
mod model;
mod search;
mod sql;
mod store;
mod timer;
mod vector;
mod warranty;

pub use basics::{RecordingLogger, RecordingQueue, SequentialIds, SteppingClock};
pub use cache::{ManualClock, MemoryCache};
pub use data::MemoryDataSets;
pub use logs::MemoryKnowledgeBase;
pub use model::{Script, ScriptedChatModel};
pub use search::{MemoryPage, MemorySearch};
pub use sql::{MemorySql, MemoryTable, WrittenCheck};
pub use store::MemoryStore;
pub use timer::MemoryTimer;
pub use vector::{HashEmbedder, MemoryVectorIndex, cosine};
pub use warranty::MemoryWarrantyRecords;

use crate::boundary::ChatModel;
use crate::boundary::{Clock, EmbedQueue, Ids, Logger};
use crate::engine::Platform;
use crate::error::Error;
use crate::retrieval::index_message;

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
    /// A web corpus to search.
    pub search: MemorySearch,
    /// The key-value cache (its own manual clock).
    pub cache: MemoryCache,
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
    type Timer = MemoryTimer;

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
    fn timer(&self) -> &MemoryTimer {
        &self.timer
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
    type Timer = MemoryTimer;

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
    fn timer(&self) -> &MemoryTimer {
        &self.backend.timer
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
}
