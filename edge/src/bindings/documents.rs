//! Knowledge documents in D1 (`knowledge_documents`): what the knowledge routes and the
//! indexing consumer read and write, and which vector ids each document owns.
//!
//! A document owns chunks `0..chunk_count` under [`retrieval::document_chunk_ids`] and,
//! from before migration 0007, chunks `0..legacy_chunk_count` under
//! [`retrieval::legacy_document_chunk_ids`]; the legacy ones are deleted with the document
//! or when it is next indexed.

use concierge_core::retrieval;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

/// The site's knowledge documents.
#[derive(Debug)]
pub(crate) struct Documents {
    db: D1Database,
}

/// A stored document, as the indexer reads it.
#[derive(Debug, Deserialize)]
pub(crate) struct StoredDocument {
    pub title: String,
    pub content: String,
    chunk_count: f64,
    legacy_chunk_count: f64,
}

/// The chunk counts of a stored document.
#[derive(Debug, Deserialize)]
struct Counts {
    chunk_count: f64,
    legacy_chunk_count: f64,
}

impl Counts {
    /// Every vector id the document owns.
    fn vector_ids(&self, site_id: &str, document_id: &str) -> Vec<String> {
        let mut ids =
            retrieval::document_chunk_ids(site_id, document_id, self.chunk_count as usize);
        ids.extend(retrieval::legacy_document_chunk_ids(
            site_id,
            document_id,
            self.legacy_chunk_count as usize,
        ));
        ids
    }
}

impl StoredDocument {
    /// The ids to delete after indexing this version into `chunks` chunks: chunks left
    /// over from a longer previous version (or written by an earlier round, `written`),
    /// and the legacy ids.
    pub(crate) fn stale_ids(
        &self,
        site_id: &str,
        document_id: &str,
        chunks: usize,
        written: usize,
    ) -> Vec<String> {
        let parent = retrieval::document_vector_parent(site_id, document_id);
        let old = (self.chunk_count as usize).max(written);
        let mut ids = retrieval::stale_chunk_ids(&parent, old, chunks);
        ids.extend(retrieval::legacy_document_chunk_ids(
            site_id,
            document_id,
            self.legacy_chunk_count as usize,
        ));
        ids
    }
}

impl Documents {
    pub(crate) fn new(db: D1Database) -> Self {
        Self { db }
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

    /// Create or replace the document; its indexing is pending.
    pub(crate) async fn put(
        &self,
        site_id: &str,
        id: &str,
        title: &str,
        content: &str,
        now_ms: u64,
    ) -> worker::Result<()> {
        self.db
            .prepare(
                "INSERT INTO knowledge_documents (site_id, id, title, content, updated_at, index_status) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 'pending') \
                 ON CONFLICT (site_id, id) DO UPDATE SET title = excluded.title, content = excluded.content, \
                 updated_at = excluded.updated_at, index_status = 'pending'",
            )
            .bind(&[
                site_id.into(),
                id.into(),
                title.into(),
                content.into(),
                JsValue::from_f64(now_ms as f64),
            ])?
            .run()
            .await?;
        Ok(())
    }

    /// Every vector id the document owns now; `None` when it does not exist.
    pub(crate) async fn vector_ids(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<Vec<String>>> {
        let counts = self
            .db
            .prepare(
                "SELECT chunk_count, legacy_chunk_count FROM knowledge_documents \
                 WHERE site_id = ?1 AND id = ?2",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<Counts>(None)
            .await?;
        Ok(counts.map(|c| c.vector_ids(site_id, id)))
    }

    /// Delete the document; the vector ids it owned at that moment, or `None` when it did
    /// not exist.
    pub(crate) async fn delete(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<Vec<String>>> {
        let counts = self
            .db
            .prepare(
                "DELETE FROM knowledge_documents WHERE site_id = ?1 AND id = ?2 \
                 RETURNING chunk_count, legacy_chunk_count",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<Counts>(None)
            .await?;
        Ok(counts.map(|c| c.vector_ids(site_id, id)))
    }

    /// The document's stored version, for indexing.
    pub(crate) async fn load(
        &self,
        site_id: &str,
        id: &str,
    ) -> worker::Result<Option<StoredDocument>> {
        self.db
            .prepare(
                "SELECT title, content, chunk_count, legacy_chunk_count FROM knowledge_documents \
                 WHERE site_id = ?1 AND id = ?2",
            )
            .bind(&[site_id.into(), id.into()])?
            .first::<StoredDocument>(None)
            .await
    }

    /// Record that `indexed` — the version read by [`Self::load`] — is indexed in `chunks`
    /// chunks (and its legacy vectors are gone), if it is still the stored version. `false`
    /// when the document was replaced or deleted meanwhile.
    pub(crate) async fn record_indexed(
        &self,
        site_id: &str,
        id: &str,
        indexed: &StoredDocument,
        chunks: usize,
    ) -> worker::Result<bool> {
        let result = self
            .db
            .prepare(
                "UPDATE knowledge_documents SET chunk_count = ?5, legacy_chunk_count = 0, \
                 index_status = 'done' \
                 WHERE site_id = ?1 AND id = ?2 AND title = ?3 AND content = ?4",
            )
            .bind(&[
                site_id.into(),
                id.into(),
                indexed.title.as_str().into(),
                indexed.content.as_str().into(),
                JsValue::from_f64(chunks as f64),
            ])?
            .run()
            .await?;
        Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0) > 0)
    }

    /// The site's documents with their indexing status.
    pub(crate) async fn list(&self, site_id: &str) -> worker::Result<Vec<serde_json::Value>> {
        self.db
            .prepare(
                "SELECT id, title, length(content) AS chars, chunk_count, index_status, updated_at \
                 FROM knowledge_documents WHERE site_id = ?1 ORDER BY id",
            )
            .bind(&[site_id.into()])?
            .all()
            .await?
            .results::<serde_json::Value>()
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
