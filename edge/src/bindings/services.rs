//! Everything a request needs from the platform, owned, built once per request: the
//! core's boundaries implemented over D1, fetch, Vectorize/local vectors and Queues.

use std::cell::RefCell;
use std::future::Future;

use concierge_core::boundary::{
    Clock, EmbedQueue, Ids, KnowledgeState, LogEntry, LogQuery, LogRecord, Logger,
};
use concierge_core::conversation::EmbedJob;
use concierge_core::engine::Platform;
use concierge_core::error::ServiceError;
use worker::{Date, Env};

use super::d1_data::D1Data;
use super::d1_listings::ListingsSql;
use super::d1_rental::D1Rental;
use super::d1_store::D1Store;
use super::kv_cache::WorkerKvCache;
use super::queue::{IndexJob, QueueMessage};
use super::timer::WorkerTimer;
use super::upstream::Upstream;
use super::vectors::Vectors;
use super::web_search::SiteSearch;
use crate::site::Site;

/// Time-ordered unique ids: 48 bits of milliseconds, then 80 random bits, in hex.
#[derive(Debug, Default)]
pub(crate) struct RandomIds;

impl Ids for RandomIds {
    fn new_id(&self) -> String {
        let mut random = [0u8; 10];
        let _ = crate::runtime::random_bytes(&mut random);
        let mut id = format!("{:012x}", Date::now().as_millis() & 0xffff_ffff_ffff);
        for b in random {
            id.push_str(&format!("{b:02x}"));
        }
        id
    }
}

/// The Worker's clock.
#[derive(Debug, Default)]
pub(crate) struct WorkerClock;

impl Clock for WorkerClock {
    fn now_ms(&self) -> u64 {
        Date::now().as_millis()
    }
}

/// Collects a request's embedding jobs; they are sent to the queue in one batch.
#[derive(Debug, Default)]
pub(crate) struct PendingEmbeds(RefCell<Vec<EmbedJob>>);

impl EmbedQueue for PendingEmbeds {
    fn enqueue(&self, job: EmbedJob) {
        self.0.borrow_mut().push(job);
    }
}

/// Prints the core's log records as JSON lines.
#[derive(Debug, Default)]
pub(crate) struct ConsoleLogger;

impl Logger for ConsoleLogger {
    fn log(&self, record: &LogRecord<'_>) {
        worker::console_log!("{}", record.to_json_line());
    }
}

/// A request's platform for one site: the boundaries every template's turn runs on.
#[derive(Debug)]
pub(crate) struct Services {
    pub env: Env,
    pub store: D1Store,
    pub upstream: Upstream,
    pub vectors: Vectors,
    pub search: SiteSearch,
    ids: RandomIds,
    clock: WorkerClock,
    timer: WorkerTimer,
    cache: WorkerKvCache,
    embeds: PendingEmbeds,
    logger: ConsoleLogger,
    /// A digest of the site's knowledge settings, part of the knowledge version in every
    /// knowledge cache key: an answer computed under other settings is never served.
    knowledge_settings: String,
    listings: ListingsSql,
    rental: D1Rental,
    data: D1Data,
}

impl Services {
    pub(crate) fn new(env: &Env, site: &Site) -> worker::Result<Self> {
        Ok(Self {
            env: env.clone(),
            store: D1Store::new(env.d1("DB")?),
            listings: ListingsSql::new(env, crate::site::RentalSettings::schema_of(&site.config)),
            rental: D1Rental::new(env.d1("DB")?),
            data: D1Data::new(env.d1("DB")?),
            upstream: Upstream::resolve(site, env),
            vectors: Vectors::from_env(env)?,
            search: SiteSearch::for_site(env, site)?,
            ids: RandomIds,
            clock: WorkerClock,
            timer: WorkerTimer,
            cache: WorkerKvCache::from_env(env)?,
            embeds: PendingEmbeds::default(),
            logger: ConsoleLogger,
            knowledge_settings: crate::runtime::sha256_hex(
                &serde_json::to_string(&site.config.knowledge).unwrap_or_default(),
            )[..16]
                .to_string(),
        })
    }

    /// Send the collected embedding jobs to the queue (an owned future, for `wait_until`).
    pub(crate) fn queue_flush(&self) -> impl Future<Output = ()> + 'static {
        let jobs: Vec<EmbedJob> = self.embeds.0.borrow_mut().drain(..).collect();
        let env = self.env.clone();
        async move {
            if jobs.is_empty() {
                return;
            }
            let messages: Vec<QueueMessage> = jobs
                .into_iter()
                .map(|j| QueueMessage::first(IndexJob::Message(j)))
                .collect();
            if let Err(err) = super::queue::send(&env, messages, 0).await {
                let line = serde_json::json!({"level": "error", "msg": "embed enqueue failed", "error": err.to_string()});
                worker::console_error!("{line}");
            }
        }
    }
}

impl Platform for Services {
    type Model = Upstream;
    type Store = D1Store;
    type Embedder = Upstream;
    type Index = Vectors;
    type Records = D1Store;
    type Timer = WorkerTimer;
    type Search = SiteSearch;
    type Sql = ListingsSql;
    type Cache = WorkerKvCache;

    fn model(&self) -> &Upstream {
        &self.upstream
    }
    fn store(&self) -> &D1Store {
        &self.store
    }
    fn embedder(&self) -> &Upstream {
        &self.upstream
    }
    fn index(&self) -> &Vectors {
        &self.vectors
    }
    fn records(&self) -> &D1Store {
        &self.store
    }
    fn timer(&self) -> &WorkerTimer {
        &self.timer
    }
    fn sql(&self) -> &ListingsSql {
        &self.listings
    }
    fn search(&self) -> &SiteSearch {
        &self.search
    }
    fn cache(&self) -> &WorkerKvCache {
        &self.cache
    }
    fn ids(&self) -> &dyn Ids {
        &self.ids
    }
    fn clock(&self) -> &dyn Clock {
        &self.clock
    }
    fn queue(&self) -> &dyn EmbedQueue {
        &self.embeds
    }
    fn logger(&self) -> &dyn Logger {
        &self.logger
    }
    fn rental(&self) -> Option<&dyn concierge_core::boundary::RentalData> {
        Some(&self.rental)
    }
    fn data_sets(&self) -> Option<&dyn concierge_core::boundary::DataSets> {
        Some(&self.data)
    }
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        super::kb::search(self.store.db(), site_id, query).await
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        let mut state = super::kb::state(self.store.db(), site_id).await?;
        state.version = format!("{}.{}", state.version, self.knowledge_settings);
        Ok(state)
    }
}
