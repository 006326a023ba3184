//! Background indexing through the `EMBED_QUEUE` Cloudflare Queue (producer and consumer
//! in this Worker): stored messages (conversation memory) and knowledge documents.
//!
//! The consumer embeds the text's chunks and upserts them under idempotent ids (see
//! [`retrieval`]), deleting chunks left over from a longer previous version. What it
//! wrote for a message or document deleted (or, for a document, replaced) while it was
//! being indexed is deleted again, so no vector outlives its text. A failure is retried
//! by re-sending the job with the next attempt number and an exponential delay (`EMBED_RETRY_BASE_SECONDS` × 2^attempt);
//! after `EMBED_MAX_ATTEMPTS` a message is marked `embed_failed: true` in its metadata.

use std::collections::BTreeMap;

use concierge_core::boundary::VectorIndex;
use concierge_core::conversation::{EmbedJob, Scope};
use concierge_core::retrieval;
use concierge_core::retrieval::catalog;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{BatchMessageBuilder, Env, MessageBatch, MessageExt};

use super::d1_store::D1Store;
use super::documents::Documents;
use super::upstream::Upstream;
use super::vectors::Vectors;
use crate::error::ApiError;

/// What to index.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum IndexJob {
    /// A stored conversation message.
    Message(EmbedJob),
    /// A knowledge document of a site (its current stored version).
    Document {
        site_id: String,
        document_id: String,
    },
}

/// One queue message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct QueueMessage {
    pub job: IndexJob,
    /// 0 for the first try.
    pub attempt: u32,
}

impl QueueMessage {
    pub(crate) fn first(job: IndexJob) -> Self {
        Self { job, attempt: 0 }
    }
}

/// Send `messages`, delayed by `delay_seconds`.
pub(crate) async fn send(
    env: &Env,
    messages: Vec<QueueMessage>,
    delay_seconds: u32,
) -> worker::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let queue = env.queue("EMBED_QUEUE")?;
    let mut batch = BatchMessageBuilder::new().messages(messages);
    if delay_seconds > 0 {
        batch = batch.delay_seconds(delay_seconds);
    }
    queue.send_batch(batch.build()).await
}

/// The var `name` as a number (`default` when unset or malformed).
pub(crate) fn var_u32(env: &Env, name: &str, default: u32) -> u32 {
    env.var(name)
        .ok()
        .and_then(|v| v.to_string().parse().ok())
        .unwrap_or(default)
}

/// The queue consumer. Jobs are grouped by site: a site's messages are embedded with one
/// embedding call, upserted with one vector write, and their status recorded with one D1
/// batch; documents (rare, larger) are indexed one by one.
pub(crate) async fn consume(batch: MessageBatch<QueueMessage>, env: &Env) -> worker::Result<()> {
    let retry = Retry {
        max_attempts: var_u32(env, "EMBED_MAX_ATTEMPTS", 4).max(1),
        base_delay: var_u32(env, "EMBED_RETRY_BASE_SECONDS", 2),
    };
    let store = D1Store::new(env)?;
    let knowledge = Documents::from_env(env)?;
    let mut by_site: BTreeMap<String, Vec<QueueMessage>> = BTreeMap::new();
    let messages = batch.messages()?;
    for message in &messages {
        let body = message.body().clone();
        by_site
            .entry(body.job.site_id().to_string())
            .or_default()
            .push(body);
    }
    let mut resend: Vec<(u32, QueueMessage)> = Vec::new();
    // What was indexed, logged in one line for the whole batch (a line per job costs as much
    // as the job's own database work).
    let mut indexed: Vec<serde_json::Value> = Vec::new();
    for (site_id, jobs) in by_site {
        let (site, upstream) = match super::d1_sites::find_by_id(env, &site_id).await {
            // A site deleted meanwhile ends its jobs.
            Ok(None) => continue,
            Ok(Some(site)) => {
                let upstream = Upstream::resolve(&site, env);
                (site, upstream)
            }
            Err(err) => {
                for job in jobs {
                    log("index retry", &job.job, job.attempt, &err.chain());
                    resend.push((retry.base_delay, job));
                }
                continue;
            }
        };
        // The site's own vectors: its Vectorize namespace, or its object.
        let vectors = Vectors::for_site(env, &site_id)?;
        let (messages, documents): (Vec<QueueMessage>, Vec<QueueMessage>) = jobs
            .into_iter()
            .partition(|m| matches!(m.job, IndexJob::Message(_)));
        let outcome = index_messages(&store, &vectors, &upstream, &messages).await;
        for (message, result) in messages.into_iter().zip(outcome) {
            settle(&store, &retry, message, result, &mut resend, &mut indexed).await?;
        }
        let mut documents_indexed = false;
        for document in documents {
            let result = index_document(&knowledge, &vectors, &upstream, &document.job).await;
            documents_indexed |= result.is_ok();
            settle(&store, &retry, document, result, &mut resend, &mut indexed).await?;
        }
        // The site's catalog vocabulary follows its documents (a failure is logged: the
        // next indexing or deletion rewrites it).
        if documents_indexed {
            // Retrieval is worth a query for the site's conversations now.
            super::d1_store::site_knowledge::changed(env.kv("CONFIG").ok().as_ref(), &site.id)
                .await;
        }
        if documents_indexed && let Err(err) = super::catalog::refresh(env, &site).await {
            let line = serde_json::json!({"level": "warn", "msg": "catalog not refreshed",
                "site": site.id, "detail": err.chain()});
            worker::console_warn!("{line}");
        }
    }
    if !indexed.is_empty() {
        let line = serde_json::json!({"level": "info", "msg": "indexed", "jobs": indexed});
        worker::console_log!("{line}");
    }
    // Every job is settled (done, failed for good, or re-sent with its next attempt).
    let mut delays: Vec<u32> = resend.iter().map(|(delay, _)| *delay).collect();
    delays.sort_unstable();
    delays.dedup();
    for delay in delays {
        let group: Vec<QueueMessage> = resend
            .iter()
            .filter(|(d, _)| *d == delay)
            .map(|(_, m)| m.clone())
            .collect();
        send(env, group, delay).await?;
    }
    for message in &messages {
        message.ack();
    }
    Ok(())
}

