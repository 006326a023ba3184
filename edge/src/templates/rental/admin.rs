//! The `rental` merchant admin (secret key): bulk upsert and delete of listings, roles of
//! known users, and the learned Q&A (listed page by page for review; deleted with their
//! vector). The logical schema is set with `PATCH /admin/site` (`config.rental.schema`).

use concierge_core::boundary::VectorIndex;
use concierge_core::flows::rental::schema::MAX_ROWS_PER_TABLE;
use concierge_core::flows::rental::{QaRecord, qa_vector_id};
use serde::Deserialize;
use serde_json::{Map, Value};
use worker::{Env, Request, Response};

use super::listings::{self, UpsertError};
use super::settings::RentalSettings;
use super::site_data::{QaCursor, ask};
use crate::auth::SecretCaller;
use crate::bindings::vectors::Vectors;
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;
use crate::site_object::rental::RentalCall;

/// Listings per upsert.
const MAX_ROWS: usize = 1000;
/// Upsert bodies may be larger than the default cap.
const MAX_UPSERT_BYTES: usize = 2 * 1024 * 1024;

/// A listing id: 1 to 64 letters, digits, `-`, `_` or `.` (it goes into link paths).
fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Upsert {
    rows: Vec<Map<String, Value>>,
}

/// `PUT /admin/rental/{entity}`: upsert up to 1000 listings of one entity (all or nothing).
/// Each row has an `id` and the schema's columns (scalars; others absent = `NULL`).
pub(crate) async fn upsert(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    entity: &str,
) -> Result<Response, ApiError> {
    let schema = RentalSettings::schema_of(&caller.site);
    let Some(entity) = schema.entity(entity) else {
        return Err(ApiError::NotFound);
    };
    let body: Upsert =
        body::json_up_to(&mut req, MAX_UPSERT_BYTES, "The request body is over 2 MB.").await?;
    if body.rows.is_empty() || body.rows.len() > MAX_ROWS {
        return Err(ApiError::bad_request(
            "`rows` must hold 1 to 1000 listings.",
        ));
    }
    let mut rows = Vec::with_capacity(body.rows.len());
    for (i, row) in body.rows.into_iter().enumerate() {
        let id = match row.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        if !valid_id(&id) {
            return Err(ApiError::bad_request(format!(
                "rows[{i}].id must be 1 to 64 letters, digits, '-', '_' or '.'."
            )));
        }
        let mut data = Map::new();
        for (key, value) in row {
            if key == "id" {
                continue;
            }
            if !entity.columns.iter().any(|c| c.name == key) {
                return Err(ApiError::bad_request(format!(
                    "rows[{i}].{key} is not a column of {} (see config.rental.schema).",
                    entity.table()
                )));
            }
            if value.is_array() || value.is_object() {
                return Err(ApiError::bad_request(format!(
                    "rows[{i}].{key} must be a scalar."
                )));
            }
            data.insert(key, value);
        }
        rows.push((id, Value::Object(data).to_string()));
    }
    let upserted = rows.len();
    match listings::upsert(env, &caller.site.id, &entity.entity, rows, now_ms()).await {
        Ok(()) => {}
        Err(UpsertError::Full) => {
            return Err(ApiError::LimitReached(format!(
                "A site holds at most {MAX_ROWS_PER_TABLE} listings of {}; nothing was written. \
                 Delete listings (DELETE /admin/rental/{}/{{id}}) before adding more.",
                entity.table(),
                entity.entity
            )));
        }
        Err(UpsertError::Store(e)) => return Err(e),
    }
    Ok(Response::from_json(
        &serde_json::json!({"upserted": upserted}),
    )?)
}

