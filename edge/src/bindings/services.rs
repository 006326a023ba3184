//! Everything a request needs from the platform, owned, built once per request: the
//! core's boundaries implemented over D1, fetch, Vectorize/local vectors and Queues.

use std::cell::RefCell;
use std::future::Future;

use concierge_core::boundary::{Clock, EmbedQueue, Ids, LogRecord, Logger};
use concierge_core::conversation::{EmbedJob, Language};
use concierge_core::flows::shop::{ShopConfig, ShopServices};
use concierge_core::prompt::Persona;
use worker::{Date, Env};

use super::d1_store::D1Store;
use super::queue::{IndexJob, QueueMessage};
use super::upstream::Upstream;
use super::vectors::Vectors;
use crate::site::Site;

/// Time-ordered unique ids: 48 bits of milliseconds, then 80 random bits, in hex.
#[derive(Debug, Default)]
pub(crate) struct RandomIds;

impl Ids for RandomIds {
    fn new_id(&self) -> String {
        let mut random = [0u8; 10];
        let _ = crate::random_bytes(&mut random);
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

/// A request's services for one site.
#[derive(Debug)]
pub(crate) struct Services {
    pub env: Env,
    pub store: D1Store,
    pub upstream: Upstream,
    pub vectors: Vectors,
    pub config: ShopConfig,
    ids: RandomIds,
    clock: WorkerClock,
    embeds: PendingEmbeds,
    logger: ConsoleLogger,
}

impl Services {
    pub(crate) fn new(env: &Env, site: &Site) -> worker::Result<Self> {
        let mut config = ShopConfig::default();
        config.max_tokens = Some(
            site.config
                .llm
                .max_tokens
                .unwrap_or(crate::site::DEFAULT_MAX_TOKENS),
        );
        if let Some(persona) = &site.config.persona {
            // A site's persona replaces the template's in the site's default language.
            let parsed = Persona::parse(persona);
            match site
                .config
                .language
                .as_deref()
                .and_then(Language::parse)
                .unwrap_or_default()
            {
                Language::Vi => config.vi.persona = parsed,
                Language::En => config.en.persona = parsed,
            }
        }
        Ok(Self {
            env: env.clone(),
            store: D1Store::new(env.d1("DB")?),
            upstream: Upstream::resolve(site, env),
            vectors: Vectors::from_env(env)?,
            config,
            ids: RandomIds,
            clock: WorkerClock,
            embeds: PendingEmbeds::default(),
            logger: ConsoleLogger,
        })
    }

    /// The boundaries as the `shop` flow takes them.
    pub(crate) fn shop(&self) -> ShopServices<'_, Upstream, D1Store, Upstream, Vectors, D1Store> {
        ShopServices {
            model: &self.upstream,
            store: &self.store,
            embedder: &self.upstream,
            index: &self.vectors,
            warranty: &self.store,
            ids: &self.ids,
            clock: &self.clock,
            queue: &self.embeds,
            logger: &self.logger,
        }
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
