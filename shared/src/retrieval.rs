//! Retrieval: indexing knowledge and conversation memory, and the top-K + re-rank query.
//!
//! Vectors carry their text and filterable metadata:
//!
//! | key               | knowledge chunk      | conversation chunk |
//! |-------------------|----------------------|--------------------|
//! | `site_id`         | ✓                    | ✓                  |
//! | `source`          | `"knowledge"`        | `"conversation"`   |
//! | `document_id`     | ✓ (and `title`)      |                    |
//! | `conversation_id` |                      | ✓                  |
//! | `message_id`      |                      | ✓                  |
//! | `text`            | ✓                    | ✓                  |
//!
//! Vector ids are `{parent}#chunk_{i}`, where the parent is the message id (message ids
//! are unique) or, for a knowledge document, `doc_` and 40 hex digits of a SHA-256 of its
//! site and document ids ([`document_vector_parent`]; document ids are unique per site
//! only). Upserts are idempotent, sites never overwrite each other's vectors, and every id
//! fits Vectorize's 64 bytes whatever the lengths of site and document ids
//! ([`MAX_VECTOR_ID_BYTES`]). Before migration 0007 a document's parent was
//! `{site_id}/{document_id}` itself ([`legacy_document_chunk_ids`]: still deleted with the
//! document, or when it is next indexed).
//!
//! A query runs twice — the site's knowledge, then this conversation's memory
//! (Vectorize filters cannot express "or") — and the union is re-ranked by
//! `0.75 × vector score + 0.25 × word overlap with the query`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::boundary::{
    Embedder, MAX_VECTOR_ID_BYTES, MetadataFilter, VectorIndex, VectorMatch, VectorQuery,
    VectorRecord,
};
use crate::conversation::{EmbedJob, Metadata, Scope};
use crate::error::Error;
use crate::normalize::{for_each_word, for_each_word_hash, word_hash};

/// Words per chunk: about 200–512 model tokens for Vietnamese or English text.
pub const CHUNK_WORDS: usize = 300;

/// The longest knowledge document, in characters (Unicode scalar values).
pub const MAX_DOCUMENT_CHARS: usize = 30_000;

/// The most chunks a document can have: words are separated by whitespace, so a text has
/// at most half as many words as characters (rounded up). Deleting a document's chunks
/// `0..MAX_DOCUMENT_CHUNKS` deletes every vector any version of it can have written.
pub const MAX_DOCUMENT_CHUNKS: usize = MAX_DOCUMENT_CHARS.div_ceil(2).div_ceil(CHUNK_WORDS);

/// Where a passage comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassageSource {
    /// The site's knowledge documents.
    Knowledge,
    /// Earlier messages of this conversation.
    Conversation,
}

/// One retrieved passage.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// The vector id.
    pub id: String,
    /// Knowledge or conversation memory.
    pub source: PassageSource,
    /// The document title (knowledge only).
    pub title: Option<String>,
    /// The chunk's text.
    pub text: String,
    /// The re-ranked score.
    pub score: f32,
}

/// How many passages to retrieve, and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalOptions {
    /// Passages kept after re-ranking.
    pub top_k: usize,
    /// Candidates fetched from each of the two queries.
    pub candidates: usize,
    /// Passages scoring below this after re-ranking are dropped.
    pub min_score: f32,
}

impl Default for RetrievalOptions {
    fn default() -> Self {
        Self {
            top_k: 4,
            candidates: 8,
            min_score: 0.0,
        }
    }
}

/// `{parent_id}#chunk_{i}`.
pub fn chunk_id(parent_id: &str, index: usize) -> String {
    format!("{parent_id}#chunk_{index}")
}

/// Hex digits of the hash in a document's vector parent (160 bits).
const DOCUMENT_HASH_HEX: usize = 40;

/// The vector-id parent of a knowledge document: `doc_` and the first 40 hex digits of
/// the SHA-256 of the site id's length (8 bytes, big-endian), the site id and the document
/// id — 44 bytes whatever the ids, and distinct for every pair of ids.
pub fn document_vector_parent(site_id: &str, document_id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update((site_id.len() as u64).to_be_bytes());
    hasher.update(site_id.as_bytes());
    hasher.update(document_id.as_bytes());
    let digest = hasher.finalize();
    let mut parent = String::with_capacity(4 + DOCUMENT_HASH_HEX);
    parent.push_str("doc_");
    for byte in digest.iter().take(DOCUMENT_HASH_HEX / 2) {
        let _ = write!(parent, "{byte:02x}");
    }
    parent
}

/// The ids of chunks `0..count` of a document.
pub fn document_chunk_ids(site_id: &str, document_id: &str, count: usize) -> Vec<String> {
    stale_chunk_ids(&document_vector_parent(site_id, document_id), count, 0)
}

