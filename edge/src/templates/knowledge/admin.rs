//! Knowledge documents (secret key): `PUT`/`DELETE /admin/knowledge/{id}` and
//! `POST /admin/index`. Documents are stored in D1 and indexed in the background
//! through the queue; deleting one deletes its vectors.

use concierge_core::boundary::VectorIndex;
use concierge_core::retrieval::{self, MAX_DOCUMENT_CHARS};
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_caps::CapError;
use crate::bindings::documents::{DocumentFields, Documents};
use crate::bindings::queue::{self, IndexJob, QueueMessage};
use crate::bindings::vectors::Vectors;
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;
use crate::site::caps::Caps;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentBody {
    #[serde(default)]
    title: String,
    content: String,
    /// `public` (default), `internal` or `private`.
    #[serde(default)]
    scope: Option<String>,
    /// The owning department (default `general`).
    #[serde(default)]
    department: Option<String>,
    /// Where the document lives (http(s)).
    #[serde(default)]
    url: Option<String>,
    /// The document's own date, ISO-8601 (`source_created_at`).
    #[serde(default)]
    source_created_at: Option<String>,
}

impl DocumentBody {
    /// The checked permission and provenance fields.
    fn fields(&self) -> Result<DocumentFields, ApiError> {
        let scope = self.scope.clone().unwrap_or_else(|| "public".into());
        if !matches!(scope.as_str(), "public" | "internal" | "private") {
            return Err(ApiError::bad_request(
                "`scope` must be \"public\", \"internal\" or \"private\".",
            ));
        }
        let department = self.department.clone().unwrap_or_else(|| "general".into());
        if department.is_empty()
            || department.len() > 64
            || !department
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        {
            return Err(ApiError::bad_request(
                "`department` must be 1 to 64 letters, digits, '_' or '-'.",
            ));
        }
        if let Some(url) = &self.url
            && (url.len() > 2048 || !(url.starts_with("https://") || url.starts_with("http://")))
        {
            return Err(ApiError::bad_request("`url` must be an http(s) URL."));
        }
        if let Some(at) = &self.source_created_at
            && concierge_core::flows::knowledge::parse_iso_ms(at).is_none()
        {
            return Err(ApiError::bad_request(
                "`source_created_at` must be an ISO-8601 date or time.",
            ));
        }
        Ok(DocumentFields {
            scope,
            department,
            url: self.url.clone(),
            source_created_at: self.source_created_at.clone(),
        })
    }
}

