//! An in-memory [`VectorIndex`] (cosine similarity) and a deterministic hashing
//! [`Embedder`].

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::boundary::{
    Embedder, MAX_VECTOR_ID_BYTES, VectorIndex, VectorMatch, VectorQuery, VectorRecord,
};
use crate::error::{ServiceError, ServiceErrorKind};
use crate::normalize::for_each_word_hash;

/// √x for x ≥ 0 (no `std` here): a bit-level first guess refined by Newton's method.
fn sqrt(x: f32) -> f32 {
    if x <= 0.0 {
        return 0.0;
    }
    let mut guess = f32::from_bits((x.to_bits() >> 1) + 0x1fbd_1df5);
    for _ in 0..4 {
        guess = 0.5 * (guess + x / guess);
    }
    guess
}

/// The dot product, in eight independent lanes (so it vectorises; a single running sum
/// is latency-bound).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (chunks_a, chunks_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut lanes = [0f32; 8];
    for (x, y) in chunks_a.zip(chunks_b) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

fn norm(a: &[f32]) -> f32 {
    sqrt(dot(a, a))
}

/// The cosine similarity of two vectors (0 when either is zero or their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    scaled_cosine(a, norm(a), b, norm(b))
}

fn scaled_cosine(a: &[f32], norm_a: f32, b: &[f32], norm_b: f32) -> f32 {
    let norms = norm_a * norm_b;
    if a.len() != b.len() || norms == 0.0 {
        0.0
    } else {
        dot(a, b) / norms
    }
}

/// A stored vector and its norm.
#[derive(Debug, Clone)]
struct Stored {
    record: VectorRecord,
    norm: f32,
}

/// Vectors kept in a `RefCell`; queries scan them all.
#[derive(Debug, Default)]
pub struct MemoryVectorIndex {
    records: RefCell<BTreeMap<String, Stored>>,
    unavailable: Cell<bool>,
}

impl MemoryVectorIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.records.borrow().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids it holds, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.records.borrow().keys().cloned().collect()
    }

    /// Makes every later call fail with `Unavailable` (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }

    fn check(&self) -> Result<(), ServiceError> {
        if self.unavailable.get() {
            Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory index set unavailable",
            ))
        } else {
            Ok(())
        }
    }
}

impl VectorIndex for MemoryVectorIndex {
    async fn upsert(&self, records: &[VectorRecord]) -> Result<(), ServiceError> {
        self.check()?;
        if records.iter().any(|r| r.id.len() > MAX_VECTOR_ID_BYTES) {
            return Err(ServiceError::new(
                ServiceErrorKind::Invalid,
                "vector id over 64 bytes",
            ));
        }
        let mut stored = self.records.borrow_mut();
        for record in records {
            stored.insert(
                record.id.clone(),
                Stored {
                    record: record.clone(),
                    norm: norm(&record.values),
                },
            );
        }
        Ok(())
    }

    async fn query(&self, query: &VectorQuery) -> Result<Vec<VectorMatch>, ServiceError> {
        self.check()?;
        let records = self.records.borrow();
        // Score by reference; clone only the records returned.
        let query_norm = norm(&query.vector);
        let mut scored: Vec<(f32, &VectorRecord)> = records
            .values()
            .filter(|stored| query.filter.matches(&stored.record.metadata))
            .map(|stored| {
                let score = scaled_cosine(
                    &query.vector,
                    query_norm,
                    &stored.record.values,
                    stored.norm,
                );
                (score, &stored.record)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
        scored.truncate(query.top_k);
        let matches = scored
            .into_iter()
            .map(|(score, record)| VectorMatch {
                id: record.id.clone(),
                score,
                metadata: record.metadata.clone(),
            })
            .collect();
        Ok(matches)
    }

    async fn delete(&self, ids: &[String]) -> Result<(), ServiceError> {
        self.check()?;
        let mut stored = self.records.borrow_mut();
        for id in ids {
            stored.remove(id);
        }
        Ok(())
    }
}

/// A deterministic bag-of-words embedder: each folded word is hashed (FNV-1a) into one
/// of `dimensions` signed buckets; vectors are L2-normalised. Texts sharing words are
/// close. For tests and native tools, not for production relevance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashEmbedder {
    /// Vector length.
    pub dimensions: usize,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self { dimensions: 256 }
    }
}

impl HashEmbedder {
    /// The embedding of one text.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0f32; self.dimensions.max(1)];
        for_each_word_hash(text, |hash| {
            let bucket = (hash % vector.len() as u64) as usize;
            vector[bucket] += if hash >> 63 == 0 { 1.0 } else { -1.0 };
        });
        let norm = sqrt(vector.iter().map(|x| x * x).sum());
        if norm > 0.0 {
            vector.iter_mut().for_each(|x| *x /= norm);
        }
        vector
    }
}

impl Embedder for HashEmbedder {
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_is_accurate() {
        for x in [0.25f32, 1.0, 2.0, 10.0, 12345.0] {
            let root = sqrt(x);
            assert!((root * root - x).abs() / x < 1e-5, "{x}: {root}");
        }
        assert_eq!(sqrt(0.0), 0.0);
    }

    #[test]
    fn similar_texts_are_close() {
        let e = HashEmbedder::default();
        let policy = e.embed_one("chính sách đổi trả 7 ngày");
        assert!(cosine(&policy, &e.embed_one("chinh sach doi tra")) > 0.7);
        assert!(cosine(&policy, &e.embed_one("giờ mở cửa")) < 0.3);
        assert!((cosine(&policy, &policy) - 1.0).abs() < 1e-5);
    }
}
