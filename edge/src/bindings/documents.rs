//! Knowledge documents in D1 (`knowledge_documents`): what the knowledge routes and the
//! indexing consumer read and write, and which vector ids each document owns.
//!
//! A document's vectors are its chunks under [`retrieval::document_chunk_ids`] — deleted
//! as the whole range a document can have ([`retrieval::MAX_DOCUMENT_CHUNKS`]), so no
//! version's vectors survive whatever was recorded — and, from before migration 0007,
//! chunks `0..legacy_chunk_count` under [`retrieval::legacy_document_chunk_ids`], deleted
//! with the document or when it is next indexed.

use concierge_core::retrieval;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use super::d1_caps::{self, CapError};
use super::d1_store::service_error;
use crate::site::caps::Caps;

/// The site's knowledge documents.
#[derive(Debug)]
pub(crate) struct Documents {
    db: D1Database,
    /// Where whether the site has indexed knowledge is remembered (`site_knowledge`).
    kv: Option<worker::kv::KvStore>,
}

/// A stored document, as the indexer reads it.
#[derive(Debug, Deserialize)]
pub(crate) struct StoredDocument {
    pub title: String,
    pub content: String,
    legacy_chunk_count: f64,
    #[serde(default = "public")]
    scope: String,
    #[serde(default = "general")]
    department: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    source_created_at: Option<String>,
    #[serde(default = "rag")]
    source_type: String,
}

fn public() -> String {
    "public".into()
}
fn general() -> String {
    "general".into()
}
fn rag() -> String {
    "rag".into()
}

/// A document's permission and provenance fields, as `PUT /admin/knowledge/{id}` sets them.
#[derive(Debug, Clone)]
pub(crate) struct DocumentFields {
    pub scope: String,
    pub department: String,
    pub url: Option<String>,
    pub source_created_at: Option<String>,
}

impl StoredDocument {
    /// The fields every chunk's vector metadata carries.
    pub(crate) fn meta(&self) -> retrieval::DocumentMeta {
        retrieval::DocumentMeta {
            scope: self.scope.clone(),
            department: self.department.clone(),
            url: self.url.clone(),
            created_at: self.source_created_at.clone(),
            source_type: self.source_type.clone(),
        }
    }

    /// The ids to delete after indexing this version into `chunks` chunks: any higher
    /// chunk, and the legacy ids.
    pub(crate) fn stale_ids(&self, site_id: &str, document_id: &str, chunks: usize) -> Vec<String> {
        let mut ids = retrieval::document_stale_ids(site_id, document_id, chunks);
        ids.extend(retrieval::legacy_document_chunk_ids(
            site_id,
            document_id,
            self.legacy_chunk_count as usize,
        ));
        ids
    }
}

/// What a stored document records about its vectors.
#[derive(Debug, Deserialize)]
struct Owned {
    legacy_chunk_count: f64,
}

impl Owned {
    /// Every vector id the document can own.
    fn vector_ids(&self, site_id: &str, document_id: &str) -> Vec<String> {
        let mut ids = retrieval::document_stale_ids(site_id, document_id, 0);
        ids.extend(retrieval::legacy_document_chunk_ids(
            site_id,
            document_id,
            self.legacy_chunk_count as usize,
        ));
        ids
    }
}

impl Documents {
    pub(crate) fn from_env(env: &worker::Env) -> worker::Result<Self> {
        Ok(Self {
            db: env.d1("DB")?,
            kv: env.kv("CONFIG").ok(),
        })
    }

    /// Whether the document exists.
    pub(crate) async fn exists(&self, site_id: &str, id: &str) -> worker::Result<bool> {
        Ok(self
            .db
            .prepare("SELECT 1 AS found FROM knowledge_documents WHERE site_id = ?1 AND id = ?2")
            .bind(&[site_id.into(), id.into()])?
            .first::<serde_json::Value>(None)
            .await?
            .is_some())
    }

