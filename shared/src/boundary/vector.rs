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

/// The longest vector id, in bytes (Cloudflare Vectorize's limit). Every index refuses
/// longer ids, so a local run fails where production would.
pub const MAX_VECTOR_ID_BYTES: usize = 64;

/// One vector with its id and metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRecord {
    /// Vector id (at most [`MAX_VECTOR_ID_BYTES`]): see [`crate::retrieval`].
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

    /// The value of the first `key == "value"` condition on a string.
    pub fn eq_str(&self, key: &str) -> Option<&str> {
        self.conditions
            .iter()
            .find_map(|condition| match condition {
                FilterCondition::Eq(k, Value::String(value)) if k == key => Some(value.as_str()),
                _ => None,
            })
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

impl VectorQuery {
    /// The site the query is scoped to (its `site_id == …` condition). Every query the core
    /// makes has one; an index refuses queries without.
    pub fn site_id(&self) -> Option<&str> {
        self.filter.eq_str("site_id")
    }

    /// What the query may return out of `matches`, whatever the index answered: only the
    /// matches whose metadata satisfies the whole filter (the site included), best first,
    /// at most `top_k`. Indexes apply it to their results rather than trusting a remote
    /// filter (a missing metadata index makes Vectorize ignore a condition).
    pub fn admit(&self, mut matches: Vec<VectorMatch>) -> Vec<VectorMatch> {
        matches.retain(|m| self.filter.matches(&m.metadata));
        matches.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        matches.truncate(self.top_k);
        matches
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, score: f32, site: &str, source: &str) -> VectorMatch {
        let mut metadata = Metadata::new();
        metadata.insert("site_id".into(), site.into());
        metadata.insert("source".into(), source.into());
        VectorMatch {
            id: id.into(),
            score,
            metadata,
        }
    }

    #[test]
    fn admit_keeps_only_the_query_site_and_filter_best_first() {
        let query = VectorQuery {
            vector: Vec::new(),
            top_k: 2,
            filter: MetadataFilter::new()
                .eq("site_id", "s1")
                .eq("source", "knowledge"),
        };
        assert_eq!(query.site_id(), Some("s1"));
        let mut no_site = hit("c", 0.99, "s1", "knowledge");
        no_site.metadata.remove("site_id");
        let matches = vec![
            hit("other-site", 0.99, "s2", "knowledge"),
            hit("memory", 0.98, "s1", "conversation"),
            no_site,
            hit("b", 0.50, "s1", "knowledge"),
            hit("a", 0.70, "s1", "knowledge"),
            hit("d", 0.10, "s1", "knowledge"),
        ];
        let ids: Vec<String> = query.admit(matches).into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn a_query_without_a_site_has_no_scope() {
        let query = VectorQuery {
            vector: Vec::new(),
            top_k: 2,
            filter: MetadataFilter::new().eq("source", "knowledge"),
        };
        assert_eq!(query.site_id(), None);
        let numeric = MetadataFilter::new().eq("site_id", 5);
        assert_eq!(numeric.eq_str("site_id"), None);
    }
}
