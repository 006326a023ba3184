//! The local path (`wrangler dev`): vectors stored in D1 as base64, read by site, source
//! and conversation, and ranked by cosine similarity in the Worker.

use concierge_core::boundary::{FilterCondition, VectorMatch, VectorQuery};
use concierge_core::conversation::Metadata;
use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::super::d1_store::service_error;

use super::Vectors;

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
pub(super) fn encode_vector(values: &[f32]) -> String {
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

impl Vectors {
    /// The local rows `query` can match, scored: filtered in SQL by site, source and
    /// conversation (the columns the core filters on); [`VectorQuery::admit`] does the
    /// rest.
    pub(super) async fn local_candidates(
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
