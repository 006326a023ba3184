//! The core's vector index: Cloudflare Vectorize in production, and a local path over D1
//! for `wrangler dev`, where Vectorize cannot run.
//!
//! workers-rs has no Vectorize wrapper: the binding is a small `extern` type
//! ([`VectorizeIndex`]: `upsert`, `query`, `deleteByIds`), called as methods, so the same
//! code reaches the real binding and the local double (tests/doubles/vectorize/, an RPC
//! service bound under the same name). The local path keeps vectors in the
//! `local_vectors` table, reads the rows a query can match (filtered in SQL by site,
//! source and conversation, and for `knowledge` by scope and department) and ranks them
//! by cosine similarity in the Worker — fine for a development data set, and behind the
//! same trait.
//!
//! Both backends apply Vectorize's limits before anything is written or asked, so a local
//! run refuses what production would refuse, with an error that says why: ids of at most
//! 64 bytes, vectors of 1 to 1536 dimensions (one size per write), at most 10 KiB of
//! metadata per vector, filters only on the fields that have a metadata index (the
//! `--property-name` lines of scripts/vectorize-setup.sh, read at build time), and `topK`
//! capped at 20 (Vectorize's most with metadata). Writes go in batches of at most 1000.
//!
//! Whatever the backend answers, a query returns only what it may ([`VectorQuery::admit`]:
//! the query's site and filter, re-checked here) and only vectors whose message or
//! document still exists in D1 and, for a document, still has the scope and department
//! the vector was written with ([`live`]): deleted content is never retrieved, and a
//! document made private leaves public answers at once — even while Vectorize applies
//! the writes (they become visible after a delay) or the re-indexing waits in its queue.

use concierge_core::boundary::{
    FilterCondition, MAX_VECTOR_ID_BYTES, VectorIndex, VectorMatch, VectorQuery, VectorRecord,
};
use concierge_core::conversation::Metadata;
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{D1Database, Env};

use super::d1_store::service_error;

mod limits;

pub(crate) use limits::MAX_DIMENSIONS;
use limits::{MAX_BATCH, MAX_TOP_K, check_filter, check_records, check_values};

#[wasm_bindgen]
extern "C" {
    /// The `VECTORIZE` binding: a Vectorize index, or the local double standing in for it.
    #[derive(Debug, Clone)]
    type VectorizeIndex;

    #[wasm_bindgen(method, catch)]
    fn upsert(this: &VectorizeIndex, vectors: JsValue) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn query(
        this: &VectorizeIndex,
        vector: JsValue,
        options: JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(method, catch, js_name = deleteByIds)]
    fn delete_by_ids(this: &VectorizeIndex, ids: JsValue) -> Result<js_sys::Promise, JsValue>;
}

/// Where vectors live.
#[derive(Debug)]
enum Backend {
    /// The `VECTORIZE` binding.
    Vectorize(VectorizeIndex),
    /// The `local_vectors` D1 table.
    Local,
}

/// The vector index, and the database that says which vectors are still live.
#[derive(Debug)]
pub(crate) struct Vectors {
    backend: Backend,
    db: D1Database,
}

impl Vectors {
    /// Vectorize unless the `RETRIEVAL_BACKEND` var says `local` (set by `make dev` and the
    /// tests) or the binding is missing.
    pub(crate) fn from_env(env: &Env) -> worker::Result<Self> {
        let backend = env
            .var("RETRIEVAL_BACKEND")
            .map(|v| v.to_string())
            .unwrap_or_default();
        let binding = js_sys::Reflect::get(env, &"VECTORIZE".into())?;
        let backend = if backend == "local" || binding.is_undefined() {
            Backend::Local
        } else {
            Backend::Vectorize(binding.unchecked_into())
        };
        Ok(Self {
            backend,
            db: env.d1("DB")?,
        })
    }
}

