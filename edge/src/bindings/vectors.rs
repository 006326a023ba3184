//! The core's vector index: Cloudflare Vectorize in production, and a local path in the
//! site's own object for `wrangler dev`, where Vectorize cannot run.
//!
//! One site's index per handle ([`Vectors::for_site`]): every vector lives in its site's
//! space — on Vectorize the site's namespace (each upserted vector carries `namespace:
//! <site id>`, each query asks for it: a query only ever searches its own site's vectors,
//! whatever their metadata says), locally the site's object (`site_object::vectors`). The
//! handle refuses records and queries of another site. The metadata indexes and the
//! `site_id` filter stay, a second wall behind the namespace; `deleteByIds` takes ids
//! alone (Vectorize's ids are global to the index), and the local path deletes in the
//! handle's site, which every caller has at hand (the core's `delete` names only ids).
//!
//! workers-rs has no Vectorize wrapper: the binding is a small `extern` type
//! ([`VectorizeIndex`]: `upsert`, `query`, `deleteByIds`), called as methods, so the same
//! code reaches the real binding and the local double (tests/doubles/vectorize/, an RPC
//! service bound under the same name, which keeps namespaces apart as the service does).
//! The local path keeps the site's vectors in its object's SQLite, reads the rows a query
//! can match (filtered in SQL by source and conversation, and for `knowledge` by scope and
//! department), ranks them by cosine similarity there and applies the filter here — fine
//! for a development data set, behind the same trait, and running no statement on the
//! shared D1 (the vectors it held in D1's `local_vectors` move to the site's object on the
//! object's first call).
//!
//! Production vectors written before namespaces (in no namespace) are not returned by a
//! namespaced query: re-indexing writes them again, by the same ids, in the site's
//! namespace — a knowledge document's on its next change, or every document of a site
//! with `POST /admin/index`. A learned rental Q&A is learned again the next time it is
//! asked, and conversation memory of before the upgrade is not retrieved again; their old
//! vectors are still deleted by id with their conversation or Q&A. See the README's
//! retrieval section.
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

//!
//! The local path's storage and ranking is in `local`, the liveness check in `live`.

use concierge_core::boundary::{
    MAX_VECTOR_ID_BYTES, VectorIndex, VectorMatch, VectorQuery, VectorRecord,
};
use concierge_core::conversation::Metadata;
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{D1Database, Env};

mod limits;
mod live;
mod local;

pub(crate) use limits::MAX_DIMENSIONS;
use limits::{MAX_BATCH, MAX_TOP_K, check_filter, check_records, check_values};
use live::live;

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
    /// The site's object (`site_object::vectors`).
    Local,
}

/// One site's vector index, and the database that says which vectors are still live.
#[derive(Debug)]
pub(crate) struct Vectors {
    backend: Backend,
    db: D1Database,
    /// Where a conversation's messages are (`live`: its record, or its site's copy), and
    /// the site's object (the local path).
    env: Env,
    /// The site whose vectors these are: its Vectorize namespace, its object.
    site: String,
}

impl Vectors {
    /// `site_id`'s index: Vectorize unless the `RETRIEVAL_BACKEND` var says `local` (set by
    /// `make dev` and the tests) or the binding is missing.
    pub(crate) fn for_site(env: &Env, site_id: &str) -> worker::Result<Self> {
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
            env: env.clone(),
            site: site_id.to_string(),
        })
    }

    /// Refuses a vector or a query of another site than the handle's: it would be written
    /// to or searched in the wrong site's space.
    fn check_site(&self, site: &str) -> Result<(), ServiceError> {
        if site == self.site {
            return Ok(());
        }
        Err(ServiceError::new(
            ServiceErrorKind::Invalid,
            format!(
                "a vector of site `{site}` through site `{}`'s index",
                self.site
            ),
        ))
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
        for record in records {
            self.check_site(site_of(&record.metadata))?;
        }
        match &self.backend {
            Backend::Vectorize(binding) => {
                for batch in records.chunks(MAX_BATCH) {
                    let vectors: Vec<serde_json::Value> = batch
                        .iter()
                        .map(|r| {
                            serde_json::json!({"id": r.id, "values": r.values,
                                "namespace": self.site, "metadata": r.metadata})
                        })
                        .collect();
                    settle(binding.upsert(to_js(&vectors)?)).await?;
                }
                Ok(())
            }
            Backend::Local => self.local_upsert(records).await,
        }
    }

    async fn query(&self, query: &VectorQuery) -> Result<Vec<VectorMatch>, ServiceError> {
        // Every query the core makes is scoped to a site; refuse unscoped ones.
        let site = query.site_id().ok_or_else(|| {
            ServiceError::new(ServiceErrorKind::Invalid, "vector query without site_id")
        })?;
        self.check_site(site)?;
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
                    "namespace": self.site,
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
            Backend::Local => self.local_candidates(query).await?,
        };
        live(&self.db, &self.env, site, query.admit(matches)).await
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
            // Ids are global to the index: no namespace to name.
            Backend::Vectorize(binding) => {
                for batch in ids.chunks(MAX_BATCH) {
                    settle(binding.delete_by_ids(to_js(&batch)?)).await?;
                }
                Ok(())
            }
            Backend::Local => self.local_delete(&ids).await,
        }
    }
}
