//! The site's vectors on the local retrieval path (`RETRIEVAL_BACKEND=local`: `make dev`
//! and the tests, where Vectorize cannot run), in its object: the local counterpart of
//! the site's Vectorize namespace. Writing, ranking and deleting a site's vectors runs no
//! statement on the shared D1 and reads no other site's rows: the object is the site.
//!
//! Vectors are stored as base64 of their little-endian `f32`s beside their metadata (JSON
//! text), with the columns the core filters on (`source`, `conversation_id`, `scope`,
//! `department`) taken from it. A query reads the rows its filter can match, scores each
//! by cosine similarity and answers them all: the Worker applies the whole filter, the
//! order and `topK` ([`concierge_core::boundary::VectorQuery::admit`]), as on Vectorize's
//! answers.

use serde::{Deserialize, Serialize};
use worker::{D1Database, SqlStorage};

use super::{SiteObject, forget_imported};
use crate::error::ApiError;

pub(super) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS vectors (
    id              TEXT PRIMARY KEY,
    source          TEXT NOT NULL DEFAULT '',
    conversation_id TEXT,
    scope           TEXT,
    department      TEXT,
    metadata        TEXT NOT NULL,
    vector          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_by_source ON vectors(source, conversation_id);";

/// The `meta` key set once the site's rows of D1's `local_vectors` are imported.
pub(super) const IMPORTED: &str = "imported_local_vectors";

/// Rows read from D1 per import statement (a vector is a few KiB of base64).
const IMPORT_PAGE: usize = 500;

/// A vector call (`SiteCall::Vectors`). Tuples of text: JSON the Worker built.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum VectorsCall {
    /// Insert or replace these `[id, metadata (JSON text), vector (base64)]`, all or none;
    /// answers `null`.
    Upsert(Vec<(String, String, String)>),
    /// The rows a query can match, scored against its vector (base64, as stored:
    /// [`encode_vector`]): `[{"id", "score", "metadata"}, …]`, in no order.
    Query(String, LocalFilter),
    /// Delete the vectors of these ids (unknown ids are ignored), all or none; answers
    /// `null`.
    Delete(Vec<String>),
}

/// A query's conditions on the stored columns, `None` where it has none: `[source,
/// conversation_id, scopes, departments]`, the last two `IN (…)` lists as JSON arrays of
/// strings (a tuple: one decoder fewer in the Worker than named fields).
pub(crate) type LocalFilter = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A stored vector, as read for a query or an import.
#[derive(Deserialize)]
struct Row {
    id: String,
    metadata: String,
    vector: String,
}

/// Answers `call` (the Worker has checked the records and the query against Vectorize's
/// limits).
pub(super) fn serve(object: &SiteObject, call: VectorsCall) -> Result<String, ApiError> {
    let sql = object.sql();
    Ok(match call {
        VectorsCall::Upsert(rows) => {
            object.transaction(move || upsert(&sql, &rows))?;
            "null".into()
        }
        VectorsCall::Query(vector, filter) => candidates(&sql, &vector, filter)?,
        VectorsCall::Delete(ids) => {
            let ids = serde_json::to_string(&ids).map_err(worker::Error::from)?;
            sql.exec(
                "DELETE FROM vectors WHERE id IN (SELECT value FROM json_each(?1))",
                vec![ids.into()],
            )?;
            "null".into()
        }
    })
}

/// Inserts or replaces `rows` (`[id, metadata, vector]`), their filter columns read from
/// the metadata.
fn upsert(sql: &SqlStorage, rows: &[(String, String, String)]) -> worker::Result<()> {
    for (id, metadata, vector) in rows {
        sql.exec(
            "INSERT OR REPLACE INTO vectors \
             (id, source, conversation_id, scope, department, metadata, vector) \
             VALUES (?1, coalesce(json_extract(?2, '$.source'), ''), \
             json_extract(?2, '$.conversation_id'), json_extract(?2, '$.scope'), \
             json_extract(?2, '$.department'), ?2, ?3)",
            vec![
                id.as_str().into(),
                metadata.as_str().into(),
                vector.as_str().into(),
            ],
        )?;
    }
    Ok(())
}

/// The rows `query`'s conditions select, each scored against its vector: a JSON array of
/// `{"id", "score", "metadata"}` (the metadata as stored: JSON the Worker wrote).
fn candidates(sql: &SqlStorage, vector: &str, filter: LocalFilter) -> worker::Result<String> {
    let Some(wanted) = decode_vector(vector) else {
        return Ok("[]".into());
    };
    let (source, conversation_id, scopes, departments) = filter;
    let rows: Vec<Row> = sql
        .exec(
            "SELECT id, metadata, vector FROM vectors \
             WHERE (?1 IS NULL OR source = ?1) AND (?2 IS NULL OR conversation_id = ?2) \
             AND (?3 IS NULL OR scope IN (SELECT value FROM json_each(?3))) \
             AND (?4 IS NULL OR department IN (SELECT value FROM json_each(?4)))",
            vec![
                source.into(),
                conversation_id.into(),
                scopes.into(),
                departments.into(),
            ],
        )?
        .to_array()?;
    let mut out = String::from("[");
    for row in rows {
        let Some(values) = decode_vector(&row.vector) else {
            continue;
        };
        let score = cosine(&wanted, &values);
        let id = serde_json::to_string(&row.id).map_err(worker::Error::from)?;
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"id\":{id},\"score\":{},\"metadata\":{}}}",
            if score.is_finite() { score } else { 0.0 },
            row.metadata
        ));
    }
    out.push(']');
    Ok(out)
}

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
pub(crate) fn encode_vector(values: &[f32]) -> String {
    use base64::Engine;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A stored vector: base64 (see [`encode_vector`]) or, in rows written before it (D1's
/// `local_vectors`, imported as they were), a JSON array.
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

/// The site's rows of D1's `local_vectors` (where the local path kept every site's vectors
/// before this object), copied here page by page in one transaction, then deleted there;
/// how many. A `make dev` database keeps its indexed documents and memory through the
/// upgrade, without re-embedding them.
pub(super) async fn import(
    object: &SiteObject,
    db: &D1Database,
    site_id: &str,
) -> Result<usize, ApiError> {
    let mut rows = Vec::new();
    let mut after = String::new();
    loop {
        let page: Vec<Row> = db
            .prepare(
                "SELECT id, metadata, vector FROM local_vectors \
                 WHERE site_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
            )
            .bind(&[
                site_id.into(),
                after.as_str().into(),
                (IMPORT_PAGE as f64).into(),
            ])?
            .all()
            .await?
            .results()?;
        let full = page.len() == IMPORT_PAGE;
        if let Some(last) = page.last() {
            after = last.id.clone();
        }
        rows.extend(page.into_iter().map(|r| (r.id, r.metadata, r.vector)));
        if !full {
            break;
        }
    }
    let n = rows.len();
    if n > 0 {
        let sql = object.sql();
        object.transaction(move || upsert(&sql, &rows))?;
        forget_imported(db, site_id, "DELETE FROM local_vectors WHERE site_id = ?1").await;
    }
    Ok(n)
}