/// A rejected binding call: its message (an `Error`'s own message is not enumerable, so
/// JSON would lose it), as Vectorize words it (`VECTOR_QUERY_ERROR (code = …): …`).
fn js_error(err: JsValue) -> ServiceError {
    let detail = match err.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.message()),
        None => err
            .as_string()
            .or_else(|| js_sys::JSON::stringify(&err).ok().map(String::from))
            .unwrap_or_else(|| "vectorize error".into()),
    };
    ServiceError::new(
        ServiceErrorKind::Unavailable,
        format!("vectorize: {detail}"),
    )
}

fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, ServiceError> {
    let text = serde_json::to_string(value)
        .map_err(|e| ServiceError::new(ServiceErrorKind::Invalid, e.to_string()))?;
    js_sys::JSON::parse(&text).map_err(js_error)
}

/// Awaits a binding call.
async fn settle(call: Result<js_sys::Promise, JsValue>) -> Result<JsValue, ServiceError> {
    JsFuture::from(call.map_err(js_error)?)
        .await
        .map_err(js_error)
}

fn site_of(metadata: &Metadata) -> &str {
    metadata
        .get("site_id")
        .and_then(|v| v.as_str())
        .unwrap_or("")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// A vector as stored locally: base64 of its little-endian `f32`s.
fn encode_vector(values: &[f32]) -> String {
    use base64::Engine;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A stored vector: base64 (see [`encode_vector`]) or, in rows written before it, a JSON
/// array.
fn decode_vector(stored: &str) -> Option<Vec<f32>> {
    use base64::Engine;
    if stored.starts_with('[') {
        return serde_json::from_str(stored).ok();
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(stored)
        .ok()?;
    Some(
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}

#[derive(Debug, Deserialize)]
struct LocalRow {
    id: String,
    metadata: String,
    vector: String,
}

#[derive(Debug, Deserialize)]
struct VectorizeMatches {
    #[serde(default)]
    matches: Vec<VectorizeMatch>,
}

#[derive(Debug, Deserialize)]
struct VectorizeMatch {
    id: String,
    score: f32,
    #[serde(default)]
    metadata: Option<Metadata>,
}

impl VectorIndex for Vectors {
    async fn upsert(&self, records: &[VectorRecord]) -> Result<(), ServiceError> {
        if records.is_empty() {
            return Ok(());
        }
        check_records(records)?;
        let db = &self.db;
        match &self.backend {
            Backend::Vectorize(binding) => {
                for batch in records.chunks(MAX_BATCH) {
                    let vectors: Vec<serde_json::Value> = batch
                        .iter()
                        .map(|r| serde_json::json!({"id": r.id, "values": r.values, "metadata": r.metadata}))
                        .collect();
                    settle(binding.upsert(to_js(&vectors)?)).await?;
                }
                Ok(())
            }
            Backend::Local => {
                let mut statements = Vec::with_capacity(records.len());
                for record in records {
                    let metadata =
                        serde_json::to_string(&record.metadata).unwrap_or_else(|_| "{}".into());
                    let text = |key: &str| record.metadata.get(key).and_then(|v| v.as_str());
                    statements.push(
                        db.prepare(
                            "INSERT INTO local_vectors (id, site_id, source, conversation_id, metadata, vector, \
                             scope, department) \
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
                             ON CONFLICT (id) DO UPDATE SET site_id = excluded.site_id, \
                             source = excluded.source, conversation_id = excluded.conversation_id, \
                             metadata = excluded.metadata, vector = excluded.vector, \
                             scope = excluded.scope, department = excluded.department",
                        )
                        .bind(&[
                            record.id.as_str().into(),
                            site_of(&record.metadata).into(),
                            text("source").unwrap_or_default().into(),
                            text("conversation_id").map_or(JsValue::NULL, JsValue::from),
                            metadata.into(),
                            encode_vector(&record.values).into(),
                            text("scope").map_or(JsValue::NULL, JsValue::from),
                            text("department").map_or(JsValue::NULL, JsValue::from),
                        ])
                        .map_err(service_error)?,
                    );
                }
                db.batch(statements)
                    .await
                    .map_err(service_error)
                    .map(|_| ())
            }
        }
    }

    async fn query(&self, query: &VectorQuery) -> Result<Vec<VectorMatch>, ServiceError> {
        // Every query the core makes is scoped to a site; refuse unscoped ones.
        let site = query.site_id().ok_or_else(|| {
            ServiceError::new(ServiceErrorKind::Invalid, "vector query without site_id")
        })?;
        check_filter(query)?;
        check_values(&query.vector, None)?;
        // Vectorize returns at most 20 matches with their metadata: ask for no more, on
        // either backend (the same answers locally as in production).
        let capped;
        let query = if query.top_k > MAX_TOP_K {
            capped = VectorQuery {
                top_k: MAX_TOP_K,
                ..query.clone()
            };
            &capped
        } else {
            query
        };
        let matches = match &self.backend {
            Backend::Vectorize(binding) => {
                let options = serde_json::json!({
                    "topK": query.top_k,
                    "returnMetadata": "all",
                    "filter": query.filter.to_vectorize_json(),
                });
                let result = settle(binding.query(to_js(&query.vector)?, to_js(&options)?)).await?;
                let text: String = js_sys::JSON::stringify(&result).map_err(js_error)?.into();
                let parsed: VectorizeMatches = serde_json::from_str(&text)
                    .map_err(|e| ServiceError::new(ServiceErrorKind::Other, e.to_string()))?;
                parsed
                    .matches
                    .into_iter()
                    .map(|m| VectorMatch {
                        id: m.id,
                        score: m.score,
                        metadata: m.metadata.unwrap_or_default(),
                    })
                    .collect()
            }
            Backend::Local => self.local_candidates(site, query).await?,
        };
        live(&self.db, site, query.admit(matches)).await
    }

    async fn delete(&self, ids: &[String]) -> Result<(), ServiceError> {
        // Longer ids were never accepted by any index (Vectorize refuses them; the local
        // path held some before migration 0007, so it deletes them too).
        let ids: Vec<&String> = match self.backend {
            Backend::Vectorize(_) => ids
                .iter()
                .filter(|id| id.len() <= MAX_VECTOR_ID_BYTES)
                .collect(),
            Backend::Local => ids.iter().collect(),
        };
        if ids.is_empty() {
            return Ok(());
        }
        match &self.backend {
            Backend::Vectorize(binding) => {
                for batch in ids.chunks(MAX_BATCH) {
                    settle(binding.delete_by_ids(to_js(&batch)?)).await?;
                }
                Ok(())
            }
            Backend::Local => {
                let statements = ids
                    .iter()
                    .map(|id| {
                        self.db
                            .prepare("DELETE FROM local_vectors WHERE id = ?1")
                            .bind(&[id.as_str().into()])
                    })
                    .collect::<worker::Result<Vec<_>>>()
                    .map_err(service_error)?;
                self.db
                    .batch(statements)
                    .await
                    .map_err(service_error)
                    .map(|_| ())
            }
        }
    }
}

impl Vectors {
    /// The local rows `query` can match, scored: filtered in SQL by site, source and
    /// conversation (the columns the core filters on); [`VectorQuery::admit`] does the
    /// rest.
    async fn local_candidates(
        &self,
        site: &str,
        query: &VectorQuery,
    ) -> Result<Vec<VectorMatch>, ServiceError> {
        let mut sql =
            String::from("SELECT id, metadata, vector FROM local_vectors WHERE site_id = ?1");
        let mut params = vec![JsValue::from(site)];
        for column in ["source", "conversation_id"] {
            if let Some(value) = query.filter.eq_str(column) {
                params.push(value.into());
                sql.push_str(&format!(" AND {column} = ?{}", params.len()));
            }
        }
        // `knowledge`'s permission filter, as Vectorize applies it with `$in`: the column
        // names are fixed here, the values bound.
        for column in ["scope", "department"] {
            let values = query.filter.conditions.iter().find_map(|c| match c {
                FilterCondition::In(key, values) if key == column => Some(values),
                _ => None,
            });
            if let Some(values) = values {
                let mut placeholders = Vec::new();
                for value in values.iter().filter_map(|v| v.as_str()).take(16) {
                    params.push(value.into());
                    placeholders.push(format!("?{}", params.len()));
                }
                if placeholders.is_empty() {
                    return Ok(Vec::new());
                }
                sql.push_str(&format!(" AND {column} IN ({})", placeholders.join(", ")));
            }
        }
        let rows = self
            .db
            .prepare(&sql)
            .bind(&params)
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results::<LocalRow>()
            .map_err(service_error)?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let metadata: Metadata = serde_json::from_str(&row.metadata).ok()?;
                let values = decode_vector(&row.vector)?;
                Some(VectorMatch {
                    id: row.id,
                    score: cosine(&query.vector, &values),
                    metadata,
                })
            })
            .collect())
    }
}

/// Bound parameters per liveness statement (D1 allows 100).
const LIVE_IDS_PER_STATEMENT: usize = 90;

/// `matches` without those whose message or document no longer exists on `site` (or
/// that name neither). One D1 batch.
async fn live(
    db: &D1Database,
    site: &str,
    matches: Vec<VectorMatch>,
) -> Result<Vec<VectorMatch>, ServiceError> {
    let parent = |m: &VectorMatch| -> Option<(&'static str, String)> {
        let text = |key: &str| m.metadata.get(key).and_then(|v| v.as_str());
        match text("source")? {
            "knowledge" => Some(("knowledge", text("document_id")?.to_string())),
            "conversation" => Some(("conversation", text("message_id")?.to_string())),
            _ => None,
        }
    };
    // Learned `rental` Q&A: the template reads its row (site-scoped) before reusing it,
    // so a purged one is never reused; they pass here as they are.
    let (mut kept, matches): (Vec<VectorMatch>, Vec<VectorMatch>) = matches
        .into_iter()
        .partition(|m| m.metadata.get("source").and_then(|v| v.as_str()) == Some("rental_qa"));
    let wanted: Vec<(&'static str, String)> = matches.iter().filter_map(parent).collect();
    if wanted.is_empty() {
        return Ok(kept);
    }
    let mut statements = Vec::new();
    for (source, table) in [
        ("knowledge", "knowledge_documents"),
        ("conversation", "messages"),
    ] {
        let ids: Vec<&str> = wanted
            .iter()
            .filter(|(s, _)| *s == source)
            .map(|(_, id)| id.as_str())
            .collect();
        for group in ids.chunks(LIVE_IDS_PER_STATEMENT) {
            let placeholders: Vec<String> =
                (0..group.len()).map(|i| format!("?{}", i + 2)).collect();
            // A document's current scope and department: its vectors carry the ones it
            // had when they were written.
            let access = if source == "knowledge" {
                "scope, department"
            } else {
                "NULL AS scope, NULL AS department"
            };
            let sql = format!(
                "SELECT '{source}' AS source, id, {access} FROM {table} \
                 WHERE site_id = ?1 AND id IN ({})",
                placeholders.join(", ")
            );
            let mut params = vec![JsValue::from(site)];
            params.extend(group.iter().map(|id| JsValue::from(*id)));
            statements.push(db.prepare(&sql).bind(&params).map_err(service_error)?);
        }
    }
    #[derive(Deserialize)]
    struct Live {
        source: String,
        id: String,
        #[serde(default)]
        scope: Option<String>,
        #[serde(default)]
        department: Option<String>,
    }
    let mut present: Vec<Live> = Vec::new();
    for result in db.batch(statements).await.map_err(service_error)? {
        present.extend(result.results::<Live>().map_err(service_error)?);
    }
    // A document's vectors count only while it still has the access they were written
    // with: a document made private is out of public answers before it is re-indexed
    // (the defaults are the columns' and the indexer's).
    let same = |m: &VectorMatch, key: &str, now: &Option<String>, default: &str| {
        let written = m
            .metadata
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or(default);
        written == now.as_deref().unwrap_or(default)
    };
    kept.extend(matches.into_iter().filter(|m| {
        parent(m).is_some_and(|(source, id)| {
            present.iter().any(|row| {
                row.source == source
                    && row.id == id
                    && (source != "knowledge"
                        || (same(m, "scope", &row.scope, "public")
                            && same(m, "department", &row.department, "general")))
            })
        })
    }));
    Ok(kept)
}
