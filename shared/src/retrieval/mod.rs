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
//!
//! Indexing is in `index`, the query and re-rank in `query`; this file holds chunking
//! and vector ids.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use sha2::{Digest, Sha256};

use crate::boundary::MAX_VECTOR_ID_BYTES;

pub mod catalog;
mod index;
mod query;

pub use index::{DocumentMeta, index_document, index_document_with, index_message, index_messages};
pub use query::{rerank, retrieve};

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

#[cfg(test)]
mod tests;
