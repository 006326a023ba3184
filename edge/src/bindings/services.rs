//! What a request needs from the platform, owned, built once per request: the engine's
//! boundaries ([`Platform`]) implemented over D1, fetch, Vectorize/local vectors and
//! Queues. A template's own dependencies are built with the template, for the site's
//! template only (`crate::templates`).

use std::cell::RefCell;
use std::future::Future;

use concierge_core::boundary::{Clock, EmbedQueue, Ids, LogRecord, Logger};
use concierge_core::conversation::EmbedJob;
use concierge_core::engine::{Assistant, Platform};
use worker::{Date, Env};

use super::d1_store::D1Store;
use super::queue::{IndexJob, QueueMessage};
use super::timer::WorkerTimer;
use super::upstream::Upstream;
use super::vectors::Vectors;
use crate::error::ApiError;
use crate::site::Site;

/// A site's assistant (its template with its settings and dependencies), for code below
/// the templates that runs turns (the turn queue's consumer): the registry implements it
/// (`crate::templates::SiteTemplates`) and the Worker's entry point names it.
pub(crate) trait SiteAssistants {
    /// The assistant.
    type Assistant: Assistant;
    /// The site's assistant, or the 400 for a template that is not built.
    fn for_site(env: &Env, site: &Site) -> Result<Self::Assistant, ApiError>;
}

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

/// Prints the core's log records as JSON lines — a request's (a turn's) together, in one
/// console call when the request is done (when its platform is dropped): a console call
/// costs the isolate far more than building its line, and a turn's lines must not delay
/// its model's request.
#[derive(Debug, Default)]
pub(crate) struct ConsoleLogger(RefCell<Vec<String>>);

impl Logger for ConsoleLogger {
    fn log(&self, record: &LogRecord<'_>) {
        self.0.borrow_mut().push(record.to_json_line());
    }
}

impl Drop for ConsoleLogger {
    fn drop(&mut self) {
        let lines = self.0.get_mut();
        if !lines.is_empty() {
            worker::console_log!("{}", lines.join("\n"));
        }
    }
}

/// A request's platform for one site: the boundaries every template's turn runs on.
#[derive(Debug)]
pub(crate) struct Services {
    pub env: Env,
    pub store: D1Store,
    pub upstream: Upstream,
    pub vectors: Vectors,
    ids: RandomIds,
    clock: WorkerClock,
    timer: WorkerTimer,
    embeds: PendingEmbeds,
    logger: ConsoleLogger,
}

impl Services {
    pub(crate) fn new(env: &Env, site: &Site) -> worker::Result<Self> {
        Ok(Self {
            env: env.clone(),
            store: D1Store::new(env)?.with_template(site.template.as_str()),
            upstream: Upstream::resolve(site, env),
            vectors: Vectors::for_site(env, &site.id)?,
            ids: RandomIds,
            clock: WorkerClock,
            timer: WorkerTimer,
            embeds: PendingEmbeds::default(),
            logger: ConsoleLogger::default(),
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
    type Timer = WorkerTimer;

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
    fn timer(&self) -> &WorkerTimer {
        &self.timer
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
}