/// The ids of chunks `chunks..MAX_DOCUMENT_CHUNKS` of a document: after indexing it into
/// `chunks` chunks, every id an earlier version (or an earlier document of the same id)
/// may have left — whatever was recorded about it.
pub fn document_stale_ids(site_id: &str, document_id: &str, chunks: usize) -> Vec<String> {
    stale_chunk_ids(
        &document_vector_parent(site_id, document_id),
        MAX_DOCUMENT_CHUNKS,
        chunks,
    )
}

/// The ids chunks `0..count` of a document had before migration 0007
/// (`{site_id}/{document_id}#chunk_{i}`), except those over [`MAX_VECTOR_ID_BYTES`]: no
/// index ever held them.
pub fn legacy_document_chunk_ids(site_id: &str, document_id: &str, count: usize) -> Vec<String> {
    (0..count)
        .map(|index| chunk_id(&format!("{site_id}/{document_id}"), index))
        .filter(|id| id.len() <= MAX_VECTOR_ID_BYTES)
        .collect()
}

/// The ids of chunks `new_count..old_count` of `parent_id`: what to delete after
/// re-indexing a text that shrank (or with `new_count = 0`, after deleting it).
pub fn stale_chunk_ids(parent_id: &str, old_count: usize, new_count: usize) -> Vec<String> {
    (new_count..old_count)
        .map(|index| chunk_id(parent_id, index))
        .collect()
}

/// Splits `text` into chunks of at most [`CHUNK_WORDS`] whitespace-separated words.
pub fn chunks(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .chunks(CHUNK_WORDS)
        .map(|chunk| chunk.join(" "))
        .filter(|chunk| !chunk.is_empty())
        .collect()
}

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
/// [`document_stale_ids`]: chunks an earlier, longer version left).
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

/// The top passages for `query`: the site's knowledge and this conversation's memory,
/// re-ranked. Chunks of messages in `skip_message_ids` (already in the prompt's history)
/// are left out.
pub async fn retrieve<E: Embedder, V: VectorIndex>(
    embedder: &E,
    index: &V,
    scope: Scope<'_>,
    query: &str,
    options: &RetrievalOptions,
    skip_message_ids: &[&str],
) -> Result<Vec<Passage>, Error> {
    let vector = embedder
        .embed(&[query])
        .await
        .map_err(Error::Embedder)?
        .into_iter()
        .next()
        .unwrap_or_default();
    let knowledge = VectorQuery {
        vector,
        top_k: options.candidates,
        filter: MetadataFilter::new()
            .eq("site_id", scope.site_id)
            .eq("source", "knowledge"),
    };
    let mut matches = index.query(&knowledge).await.map_err(Error::VectorIndex)?;
    let memory = VectorQuery {
        filter: MetadataFilter::new()
            .eq("site_id", scope.site_id)
            .eq("source", "conversation")
            .eq("conversation_id", scope.conversation_id),
        ..knowledge
    };
    matches.extend(index.query(&memory).await.map_err(Error::VectorIndex)?);
    Ok(rerank(query, matches, options, skip_message_ids))
}

