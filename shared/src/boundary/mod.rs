//! The boundary traits: the only way the engine touches the world.
//!
//! The Worker (`edge`) implements them over fetch, D1, KV, Vectorize and Queues; tests and
//! native tools use the in-memory implementations in [`memory`](crate::memory) (feature
//! `memory`). None has a `Send` bound: Workers and browsers are single-threaded.
//!
//! Asynchronous boundaries ([`ChatModel`], [`ConversationStore`], [`Embedder`],
//! [`VectorIndex`], [`WarrantyRecords`]) use `async fn` in traits, so flows take them as
//! generic parameters. Synchronous ones ([`Ids`], [`Clock`], [`EmbedQueue`], [`Logger`])
//! are object-safe and passed as `&dyn`.

mod cache;
mod data;
mod logs;
mod model;
mod records;
mod search;
mod sql;
mod store;
mod timer;
mod vector;

use alloc::string::{String, ToString};

pub use cache::{CACHE_KEY_PREFIX, CacheKey, KvCache, MIN_TTL_SECONDS};
pub use data::{
    AggregateQuery, AggregateRow, DataConnection, DataField, DataFuture, DataRows, DataSets,
};
pub use logs::{KnowledgeBase, KnowledgeState, LogEntry, LogQuery, fts_any_of};
pub use model::{
    ChatModel, ChatRequest, ChatSink, Constraint, ModelCall, parse_tool_call, tool_call_schema,
};
pub use records::{CalendarDate, WarrantyRecord, WarrantyRecords};
pub use search::{WebSearch, WebSource, clean_url, is_web_url};
pub use sql::{
    ColumnSchema, ColumnType, ReadOnlyQuery, SqlReader, SqlRows, SqlScope, SqlValue, TableSchema,
};
pub use store::{
    ConversationStore, NewTurn, Reopening, TurnContext, TurnOpening, TurnResume, TurnStart,
};
pub use timer::{Timer, iso_of_ms};
pub use vector::{
    Embedder, FilterCondition, MAX_VECTOR_ID_BYTES, MetadataFilter, VectorIndex, VectorMatch,
    VectorQuery, VectorRecord,
};

use crate::conversation::EmbedJob;
use crate::intent::ClassificationLog;

/// Mints ids for conversations and messages.
pub trait Ids {
    /// A new unique id.
    fn new_id(&self) -> String;
}

/// Tells the time.
pub trait Clock {
    /// Now, in Unix milliseconds.
    fn now_ms(&self) -> u64;
}

/// Receives messages that need embedding. Implementations record the job and send it on
/// (the Worker batches a turn's jobs onto its queue once the turn is over); enqueueing never
/// fails a turn.
pub trait EmbedQueue {
    /// Queue `job`.
    fn enqueue(&self, job: EmbedJob);
}

/// A structured log record the engine emits. The core performs no I/O: the Worker prints
/// these (adding its `request_id`), tests collect them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LogRecord<'a> {
    /// One intent classification (seed 000's debug log line).
    Classification(&'a ClassificationLog),
    /// Something degraded but the turn went on (e.g. retrieval unavailable).
    Warning {
        /// The conversation.
        conversation_id: &'a str,
        /// A stable code, e.g. `"retrieval_unavailable"`.
        code: &'static str,
        /// Detail for operators.
        detail: &'a str,
    },
    /// One step of a template's flow, as its seed names it (e.g. `guarded`'s
    /// `[STEP 2.1] Guardrail result: PASSED`).
    Step {
        /// The conversation.
        conversation_id: &'a str,
        /// The seed's step number, e.g. `"2.1"`.
        step: &'static str,
        /// The step's message.
        msg: &'a str,
    },
    /// A template's measurements of one turn (`knowledge`: seed 003 §7
    /// `performance_metrics`).
    Metrics {
        /// The conversation.
        conversation_id: &'a str,
        /// What was measured, e.g. `"knowledge"`.
        name: &'static str,
        /// The figures.
        data: &'a serde_json::Value,
    },
}

impl LogRecord<'_> {
    /// The record as one line of JSON. A classification prints exactly the seed's fields.
    pub fn to_json_line(&self) -> String {
        match self {
            Self::Classification(log) => log.to_json_line(),
            Self::Warning { conversation_id, code, detail } => {
                serde_json::json!({ "warning": code, "conversation_id": conversation_id, "detail": detail }).to_string()
            }
            Self::Step { conversation_id, step, msg } => {
                serde_json::json!({ "step": step, "msg": msg, "conversation_id": conversation_id }).to_string()
            }
            Self::Metrics { conversation_id, name, data } => {
                serde_json::json!({ "metrics": name, "conversation_id": conversation_id, "performance_metrics": data }).to_string()
            }
        }
    }
}

/// Receives the engine's log records.
pub trait Logger {
    /// Log `record`.
    fn log(&self, record: &LogRecord<'_>);
}

/// A logger that drops everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopLogger;

impl Logger for NoopLogger {
    fn log(&self, _record: &LogRecord<'_>) {}
}
