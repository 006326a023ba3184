//! Which matches are still live: their message or document exists on the site, and a
//! document still has the scope and department its vector was written with.

use concierge_core::boundary::VectorMatch;
use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use super::super::d1_store::service_error;

#[derive(Deserialize)]
struct Live {
    source: String,
    id: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    department: Option<String>,
}

/// Bound parameters per liveness statement (D1 allows 100).
const LIVE_IDS_PER_STATEMENT: usize = 90;

/// `matches` without those whose message or document no longer exists on `site` (or
/// that name neither): documents in the shared D1 (`db`), messages in their conversation's
/// record (in its object, `env`'s) or the site's copy. A batch on each that has any.
pub(super) async fn live(
    db: &D1Database,
    env: &worker::Env,
    site: &str,
    matches: Vec<VectorMatch>,
) -> Result<Vec<VectorMatch>, ServiceError> {
    let parent = |m: &VectorMatch| -> Option<(&'static str, String)> {
        let text = |key: &str| m.metadata.get(key).and_then(|v| v.as_str());
        match text("source")? {
            "knowledge" => Some(("knowledge", text("document_id")?.to_string())),
            "conversation" => Some(("conversation", text("message_id")?.to_string())),
            _ => None,
        }
    };
    // Learned `rental` Q&A: the template reads its row (site-scoped) before reusing it,
    // so a purged one is never reused; they pass here as they are.
    let (mut kept, matches): (Vec<VectorMatch>, Vec<VectorMatch>) = matches
        .into_iter()
        .partition(|m| m.metadata.get("source").and_then(|v| v.as_str()) == Some("rental_qa"));
    let wanted: Vec<(&'static str, String)> = matches.iter().filter_map(parent).collect();
    if wanted.is_empty() {
        return Ok(kept);
    }
    let records = if wanted.iter().any(|(s, _)| *s == "conversation") {
        Some(match crate::bindings::record::of(env) {
            Some(record) => record,
            None => crate::bindings::record::site(env, site).map_err(service_error)?,
        })
    } else {
        None
    };
    let mut present: Vec<Live> = Vec::new();
    for (source, table) in [
        ("knowledge", "knowledge_documents"),
        ("conversation", "messages"),
    ] {
        let db = match (source, &records) {
            ("conversation", Some(records)) => records,
            _ => db,
        };
        let mut statements = Vec::new();
        let ids: Vec<&str> = wanted
            .iter()
            .filter(|(s, _)| *s == source)
            .map(|(_, id)| id.as_str())
            .collect();
        for group in ids.chunks(LIVE_IDS_PER_STATEMENT) {
            let placeholders: Vec<String> =
                (0..group.len()).map(|i| format!("?{}", i + 2)).collect();
            // A document's current scope and department: its vectors carry the ones it
            // had when they were written.
            let access = if source == "knowledge" {
                "scope, department"
            } else {
                "NULL AS scope, NULL AS department"
            };
            let sql = format!(
                "SELECT '{source}' AS source, id, {access} FROM {table} \
                 WHERE site_id = ?1 AND id IN ({})",
                placeholders.join(", ")
            );
            let mut params = vec![JsValue::from(site)];
            params.extend(group.iter().map(|id| JsValue::from(*id)));
            statements.push(db.prepare(&sql).bind(&params).map_err(service_error)?);
        }
        if statements.is_empty() {
            continue;
        }
        for result in db.batch(statements).await.map_err(service_error)? {
            present.extend(result.results::<Live>().map_err(service_error)?);
        }
    }
    // A document's vectors count only while it still has the access they were written
    // with: a document made private is out of public answers before it is re-indexed
    // (the defaults are the columns' and the indexer's).
    let same = |m: &VectorMatch, key: &str, now: &Option<String>, default: &str| {
        let written = m
            .metadata
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or(default);
        written == now.as_deref().unwrap_or(default)
    };
    kept.extend(matches.into_iter().filter(|m| {
        parent(m).is_some_and(|(source, id)| {
            present.iter().any(|row| {
                row.source == source
                    && row.id == id
                    && (source != "knowledge"
                        || (same(m, "scope", &row.scope, "public")
                            && same(m, "department", &row.department, "general")))
            })
        })
    }));
    Ok(kept)
}