    /// Create or replace the document (and bump the site's knowledge-base version, in the
    /// same batch); its indexing is pending. Refused whole ([`CapError::Over`]) when the
    /// site's documents would pass its caps.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn put(
        &self,
        site_id: &str,
        id: &str,
        title: &str,
        content: &str,
        fields: &DocumentFields,
        now_ms: u64,
        caps: &Caps,
    ) -> Result<(), CapError> {
        let optional = |v: &Option<String>| v.as_deref().map_or(JsValue::NULL, JsValue::from);
        let put = self
            .db
            .prepare(
                "INSERT INTO knowledge_documents (site_id, id, title, content, updated_at, index_status, \
                 scope, department, url, source_created_at, bytes) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?8, ?9, ?10) \
                 ON CONFLICT (site_id, id) DO UPDATE SET title = excluded.title, content = excluded.content, \
                 updated_at = excluded.updated_at, index_status = 'pending', scope = excluded.scope, \
                 department = excluded.department, url = excluded.url, \
                 source_created_at = excluded.source_created_at, bytes = excluded.bytes",
            )
            .bind(&[
                site_id.into(),
                id.into(),
                title.into(),
                content.into(),
                JsValue::from_f64(now_ms as f64),
                fields.scope.as_str().into(),
                fields.department.as_str().into(),
                optional(&fields.url),
                optional(&fields.source_created_at),
                JsValue::from_f64(content.len() as f64),
            ])
            .map_err(service_error)?;
        let bump = super::kb::bump(&self.db, site_id).map_err(service_error)?;
        let guard = d1_caps::documents_guard(&self.db, site_id, caps)?;
        self.db
            .batch(vec![put, bump, guard])
            .await
            .map_err(CapError::from_batch)?;
        Ok(())
    }

    /// Every vector id the document can own; `None` when it does not exist.
    pub(crate) async fn vector_ids(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<Vec<String>>> {
        let owned = self
            .db
            .prepare(
                "SELECT legacy_chunk_count FROM knowledge_documents WHERE site_id = ?1 AND id = ?2",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<Owned>(None)
            .await?;
        super::d1_store::site_knowledge::changed(self.kv.as_ref(), site_id).await;
        super::kb::forget(site_id);
        Ok(owned.map(|o| o.vector_ids(site_id, id)))
    }

    /// Delete the document; every vector id it could own at that moment, or `None` when it
    /// did not exist.
    pub(crate) async fn delete(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<Vec<String>>> {
        let owned = self
            .db
            .prepare(
                "DELETE FROM knowledge_documents WHERE site_id = ?1 AND id = ?2 \
                 RETURNING legacy_chunk_count",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<Owned>(None)
            .await?;
        super::d1_store::site_knowledge::changed(self.kv.as_ref(), site_id).await;
        super::kb::forget(site_id);
        Ok(owned.map(|o| o.vector_ids(site_id, id)))
    }

    /// The document's stored version, for indexing.
    pub(crate) async fn load(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<StoredDocument>> {
        self.db
            .prepare(
                "SELECT title, content, legacy_chunk_count, scope, department, url, \
                 source_created_at, source_type FROM knowledge_documents \
                 WHERE site_id = ?1 AND id = ?2",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<StoredDocument>(None)
            .await
    }

    /// Record that `indexed` — the version read by [`Self::load`] — is indexed in `chunks`
    /// chunks (and its legacy vectors are gone), with its catalog `vocabulary` (encoded
    /// terms), if it is still the stored version. `false` when the document was replaced or
    /// deleted meanwhile.
    pub(crate) async fn record_indexed(
        &self,
        site_id: &str,
        id: &str,
        indexed: &StoredDocument,
        chunks: usize,
        vocabulary: &str,
    ) -> worker::Result<bool> {
        let result = self
            .db
            .prepare(
                "UPDATE knowledge_documents SET chunk_count = ?5, legacy_chunk_count = 0, \
                 index_status = 'done', vocabulary = ?10 \
                 WHERE site_id = ?1 AND id = ?2 AND title = ?3 AND content = ?4 \
                 AND scope = ?6 AND department = ?7 AND url IS ?8 AND source_created_at IS ?9",
            )
            .bind(&[
                site_id.into(),
                id.into(),
                indexed.title.as_str().into(),
                indexed.content.as_str().into(),
                JsValue::from_f64(chunks as f64),
                indexed.scope.as_str().into(),
                indexed.department.as_str().into(),
                indexed.url.as_deref().map_or(JsValue::NULL, JsValue::from),
                indexed
                    .source_created_at
                    .as_deref()
                    .map_or(JsValue::NULL, JsValue::from),
                vocabulary.into(),
            ])?
            .run()
            .await?;
        Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0) > 0)
    }

    /// The site's documents with their indexing status.
    pub(crate) async fn list(&self, site_id: &str) -> worker::Result<Vec<serde_json::Value>> {
        self.db
            .prepare(
                "SELECT id, title, length(content) AS chars, chunk_count, index_status, updated_at, \
                 scope, department, url, source_created_at FROM knowledge_documents WHERE site_id = ?1 ORDER BY id",
            )
            .bind(&[site_id.into()])?
            .all()
            .await?
            .results::<serde_json::Value>()
    }

    /// One document with its content and indexing status (the console's editor).
    pub(crate) async fn get(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<serde_json::Value>> {
        self.db
            .prepare(
                "SELECT id, title, content, chunk_count, index_status, updated_at, scope, \
                 department, url, source_created_at FROM knowledge_documents \
                 WHERE site_id = ?1 AND id = ?2",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<serde_json::Value>(None)
            .await
    }

    /// The ids of the site's documents.
    pub(crate) async fn ids(&self, site_id: &str) -> worker::Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        Ok(self
            .db
            .prepare("SELECT id FROM knowledge_documents WHERE site_id = ?1 ORDER BY id")
            .bind(&[site_id.into()])?
            .all()
            .await?
            .results::<Row>()?
            .into_iter()
            .map(|r| r.id)
            .collect())
    }
}