/// Re-ranks matches by vector score and word overlap with the query; keeps the best
/// `options.top_k` distinct passages.
pub fn rerank(
    query: &str,
    matches: Vec<VectorMatch>,
    options: &RetrievalOptions,
    skip: &[&str],
) -> Vec<Passage> {
    // Distinct query words (two characters or more), as hashes.
    let mut query_words: Vec<u64> = Vec::new();
    for_each_word(query, |word| {
        let hash = word_hash(word.folded);
        if word.folded.chars().nth(1).is_some() && !query_words.contains(&hash) {
            query_words.push(hash);
        }
    });
    let mut passages: Vec<Passage> = Vec::new();
    for mut m in matches {
        let take =
            |metadata: &mut crate::conversation::Metadata, key: &str| match metadata.remove(key) {
                Some(Value::String(text)) if !text.is_empty() => Some(text),
                _ => None,
            };
        let Some(text) = take(&mut m.metadata, "text") else {
            continue;
        };
        let message_id = m.metadata.get("message_id").and_then(Value::as_str);
        if message_id.is_some_and(|id| skip.contains(&id)) || passages.iter().any(|p| p.id == m.id)
        {
            continue;
        }
        let overlap = if query_words.is_empty() {
            0.0
        } else {
            // Which query words occur in the passage: one bit per query word (words past
            // the 64th do not count).
            let mut seen = 0u64;
            for_each_word_hash(&text, |hash| {
                if let Some(i) = query_words.iter().take(64).position(|w| *w == hash) {
                    seen |= 1 << i;
                }
            });
            seen.count_ones() as f32 / query_words.len() as f32
        };
        let score = 0.75 * m.score + 0.25 * overlap;
        if score < options.min_score {
            continue;
        }
        let source = match m.metadata.get("source").and_then(Value::as_str) {
            Some("knowledge") => PassageSource::Knowledge,
            _ => PassageSource::Conversation,
        };
        let title = take(&mut m.metadata, "title");
        passages.push(Passage {
            id: m.id,
            source,
            title,
            text,
            score,
        });
    }
    passages.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    passages.truncate(options.top_k);
    passages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, score: f32, text: &str, message_id: Option<&str>) -> VectorMatch {
        let mut metadata = Metadata::new();
        metadata.insert("text".into(), text.into());
        metadata.insert(
            "source".into(),
            if message_id.is_some() {
                "conversation"
            } else {
                "knowledge"
            }
            .into(),
        );
        if let Some(id) = message_id {
            metadata.insert("message_id".into(), id.into());
        }
        VectorMatch {
            id: id.into(),
            score,
            metadata,
        }
    }

    #[test]
    fn chunk_ids_and_chunks() {
        assert_eq!(chunk_id("m1", 0), "m1#chunk_0");
        assert_eq!(
            chunk_id(&document_vector_parent("s1", "faq"), 2),
            "doc_738347d071e772cdc88cb25b911c61677c54c9b5#chunk_2"
        );
        assert_eq!(stale_chunk_ids("m1", 3, 1), ["m1#chunk_1", "m1#chunk_2"]);
        assert!(stale_chunk_ids("m1", 1, 3).is_empty());
        let long = "từ ".repeat(CHUNK_WORDS + 5);
        assert_eq!(chunks(&long).len(), 2);
        assert!(chunks("   ").is_empty());
    }

    #[test]
    fn every_document_vector_id_fits_vectorize() {
        let site = "site_0123456789abcdef";
        let longest = "a".repeat(40);
        for document in ["x", "faq", longest.as_str()] {
            let parent = document_vector_parent(site, document);
            assert_eq!(parent.len(), 44);
            // 30 000 characters make at most 15 000 words: 50 chunks of 300 words.
            for id in document_chunk_ids(site, document, 10_000) {
                assert!(id.len() <= MAX_VECTOR_ID_BYTES, "{id}");
            }
        }
        // Distinct per site and per document, and stable.
        assert_ne!(
            document_vector_parent(site, "faq"),
            document_vector_parent("site_other", "faq")
        );
        assert_ne!(
            document_vector_parent("a/b", "c"),
            document_vector_parent("a", "b/c")
        );
        assert_eq!(
            document_vector_parent(site, "faq"),
            document_vector_parent(site, "faq")
        );
    }

    #[test]
    fn the_longest_document_fits_the_chunk_bound() {
        assert_eq!(MAX_DOCUMENT_CHUNKS, 50);
        let densest = "a ".repeat(MAX_DOCUMENT_CHARS / 2);
        assert_eq!(densest.chars().count(), MAX_DOCUMENT_CHARS);
        assert_eq!(chunks(&densest).len(), MAX_DOCUMENT_CHUNKS);
        let stale = document_stale_ids("s1", "faq", 48);
        assert_eq!(stale.len(), 2);
        assert!(stale[1].ends_with("#chunk_49"));
    }

    #[test]
    fn legacy_ids_are_the_old_scheme_within_the_limit() {
        assert_eq!(
            legacy_document_chunk_ids("s1", "faq", 2),
            ["s1/faq#chunk_0", "s1/faq#chunk_1"]
        );
        let long = "a".repeat(40);
        assert!(legacy_document_chunk_ids("site_0123456789abcdef", &long, 3).is_empty());
    }

    #[test]
    fn rerank_prefers_word_overlap_skips_history_and_duplicates() {
        let options = RetrievalOptions {
            top_k: 2,
            ..RetrievalOptions::default()
        };
        let matches = vec![
            hit("a#chunk_0", 0.50, "Chính sách đổi trả trong 7 ngày", None),
            hit("b#chunk_0", 0.52, "Giờ mở cửa 8h-21h", None),
            hit("a#chunk_0", 0.50, "Chính sách đổi trả trong 7 ngày", None),
            hit("m1#chunk_0", 0.99, "đổi trả", Some("m1")),
        ];
        let passages = rerank("chính sách đổi trả", matches, &options, &["m1"]);
        let ids: Vec<&str> = passages.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["a#chunk_0", "b#chunk_0"]);
        assert_eq!(passages[0].source, PassageSource::Knowledge);
    }
}