/// Attempts and backoff of background indexing.
struct Retry {
    max_attempts: u32,
    base_delay: u32,
}

/// Record a job's outcome: add it to `indexed`, or log it and queue its retry or, after the
/// last attempt, mark it failed.
async fn settle(
    store: &D1Store,
    retry: &Retry,
    message: QueueMessage,
    result: Result<usize, ApiError>,
    resend: &mut Vec<(u32, QueueMessage)>,
    indexed: &mut Vec<serde_json::Value>,
) -> worker::Result<()> {
    let QueueMessage { job, attempt } = message;
    match result {
        Ok(chunks) => {
            let (site, subject) = job.describe();
            indexed.push(serde_json::json!({
                "site": site, "subject": subject, "attempt": attempt, "chunks": chunks,
            }));
        }
        Err(error) if attempt + 1 < retry.max_attempts => {
            log("index retry", &job, attempt, &error.chain());
            let delay = retry.base_delay.saturating_mul(1 << attempt.min(10));
            resend.push((
                delay,
                QueueMessage {
                    job,
                    attempt: attempt + 1,
                },
            ));
        }
        Err(error) => {
            log("index failed", &job, attempt, &error.chain());
            mark_failed(store, &job).await?;
        }
    }
    Ok(())
}

impl IndexJob {
    /// The job's site, and what it indexes (`message …` or `document …`), for logs.
    fn describe(&self) -> (&str, String) {
        match self {
            Self::Message(job) => (&job.site_id, format!("message {}", job.message_id)),
            Self::Document {
                site_id,
                document_id,
            } => (site_id, format!("document {document_id}")),
        }
    }

    fn site_id(&self) -> &str {
        match self {
            Self::Message(job) => &job.site_id,
            Self::Document { site_id, .. } => site_id,
        }
    }
}

/// Index one site's stored messages together; one result per message, in order. A message
/// deleted meanwhile (with its conversation) is skipped as 0 chunks.
async fn index_messages(
    store: &D1Store,
    vectors: &Vectors,
    upstream: &Upstream,
    messages: &[QueueMessage],
) -> Vec<Result<usize, ApiError>> {
    let jobs: Vec<&EmbedJob> = messages
        .iter()
        .filter_map(|m| match &m.job {
            IndexJob::Message(job) => Some(job),
            IndexJob::Document { .. } => None,
        })
        .collect();
    if jobs.is_empty() {
        return Vec::new();
    }
    // One failure fails every job of the batch (each with its own copy of the error).
    let all = |error: &dyn Fn() -> ApiError| -> Vec<Result<usize, ApiError>> {
        jobs.iter().map(|_| Err(error())).collect()
    };
    let counts = match retrieval::index_messages(upstream, vectors, &jobs).await {
        Ok(counts) => counts,
        Err(err) => return all(&|| ApiError::Core(err.clone())),
    };
    // Each conversation's marks in one batch, in its record (its object).
    let mut by_conversation: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, job) in jobs.iter().enumerate() {
        by_conversation
            .entry(job.conversation_id.as_str())
            .or_default()
            .push(i);
    }
    let mut changed = vec![0usize; jobs.len()];
    for (conversation_id, members) in by_conversation {
        let scope = Scope::new(&jobs[members[0]].site_id, conversation_id);
        match mark_indexed(store, scope, &jobs, &counts, &members).await {
            Ok(results) => {
                for (i, n) in members.into_iter().zip(results) {
                    changed[i] = n;
                }
            }
            Err(err) => return all(&|| d1_error(&err)),
        }
    }
    // A message deleted (with its conversation) while it was being indexed: its vectors
    // were written after the deletion removed the others, so remove them too.
    let orphans: Vec<String> = jobs
        .iter()
        .zip(&counts)
        .zip(&changed)
        .filter(|(_, changed)| **changed == 0)
        .flat_map(|((job, chunks), _)| {
            (0..*chunks).map(|i| retrieval::chunk_id(&job.message_id, i))
        })
        .collect();
    if let Err(err) = vectors.delete(&orphans).await {
        return all(&|| vector_error(err.clone()));
    }
    counts.into_iter().map(Ok).collect()
}

