//! Indexing: stored messages and knowledge documents embedded and upserted in chunks.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use crate::boundary::{Embedder, VectorIndex, VectorRecord};
use crate::conversation::{EmbedJob, Metadata};
use crate::error::Error;

use super::{chunk_id, chunks, document_vector_parent};

async fn embed_records<E: Embedder>(
    embedder: &E,
    parent_id: &str,
    text: &str,
    metadata: &Metadata,
) -> Result<Vec<VectorRecord>, Error> {
    let pieces = chunks(text);
    let inputs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let vectors = embedder.embed(&inputs).await.map_err(Error::Embedder)?;
    Ok(pieces
        .into_iter()
        .zip(vectors)
        .enumerate()
        .map(|(index, (piece, values))| {
            let mut metadata = metadata.clone();
            metadata.insert("text".into(), Value::String(piece));
            VectorRecord {
                id: chunk_id(parent_id, index),
                values,
                metadata,
            }
        })
        .collect())
}

/// Embeds and upserts one stored message (the embedding queue's job). Returns the number
/// of chunks indexed.
pub async fn index_message<E: Embedder, V: VectorIndex>(
    embedder: &E,
    index: &V,
    job: &EmbedJob,
) -> Result<usize, Error> {
    let counts = index_messages(embedder, index, &[job]).await?;
    Ok(counts.first().copied().unwrap_or(0))
}

/// Embeds and upserts several stored messages with one embedding call and one upsert.
/// Returns each job's number of chunks, in order.
pub async fn index_messages<E: Embedder, V: VectorIndex>(
    embedder: &E,
    index: &V,
    jobs: &[&EmbedJob],
) -> Result<Vec<usize>, Error> {
    let mut counts = Vec::with_capacity(jobs.len());
    let mut pieces: Vec<(&EmbedJob, usize, String)> = Vec::new();
    for &job in jobs {
        let chunks = chunks(&job.text);
        counts.push(chunks.len());
        pieces.extend(
            chunks
                .into_iter()
                .enumerate()
                .map(|(i, piece)| (job, i, piece)),
        );
    }
    if pieces.is_empty() {
        return Ok(counts);
    }
    let inputs: Vec<&str> = pieces.iter().map(|(_, _, piece)| piece.as_str()).collect();
    let vectors = embedder.embed(&inputs).await.map_err(Error::Embedder)?;
    let records: Vec<VectorRecord> = pieces
        .into_iter()
        .zip(vectors)
        .map(|((job, i, piece), values)| {
            let mut metadata = Metadata::new();
            metadata.insert("site_id".into(), job.site_id.clone().into());
            metadata.insert("source".into(), "conversation".into());
            metadata.insert("conversation_id".into(), job.conversation_id.clone().into());
            metadata.insert("message_id".into(), job.message_id.clone().into());
            metadata.insert("text".into(), Value::String(piece));
            VectorRecord {
                id: chunk_id(&job.message_id, i),
                values,
                metadata,
            }
        })
        .collect();
    index.upsert(&records).await.map_err(Error::VectorIndex)?;
    Ok(counts)
}

/// Embeds and upserts one knowledge document of a site under
/// [`document_vector_parent`]. Returns the number of chunks (then delete
/// [`document_stale_ids`](super::document_stale_ids): chunks an earlier, longer version left).
pub async fn index_document<E: Embedder, V: VectorIndex>(
    embedder: &E,
    index: &V,
    site_id: &str,
    document_id: &str,
    title: &str,
    text: &str,
) -> Result<usize, Error> {
    let mut metadata = Metadata::new();
    metadata.insert("site_id".into(), site_id.into());
    metadata.insert("source".into(), "knowledge".into());
    metadata.insert("document_id".into(), document_id.into());
    metadata.insert("title".into(), title.into());
    let parent = document_vector_parent(site_id, document_id);
    let records = embed_records(embedder, &parent, text, &metadata).await?;
    index.upsert(&records).await.map_err(Error::VectorIndex)?;
    Ok(records.len())
}

/// A knowledge document's permission and provenance fields (`knowledge`, TEMPLATES.md
/// §3.3), written into every chunk's metadata so retrieval can filter on them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentMeta {
    /// `public`, `internal` or `private`.
    pub scope: String,
    /// The owning department (`hr`, `it`, `general`, …).
    pub department: String,
    /// Where the document lives, when it has an address.
    pub url: Option<String>,
    /// The document's own date (ISO-8601), when known.
    pub created_at: Option<String>,
    /// `rag` by default.
    pub source_type: String,
}

impl Default for DocumentMeta {
    fn default() -> Self {
        Self {
            scope: "public".into(),
            department: "general".into(),
            url: None,
            created_at: None,
            source_type: "rag".into(),
        }
    }
}

/// [`index_document`] with the document's scope, department, URL and source date in its
/// chunks' metadata (`scope`, `department`, `url`, `created_at`, `source_type`).
pub async fn index_document_with<E: Embedder, V: VectorIndex>(
    embedder: &E,
    index: &V,
    site_id: &str,
    document_id: &str,
    title: &str,
    text: &str,
    meta: &DocumentMeta,
) -> Result<usize, Error> {
    let mut metadata = Metadata::new();
    metadata.insert("site_id".into(), site_id.into());
    metadata.insert("source".into(), "knowledge".into());
    metadata.insert("document_id".into(), document_id.into());
    metadata.insert("title".into(), title.into());
    metadata.insert("scope".into(), meta.scope.clone().into());
    metadata.insert("department".into(), meta.department.clone().into());
    metadata.insert("source_type".into(), meta.source_type.clone().into());
    if let Some(url) = &meta.url {
        metadata.insert("url".into(), url.clone().into());
    }
    if let Some(at) = &meta.created_at {
        metadata.insert("created_at".into(), at.clone().into());
    }
    let parent = document_vector_parent(site_id, document_id);
    let records = embed_records(embedder, &parent, text, &metadata).await?;
    index.upsert(&records).await.map_err(Error::VectorIndex)?;
    Ok(records.len())
}
