//! The embedder and vector index boundaries.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use crate::conversation::Metadata;
use crate::error::ServiceError;

/// Turns texts into embedding vectors (bge-m3-class, 1024-d, in production).
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait Embedder {
    /// One vector per text, in order.
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ServiceError>;
}

/// One vector with its id and metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRecord {
    /// Vector id: `{message_id}#chunk_{i}` or `{site_id}/{document_id}#chunk_{i}`.
    pub id: String,
    /// The embedding.
    pub values: Vec<f32>,
    /// Filterable metadata (`site_id`, `source`, `conversation_id`, …) and the chunk `text`.
    pub metadata: Metadata,
}

/// One condition of a [`MetadataFilter`].
#[derive(Debug, Clone, PartialEq)]
pub enum FilterCondition {
    /// `metadata[key] == value`.
    Eq(String, Value),
    /// `metadata[key] != value` (also true when the key is absent).
    Ne(String, Value),
    /// `metadata[key]` is one of the values.
    In(String, Vec<Value>),
}

/// A conjunction of metadata conditions, in the subset Cloudflare Vectorize supports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetadataFilter {
    /// All must hold.
    pub conditions: Vec<FilterCondition>,
}

impl MetadataFilter {
    /// The empty filter (matches everything).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key == value`.
    pub fn eq(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.conditions
            .push(FilterCondition::Eq(key.into(), value.into()));
        self
    }

    /// Adds `key != value`.
    pub fn ne(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.conditions
            .push(FilterCondition::Ne(key.into(), value.into()));
        self
    }

    /// Adds `key in values`.
    pub fn any_of(mut self, key: &str, values: Vec<Value>) -> Self {
        self.conditions
            .push(FilterCondition::In(key.into(), values));
        self
    }

    /// Whether `metadata` satisfies every condition.
    pub fn matches(&self, metadata: &Metadata) -> bool {
        self.conditions.iter().all(|condition| match condition {
            FilterCondition::Eq(key, value) => metadata.get(key) == Some(value),
            FilterCondition::Ne(key, value) => metadata.get(key) != Some(value),
            FilterCondition::In(key, values) => {
                metadata.get(key).is_some_and(|v| values.contains(v))
            }
        })
    }

    /// The filter in Vectorize's JSON syntax, e.g. `{"site_id":{"$eq":"s1"}}`.
    pub fn to_vectorize_json(&self) -> Value {
        let mut object = serde_json::Map::new();
        for condition in &self.conditions {
            let (key, op, value) = match condition {
                FilterCondition::Eq(k, v) => (k, "$eq", v.clone()),
                FilterCondition::Ne(k, v) => (k, "$ne", v.clone()),
                FilterCondition::In(k, vs) => (k, "$in", Value::Array(vs.clone())),
            };
            let entry = object
                .entry(key.clone())
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Value::Object(ops) = entry {
                ops.insert(op.into(), value);
            }
        }
        Value::Object(object)
    }
}

/// A nearest-neighbour query.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorQuery {
    /// The query embedding.
    pub vector: Vec<f32>,
    /// How many matches to return at most.
    pub top_k: usize,
    /// Which vectors are eligible.
    pub filter: MetadataFilter,
}

/// One match of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorMatch {
    /// The vector id.
    pub id: String,
    /// Similarity (cosine: higher is closer).
    pub score: f32,
    /// The vector's metadata.
    pub metadata: Metadata,
}

/// A vector index (Cloudflare Vectorize in production, a local fallback in `wrangler dev`).
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait VectorIndex {
    /// Inserts or replaces records by id (idempotent).
    async fn upsert(&self, records: &[VectorRecord]) -> Result<(), ServiceError>;

    /// The `top_k` records closest to `query.vector` among those matching `query.filter`,
    /// best first.
    async fn query(&self, query: &VectorQuery) -> Result<Vec<VectorMatch>, ServiceError>;

    /// Deletes records by id (ids that do not exist are ignored).
    async fn delete(&self, ids: &[String]) -> Result<(), ServiceError>;
}