/// Document ids: 1–40 of `[A-Za-z0-9_.-]` (vector ids carry a fixed-length hash of them).
fn valid_document_id(id: &str) -> bool {
    (1..=40).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// `PUT /admin/knowledge/{id}`: create or replace a document; 201 when new, 200 when
/// replaced; indexing is queued (202-style `index_status: "pending"`).
pub(crate) async fn put(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    document_id: &str,
) -> Result<Response, ApiError> {
    if !valid_document_id(document_id) {
        return Err(ApiError::bad_request(
            "Document ids are 1 to 40 letters, digits, '_', '-' or '.'.",
        ));
    }
    let doc: DocumentBody = body::json(&mut req).await?;
    if doc.content.trim().is_empty() || doc.content.chars().count() > MAX_DOCUMENT_CHARS {
        return Err(ApiError::bad_request(format!(
            "`content` must be 1 to {MAX_DOCUMENT_CHARS} characters."
        )));
    }
    let fields = doc.fields()?;
    let site_id = caller.site.id.as_str();
    let documents = Documents::from_env(env)?;
    let existed = documents.exists(site_id, document_id).await?;
    let caps = Caps::of(env);
    documents
        .put(
            site_id,
            document_id,
            doc.title.trim(),
            &doc.content,
            &fields,
            now_ms(),
            &caps,
        )
        .await
        .map_err(|e| match e {
            CapError::Over => caps.documents_full(),
            CapError::Store(e) => ApiError::store(e),
        })?;
    let job = IndexJob::Document {
        site_id: site_id.to_string(),
        document_id: document_id.to_string(),
    };
    queue::send(env, vec![QueueMessage::first(job)], 0).await?;
    let body = serde_json::json!({"id": document_id, "title": doc.title.trim(), "index_status": "pending",
        "scope": fields.scope, "department": fields.department, "url": fields.url,
        "source_created_at": fields.source_created_at});
    Ok(Response::from_json(&body)?.with_status(if existed { 200 } else { 201 }))
}

/// `DELETE /admin/knowledge/{id}`: the document and its vectors. The vectors go first: if
/// the index fails, the document stays (503) and can be deleted again, rather than leaving
/// vectors behind. Vectors an indexing job wrote in between are deleted after the row.
pub(crate) async fn delete(
    env: &Env,
    caller: SecretCaller,
    document_id: &str,
) -> Result<Response, ApiError> {
    let site_id = caller.site.id.as_str();
    let documents = Documents::from_env(env)?;
    let vectors = Vectors::for_site(env, site_id)?;
    let ids = documents
        .vector_ids(site_id, document_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    vectors
        .delete(&ids)
        .await
        .map_err(|e| ApiError::from(concierge_core::error::Error::VectorIndex(e)))?;
    let deleted = documents.delete(site_id, document_id).await?;
    crate::bindings::kb::bump_now(&env.d1("DB")?, site_id).await?;
    if let Some(owned) = deleted
        && let Err(err) = vectors.delete(&owned).await
    {
        // The document is gone; retrieval never returns vectors of a missing document.
        let line = serde_json::json!({
            "level": "warn", "msg": "document vectors left after delete",
            "site": site_id, "document": document_id, "detail": err.to_string(),
        });
        worker::console_warn!("{line}");
    }
    if let Err(err) = crate::bindings::catalog::refresh(env, &caller.site).await {
        let line = serde_json::json!({"level": "warn", "msg": "catalog not refreshed",
            "site": site_id, "detail": err.chain()});
        worker::console_warn!("{line}");
    }
    Ok(Response::empty()?.with_status(204))
}

/// `POST /admin/index`: re-index every knowledge document of the site (queued); with
/// `?id=<document id>`, that document only (404 when the site has none by that id).
pub(crate) async fn reindex(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let site_id = caller.site.id.as_str();
    let documents = Documents::from_env(env)?;
    let one = req
        .url()?
        .query_pairs()
        .find(|(key, _)| key == "id")
        .map(|(_, value)| value.to_string());
    let ids = match one {
        Some(id) if documents.exists(site_id, &id).await? => vec![id],
        Some(_) => return Err(ApiError::NotFound),
        None => documents.ids(site_id).await?,
    };
    let jobs: Vec<QueueMessage> = ids
        .iter()
        .map(|id| {
            QueueMessage::first(IndexJob::Document {
                site_id: site_id.to_string(),
                document_id: id.clone(),
            })
        })
        .collect();
    let count = jobs.len();
    for batch in jobs.chunks(100) {
        queue::send(env, batch.to_vec(), 0).await?;
    }
    Ok(Response::from_json(&serde_json::json!({"queued": count}))?.with_status(202))
}

/// `GET /admin/knowledge/{id}`: one document with its content.
pub(crate) async fn get(
    env: &Env,
    caller: SecretCaller,
    document_id: &str,
) -> Result<Response, ApiError> {
    let document = Documents::from_env(env)?
        .get(&caller.site.id, document_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Response::from_json(
        &serde_json::json!({"document": document}),
    )?)
}

/// `GET /admin/knowledge`: the site's documents with their indexing status.
pub(crate) async fn list(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let documents = Documents::from_env(env)?.list(&caller.site.id).await?;
    Ok(Response::from_json(
        &serde_json::json!({"documents": documents}),
    )?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    query: String,
    /// Also search this conversation's memory.
    #[serde(default)]
    conversation_id: Option<String>,
}

/// `POST /admin/search`: what retrieval finds for a query — the site's knowledge, and a
/// conversation's memory when one is named — re-ranked as the assistant sees it.
pub(crate) async fn search(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let body: SearchBody = body::json(&mut req).await?;
    if body.query.trim().is_empty() {
        return Err(ApiError::bad_request("`query` must not be empty."));
    }
    let services = crate::bindings::services::Services::new(env, &caller.site)?;
    let conversation = body.conversation_id.unwrap_or_default();
    let scope = concierge_core::conversation::Scope::new(&caller.site.id, &conversation);
    let options = concierge_core::retrieval::RetrievalOptions::default();
    let passages = retrieval::retrieve(
        &services.upstream,
        &services.vectors,
        scope,
        &body.query,
        &options,
        &[],
    )
    .await
    .map_err(ApiError::from)?;
    let results: Vec<serde_json::Value> = passages
        .iter()
        .map(|p| {
            serde_json::json!({
                "id": p.id,
                "source": match p.source {
                    retrieval::PassageSource::Knowledge => "knowledge",
                    retrieval::PassageSource::Conversation => "conversation",
                },
                "title": p.title,
                "text": p.text,
                "score": p.score,
            })
        })
        .collect();
    Ok(Response::from_json(
        &serde_json::json!({"results": results}),
    )?)
}

/// One uploaded log line.
#[derive(Debug, Deserialize)]
struct LogLine {
    #[serde(default)]
    id: Option<String>,
    ts: String,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    source: Option<String>,
    message: String,
}

/// The largest log upload, in bytes.
const MAX_LOG_BYTES: usize = 2 * 1024 * 1024;

/// The most log lines one upload replaces the site's logs with.
const MAX_LOG_LINES: usize = 5000;

/// `PUT /admin/logs`: replace the site's logs (`log_tool`) with a JSON-lines body, one
/// `{"ts", "level"?, "source"?, "message", "id"?}` per line.
pub(crate) async fn put_logs(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let bytes = body::capped(&mut req, MAX_LOG_BYTES, "The log upload is over 2 MB.").await?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("The log upload must be UTF-8 JSON lines."))?;
    let mut entries = Vec::new();
    for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let parsed: LogLine = serde_json::from_str(line).map_err(|_| {
            ApiError::bad_request(format!(
                "Line {}: each line must be a JSON object with `ts` and `message`.",
                n + 1
            ))
        })?;
        if concierge_core::flows::knowledge::parse_iso_ms(&parsed.ts).is_none()
            || parsed.message.chars().count() > 4000
        {
            return Err(ApiError::bad_request(format!(
                "Line {}: `ts` must be ISO-8601 and `message` at most 4000 characters.",
                n + 1
            )));
        }
        entries.push(concierge_core::boundary::LogEntry {
            id: parsed.id.unwrap_or_else(|| format!("{}", n + 1)),
            ts: parsed.ts,
            level: parsed.level.unwrap_or_else(|| "INFO".into()),
            source: parsed.source.unwrap_or_default(),
            message: parsed.message,
        });
    }
    if entries.len() > MAX_LOG_LINES {
        return Err(ApiError::bad_request(format!(
            "At most {MAX_LOG_LINES} log lines per upload."
        )));
    }
    let lines = entries.len();
    crate::site_object::logs::replace_logs(env, &caller.site.id, entries).await?;
    crate::bindings::kb::logs_replaced(&env.d1("DB")?, &caller.site.id, lines > 0).await?;
    Ok(Response::from_json(&serde_json::json!({"lines": lines}))?)
}
