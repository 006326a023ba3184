//! Vectorize's limits, applied by the Worker on both backends before anything is written
//! or asked (developers.cloudflare.com/vectorize/platform/limits/ and
//! /vectorize/reference/metadata-filtering/), so a local run refuses what production would
//! refuse, with an error that says why.

use concierge_core::boundary::{FilterCondition, MAX_VECTOR_ID_BYTES, VectorQuery, VectorRecord};
use concierge_core::error::{ServiceError, ServiceErrorKind};

/// The most matches Vectorize returns with metadata (`returnMetadata: "all"`).
pub(super) const MAX_TOP_K: usize = 20;

/// The most dimensions a Vectorize vector has.
pub(crate) const MAX_DIMENSIONS: usize = 1536;

/// The most metadata a Vectorize vector carries, in bytes of JSON.
const MAX_METADATA_BYTES: usize = 10 * 1024;

/// The most vectors (or ids) in one Vectorize write from a Worker.
pub(super) const MAX_BATCH: usize = 1000;

/// The deployment's commands: its `--property-name=` lines are the metadata indexes.
const SETUP: &str = include_str!("../../../../scripts/vectorize-setup.sh");

/// The fields with a metadata index (scripts/vectorize-setup.sh): the only ones a filter
/// may name.
fn indexed_fields() -> impl Iterator<Item = &'static str> {
    SETUP
        .lines()
        .filter(|line| {
            !line.trim_start().starts_with('#') && line.contains("create-metadata-index")
        })
        .filter_map(|line| line.split("--property-name=").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
}

/// Refuses what Vectorize would: a filter on a field without a metadata index.
pub(super) fn check_filter(query: &VectorQuery) -> Result<(), ServiceError> {
    for condition in &query.filter.conditions {
        let key = match condition {
            FilterCondition::Eq(key, _)
            | FilterCondition::Ne(key, _)
            | FilterCondition::In(key, _) => key,
        };
        if !indexed_fields().any(|field| field == key) {
            return Err(ServiceError::new(
                ServiceErrorKind::Invalid,
                format!(
                    "vector filter on `{key}`, which has no metadata index \
                     (scripts/vectorize-setup.sh lists the indexed fields)"
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a vector Vectorize would refuse: no values, more than [`MAX_DIMENSIONS`], or
/// not `dimensions` long when a batch has set them.
pub(super) fn check_values(values: &[f32], dimensions: Option<usize>) -> Result<(), ServiceError> {
    let invalid = |message: String| Err(ServiceError::new(ServiceErrorKind::Invalid, message));
    if values.is_empty() || values.len() > MAX_DIMENSIONS {
        return invalid(format!(
            "a vector of {} dimensions (Vectorize takes 1 to {MAX_DIMENSIONS}: set the site's \
             `llm.embed_dimensions` or use another embedding model)",
            values.len()
        ));
    }
    if let Some(expected) = dimensions
        && values.len() != expected
    {
        return invalid(format!(
            "vectors of {} and {expected} dimensions in one write",
            values.len()
        ));
    }
    if values.iter().any(|v| !v.is_finite()) {
        return invalid("a vector with a value that is not a finite number".into());
    }
    Ok(())
}

/// Refuses records Vectorize would refuse (ids, dimensions, metadata size).
pub(super) fn check_records(records: &[VectorRecord]) -> Result<(), ServiceError> {
    let dimensions = records.first().map(|r| r.values.len());
    for record in records {
        if record.id.is_empty() || record.id.len() > MAX_VECTOR_ID_BYTES {
            return Err(ServiceError::new(
                ServiceErrorKind::Invalid,
                format!("vector id over {MAX_VECTOR_ID_BYTES} bytes: {}", record.id),
            ));
        }
        check_values(&record.values, dimensions)?;
        let size = serde_json::to_string(&record.metadata).map_or(usize::MAX, |m| m.len());
        if size > MAX_METADATA_BYTES {
            return Err(ServiceError::new(
                ServiceErrorKind::Invalid,
                format!(
                    "vector {} has {size} bytes of metadata; Vectorize stores at most \
                     {MAX_METADATA_BYTES} (its text is a chunk too long to index)",
                    record.id
                ),
            ));
        }
    }
    Ok(())
}
