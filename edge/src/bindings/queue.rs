//! Background indexing through the `EMBED_QUEUE` Cloudflare Queue (producer and consumer
//! in this Worker): stored messages (conversation memory) and knowledge documents.
//!
//! The consumer embeds the text's chunks and upserts them under idempotent ids
//! (`{message_id}#chunk_{i}`, `{site_id}/{document_id}#chunk_{i}`), deleting chunks left
//! over from a longer previous version. A failure is retried by re-sending the job with the
//! next attempt number and an exponential delay (`EMBED_RETRY_BASE_SECONDS` × 2^attempt);
//! after `EMBED_MAX_ATTEMPTS` a message is marked `embed_failed: true` in its metadata.

use std::collections::HashMap;

use concierge_core::boundary::{ConversationStore, VectorIndex};
use concierge_core::conversation::{EmbedJob, Scope};
use concierge_core::retrieval;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{BatchMessageBuilder, D1Database, Env, MessageBatch, MessageExt};

use super::d1_store::D1Store;
use super::upstream::Upstream;
use super::vectors::Vectors;
use crate::site;

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

fn var_u32(env: &Env, name: &str, default: u32) -> u32 {
    env.var(name)
        .ok()
        .and_then(|v| v.to_string().parse().ok())
        .unwrap_or(default)
}

/// The queue consumer.
pub(crate) async fn consume(batch: MessageBatch<QueueMessage>, env: &Env) -> worker::Result<()> {
    let max_attempts = var_u32(env, "EMBED_MAX_ATTEMPTS", 4).max(1);
    let base_delay = var_u32(env, "EMBED_RETRY_BASE_SECONDS", 2);
    let store = D1Store::new(env.d1("DB")?);
    let vectors = Vectors::from_env(env)?;
    // A batch usually holds one site's jobs: look each site's upstream up once.
    let mut upstreams: HashMap<String, Option<Upstream>> = HashMap::new();
    for message in batch.messages()? {
        let QueueMessage { job, attempt } = message.body().clone();
        let site_id = match &job {
            IndexJob::Message(job) => &job.site_id,
            IndexJob::Document { site_id, .. } => site_id,
        };
        if !upstreams.contains_key(site_id) {
            let upstream = match site::find_by_id(env, site_id).await {
                Ok(site) => site.map(|site| Upstream::resolve(&site.config.llm, env)),
                Err(err) => {
                    // Not cached: the next job of this site tries again.
                    log(
                        "index retry",
                        &job,
                        attempt,
                        &format!("site lookup: {err:?}"),
                    );
                    send(
                        env,
                        vec![QueueMessage {
                            job: job.clone(),
                            attempt,
                        }],
                        base_delay,
                    )
                    .await?;
                    message.ack();
                    continue;
                }
            };
            upstreams.insert(site_id.clone(), upstream);
        }
        // A site deleted meanwhile ends the job.
        let Some(Some(upstream)) = upstreams.get(site_id) else {
            message.ack();
            continue;
        };
        match run(&store, &vectors, upstream, &job).await {
            Ok(chunks) => log("indexed", &job, attempt, &format!("{chunks} chunks")),
            Err(detail) if attempt + 1 < max_attempts => {
                let delay = base_delay.saturating_mul(1 << attempt.min(10));
                log("index retry", &job, attempt, &detail);
                send(
                    env,
                    vec![QueueMessage {
                        job: job.clone(),
                        attempt: attempt + 1,
                    }],
                    delay,
                )
                .await?;
            }
            Err(detail) => {
                log("index failed", &job, attempt, &detail);
                mark_failed(store.db(), &job).await?;
            }
        }
        message.ack();
    }
    Ok(())
}

async fn run(
    store: &D1Store,
    vectors: &Vectors,
    upstream: &Upstream,
    job: &IndexJob,
) -> Result<usize, String> {
    // A conversation or document deleted meanwhile ends the job.
    let db = store.db();
    match job {
        IndexJob::Message(job) => {
            let scope = Scope::new(&job.site_id, &job.conversation_id);
            if store
                .load_conversation(scope)
                .await
                .map_err(|e| e.to_string())?
                .is_none()
            {
                return Ok(0);
            }
            let chunks = retrieval::index_message(upstream, vectors, job)
                .await
                .map_err(|e| format!("{e:?}"))?;
            set_chunks(
                db,
                "UPDATE messages SET chunk_count = ?4, embedding_status = 'done' \
                 WHERE id = ?1 AND conversation_id = ?2 AND site_id = ?3",
                &[
                    job.message_id.as_str().into(),
                    job.conversation_id.as_str().into(),
                    job.site_id.as_str().into(),
                ],
                chunks,
            )
            .await?;
            Ok(chunks)
        }
        IndexJob::Document {
            site_id,
            document_id,
        } => {
            #[derive(Deserialize)]
            struct Doc {
                title: String,
                content: String,
                chunk_count: f64,
            }
            let doc = db
                .prepare("SELECT title, content, chunk_count FROM knowledge_documents WHERE site_id = ?1 AND id = ?2")
                .bind(&[site_id.as_str().into(), document_id.as_str().into()])
                .map_err(|e| e.to_string())?
                .first::<Doc>(None)
                .await
                .map_err(|e| e.to_string())?;
            let Some(doc) = doc else { return Ok(0) };
            let chunks = retrieval::index_document(
                upstream,
                vectors,
                site_id,
                document_id,
                &doc.title,
                &doc.content,
            )
            .await
            .map_err(|e| format!("{e:?}"))?;
            let parent = format!("{site_id}/{document_id}");
            let stale: Vec<String> = (chunks..doc.chunk_count as usize)
                .map(|i| retrieval::chunk_id(&parent, i))
                .collect();
            vectors.delete(&stale).await.map_err(|e| e.to_string())?;
            set_chunks(
                db,
                "UPDATE knowledge_documents SET chunk_count = ?3, index_status = 'done' \
                 WHERE site_id = ?1 AND id = ?2",
                &[site_id.as_str().into(), document_id.as_str().into()],
                chunks,
            )
            .await?;
            Ok(chunks)
        }
    }
}

async fn set_chunks(
    db: &D1Database,
    sql: &str,
    params: &[JsValue],
    chunks: usize,
) -> Result<(), String> {
    let mut params = params.to_vec();
    params.push(JsValue::from_f64(chunks as f64));
    db.prepare(sql)
        .bind(&params)
        .map_err(|e| e.to_string())?
        .run()
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

async fn mark_failed(db: &D1Database, job: &IndexJob) -> worker::Result<()> {
    match job {
        IndexJob::Message(job) => {
            db.prepare(
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
            db.prepare("UPDATE knowledge_documents SET index_status = 'failed' WHERE site_id = ?1 AND id = ?2")
                .bind(&[site_id.as_str().into(), document_id.as_str().into()])?
                .run()
                .await?;
        }
    }
    Ok(())
}

fn log(msg: &str, job: &IndexJob, attempt: u32, detail: &str) {
    let (site, subject) = match job {
        IndexJob::Message(job) => (&job.site_id, format!("message {}", job.message_id)),
        IndexJob::Document {
            site_id,
            document_id,
        } => (site_id, format!("document {document_id}")),
    };
    let line = serde_json::json!({
        "level": if msg == "indexed" { "info" } else { "warn" },
        "msg": msg,
        "site": site,
        "subject": subject,
        "attempt": attempt,
        "detail": detail,
    });
    worker::console_log!("{line}");
}