/// `DELETE /admin/rental/{entity}/{id}`: 204, or 404 when there was no such listing.
pub(crate) async fn delete(
    env: &Env,
    caller: SecretCaller,
    entity: &str,
    id: &str,
) -> Result<Response, ApiError> {
    let schema = RentalSettings::schema_of(&caller.site);
    let Some(entity) = schema.entity(entity) else {
        return Err(ApiError::NotFound);
    };
    let existed = listings::delete(env, &caller.site.id, &entity.entity, id).await?;
    if !existed {
        return Err(ApiError::NotFound);
    }
    Ok(Response::empty()?.with_status(204))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserRole {
    user_id: String,
    role: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Users {
    users: Vec<UserRole>,
}

/// `PUT /admin/rental/users`: roles of known users (`TENANT`, `LANDLORD`, or `null` to
/// remove), up to 500 at once.
pub(crate) async fn put_users(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let body: Users = body::json(&mut req).await?;
    if body.users.is_empty() || body.users.len() > 500 {
        return Err(ApiError::bad_request("`users` must hold 1 to 500 entries."));
    }
    let mut roles = Vec::with_capacity(body.users.len());
    for (i, user) in body.users.into_iter().enumerate() {
        let id = user.user_id.trim();
        if id.is_empty() || id.chars().count() > 128 {
            return Err(ApiError::bad_request(format!(
                "users[{i}].user_id must be 1 to 128 characters."
            )));
        }
        let role = match user.role.as_deref() {
            None => None,
            Some(r @ ("TENANT" | "LANDLORD")) => Some(r.to_string()),
            Some(_) => {
                return Err(ApiError::bad_request(format!(
                    "users[{i}].role must be \"TENANT\", \"LANDLORD\" or null."
                )));
            }
        };
        roles.push((id.to_string(), role));
    }
    let updated = roles.len();
    ask::<()>(env, &caller.site.id, RentalCall::SetRoles(roles)).await?;
    Ok(Response::from_json(
        &serde_json::json!({"updated": updated}),
    )?)
}

/// `GET /admin/rental/qa?limit=N&before=C`: the learned Q&A, newest first, N a page
/// (default 50, at most 200): each with its question, SQL, mode, role, whether it was
/// learned context-free (only those are reused), when, and how often it was reused;
/// `next` is the cursor of the following page (`null` on the last).
pub(crate) async fn list_qa(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let mut limit = 50u32;
    let mut before = None;
    for (key, value) in req.url()?.query_pairs() {
        match key.as_ref() {
            "limit" => {
                limit = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=200).contains(n))
                    .ok_or_else(|| ApiError::bad_request("`limit` must be 1 to 200."))?;
            }
            "before" => {
                let cursor = QaCursor::parse(&value).ok_or_else(|| {
                    ApiError::bad_request("`before` must be a `next` cursor from this list.")
                })?;
                before = Some(cursor);
            }
            _ => {}
        }
    }
    let before = before.map(|c| (c.created_at, c.id));
    let qa: Vec<QaRecord> = ask(env, &caller.site.id, RentalCall::ListQa(limit, before)).await?;
    let next = match qa.last() {
        Some(last) if qa.len() == limit as usize => Value::from(QaCursor::after(last)),
        _ => Value::Null,
    };
    Ok(Response::from_json(
        &serde_json::json!({"qa": qa, "next": next}),
    )?)
}

/// `DELETE /admin/rental/qa/{id}`: forget a learned Q&A (row and vector); 204 or 404.
pub(crate) async fn delete_qa(
    env: &Env,
    caller: SecretCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let id_ = id.to_string();
    let existed: bool = ask(env, &caller.site.id, RentalCall::DeleteQa(id_)).await?;
    if !existed {
        return Err(ApiError::NotFound);
    }
    // The row is gone, so a lagging vector can no longer be reused; remove it too.
    if let Ok(vectors) = Vectors::for_site(env, &caller.site.id) {
        let _ = vectors.delete(&[qa_vector_id(id)]).await;
    }
    Ok(Response::empty()?.with_status(204))
}

/// `GET /admin/rental-schema`.
pub(crate) async fn schema(caller: SecretCaller) -> Result<Response, ApiError> {
    let schema = RentalSettings::schema_of(&caller.site);
    Ok(Response::from_json(
        &serde_json::json!({ "schema": schema }),
    )?)
}