/// Rounds of re-reading a document replaced while it is being indexed, before the job is
/// retried through the queue.
const DOCUMENT_ROUNDS: usize = 3;

/// Index one knowledge document: its current stored version. The result is recorded only
/// if that version is still the stored one; otherwise the job indexes what is stored now,
/// or — the document deleted meanwhile — deletes what it wrote.
async fn index_document(
    documents: &Documents,
    vectors: &Vectors,
    upstream: &Upstream,
    job: &IndexJob,
) -> Result<usize, ApiError> {
    let IndexJob::Document {
        site_id,
        document_id,
    } = job
    else {
        return Ok(0);
    };
    for _ in 0..DOCUMENT_ROUNDS {
        let Some(doc) = documents.load(site_id, document_id).await? else {
            // Deleted, before or while this job wrote: delete whatever it may have written.
            let ids = retrieval::document_stale_ids(site_id, document_id, 0);
            vectors.delete(&ids).await.map_err(vector_error)?;
            return Ok(0);
        };
        let vocabulary = catalog::encode(&catalog::document_terms(&doc.title, &doc.content));
        let chunks = retrieval::index_document_with(
            upstream,
            vectors,
            site_id,
            document_id,
            &doc.title,
            &doc.content,
            &doc.meta(),
        )
        .await?;
        let stale = doc.stale_ids(site_id, document_id, chunks);
        vectors.delete(&stale).await.map_err(vector_error)?;
        if documents
            .record_indexed(site_id, document_id, &doc, chunks, &vocabulary)
            .await?
        {
            return Ok(chunks);
        }
    }
    Err(ApiError::Conflict(
        "the document kept changing while it was indexed",
    ))
}

/// A D1 failure shared by a batch's jobs (`worker::Error` is not `Clone`).
fn d1_error(err: &worker::Error) -> ApiError {
    ApiError::Internal(worker::Error::RustError(format!("D1: {err}")))
}

/// A vector index failure.
fn vector_error(err: concierge_core::error::ServiceError) -> ApiError {
    ApiError::Core(concierge_core::error::Error::VectorIndex(err))
}

/// One conversation's messages (`members` of `jobs`) marked indexed with their chunk
/// counts, in one batch; how many rows each mark changed (0: the message is gone).
async fn mark_indexed(
    store: &D1Store,
    scope: Scope<'_>,
    jobs: &[&EmbedJob],
    counts: &[usize],
    members: &[usize],
) -> worker::Result<Vec<usize>> {
    let writer = store
        .writer(scope, false)
        .map_err(|e| worker::Error::RustError(e.to_string()))?;
    let db = writer.db();
    let mut statements = Vec::with_capacity(members.len());
    for &i in members {
        let job = jobs[i];
        statements.push(
            db.prepare(
                "UPDATE messages SET chunk_count = ?4, embedding_status = 'done' \
                 WHERE id = ?1 AND conversation_id = ?2 AND site_id = ?3",
            )
            .bind(&[
                job.message_id.as_str().into(),
                job.conversation_id.as_str().into(),
                job.site_id.as_str().into(),
                JsValue::from_f64(counts[i] as f64),
            ])?,
        );
    }
    let results = db.batch(statements).await?;
    Ok(results
        .iter()
        .map(|r| r.meta().ok().flatten().and_then(|m| m.changes).unwrap_or(0))
        .collect())
}

async fn mark_failed(store: &D1Store, job: &IndexJob) -> worker::Result<()> {
    match job {
        IndexJob::Message(job) => {
            let scope = Scope::new(&job.site_id, &job.conversation_id);
            let writer = store
                .writer(scope, false)
                .map_err(|e| worker::Error::RustError(e.to_string()))?;
            writer
                .db()
                .prepare(
                    "UPDATE messages SET embedding_status = 'failed', \
                 metadata = json_set(metadata, '$.embed_failed', json('true')) \
                 WHERE id = ?1 AND conversation_id = ?2 AND site_id = ?3",
                )
                .bind(&[
                    job.message_id.as_str().into(),
                    job.conversation_id.as_str().into(),
                    job.site_id.as_str().into(),
                ])?
                .run()
                .await?;
        }
        IndexJob::Document {
            site_id,
            document_id,
        } => {
            store.db().prepare("UPDATE knowledge_documents SET index_status = 'failed' WHERE site_id = ?1 AND id = ?2")
                .bind(&[site_id.as_str().into(), document_id.as_str().into()])?
                .run()
                .await?;
        }
    }
    Ok(())
}

fn log(msg: &str, job: &IndexJob, attempt: u32, detail: &str) {
    let (site, subject) = job.describe();
    let line = serde_json::json!({
        "level": "warn",
        "msg": msg,
        "site": site,
        "subject": subject,
        "attempt": attempt,
        "detail": detail,
    });
    worker::console_log!("{line}");
}
