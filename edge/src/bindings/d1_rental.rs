//! The `rental` template's own rows in D1 (`DB`): roles of known users, learned Q&A, and
//! the seed endpoint's sessions. Every statement is scoped by site, with bound parameters.

use concierge_core::boundary::{QaRecord, RentalData, RentalFuture};
use concierge_core::error::ServiceError;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use super::d1_store::service_error;

/// Roles and learned Q&A over D1.
#[derive(Debug)]
pub(crate) struct D1Rental {
    db: D1Database,
}

impl D1Rental {
    pub(crate) fn new(db: D1Database) -> Self {
        Self { db }
    }
}

#[derive(Debug, Deserialize)]
struct RoleRow {
    role: String,
}

#[derive(Debug, Deserialize)]
struct QaRow {
    id: String,
    question: String,
    sql: String,
    request_type: String,
    mode: Option<String>,
    created_at: f64,
    hits: f64,
    role: Option<String>,
    context_free: f64,
}

impl From<QaRow> for QaRecord {
    fn from(row: QaRow) -> Self {
        Self {
            id: row.id,
            question: row.question,
            sql: row.sql,
            request_type: row.request_type,
            mode: row.mode,
            created_at: row.created_at as u64,
            hits: row.hits as u64,
            role: row.role,
            context_free: row.context_free != 0.0,
        }
    }
}

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

const QA_COLUMNS: &str =
    "id, question, sql, request_type, mode, created_at, hits, role, context_free";

/// A page of the admin list: entries older than `before`, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QaCursor {
    /// The last listed entry's `created_at`.
    pub(crate) created_at: u64,
    /// The last listed entry's id.
    pub(crate) id: String,
}

impl QaCursor {
    /// `{created_at}.{id}`, as `next` carries it.
    pub(crate) fn after(record: &QaRecord) -> String {
        format!("{}.{}", record.created_at, record.id)
    }

    /// A cursor as `next` gave it; `None` when it is not one.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (created_at, id) = text.split_once('.')?;
        let valid_id = (1..=64).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        (valid_id && created_at.len() <= 16).then_some(())?;
        Some(Self {
            created_at: created_at.parse().ok()?,
            id: id.to_string(),
        })
    }
}

impl RentalData for D1Rental {
    fn role<'a>(&'a self, site_id: &'a str, user_id: &'a str) -> RentalFuture<'a, Option<String>> {
        Box::pin(async move {
            let row: Option<RoleRow> = self
                .db
                .prepare("SELECT role FROM rental_users WHERE site_id = ?1 AND user_id = ?2")
                .bind(&[site_id.into(), user_id.into()])
                .map_err(service_error)?
                .first(None)
                .await
                .map_err(service_error)?;
            Ok(row.map(|r| r.role))
        })
    }

    fn qa<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, Option<QaRecord>> {
        Box::pin(async move {
            let sql = format!("SELECT {QA_COLUMNS} FROM rental_qa WHERE site_id = ?1 AND id = ?2");
            let row: Option<QaRow> = self
                .db
                .prepare(sql)
                .bind(&[site_id.into(), id.into()])
                .map_err(service_error)?
                .first(None)
                .await
                .map_err(service_error)?;
            Ok(row.map(Into::into))
        })
    }

    fn save_qa<'a>(&'a self, site_id: &'a str, record: &'a QaRecord) -> RentalFuture<'a, ()> {
        Box::pin(async move {
            let mode = record.mode.as_deref().map_or(JsValue::NULL, JsValue::from);
            let role = record.role.as_deref().map_or(JsValue::NULL, JsValue::from);
            let params = [
                site_id.into(),
                record.id.as_str().into(),
                record.question.as_str().into(),
                record.sql.as_str().into(),
                record.request_type.as_str().into(),
                mode,
                num(record.created_at),
                role,
                num(u64::from(record.context_free)),
            ];
            self.db
                .prepare(
                    "INSERT INTO rental_qa (site_id, id, question, sql, request_type, mode, created_at, hits, \
                     role, context_free) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9)",
                )
                .bind(&params)
                .map_err(service_error)?
                .run()
                .await
                .map_err(service_error)?;
            Ok(())
        })
    }

    fn qa_hit<'a>(&'a self, site_id: &'a str, id: &'a str) -> RentalFuture<'a, ()> {
        Box::pin(async move {
            self.db
                .prepare("UPDATE rental_qa SET hits = hits + 1 WHERE site_id = ?1 AND id = ?2")
                .bind(&[site_id.into(), id.into()])
                .map_err(service_error)?
                .run()
                .await
                .map_err(service_error)?;
            Ok(())
        })
    }
}

impl D1Rental {
    /// Up to `limit` of the site's learned Q&A, newest first, after `before` (admin).
    pub(crate) async fn list_qa(
        &self,
        site_id: &str,
        limit: u32,
        before: Option<&QaCursor>,
    ) -> Result<Vec<QaRecord>, ServiceError> {
        let (sql, params) = match before {
            None => (
                format!(
                    "SELECT {QA_COLUMNS} FROM rental_qa WHERE site_id = ?1 \
                     ORDER BY created_at DESC, id DESC LIMIT ?2"
                ),
                vec![site_id.into(), JsValue::from(limit)],
            ),
            Some(cursor) => (
                format!(
                    "SELECT {QA_COLUMNS} FROM rental_qa WHERE site_id = ?1 \
                     AND (created_at < ?3 OR (created_at = ?3 AND id < ?4)) \
                     ORDER BY created_at DESC, id DESC LIMIT ?2"
                ),
                vec![
                    site_id.into(),
                    JsValue::from(limit),
                    num(cursor.created_at),
                    cursor.id.as_str().into(),
                ],
            ),
        };
        let rows: Vec<QaRow> = self
            .db
            .prepare(sql)
            .bind(&params)
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Deletes one learned Q&A; whether it existed.
    pub(crate) async fn delete_qa(&self, site_id: &str, id: &str) -> Result<bool, ServiceError> {
        let result = self
            .db
            .prepare("DELETE FROM rental_qa WHERE site_id = ?1 AND id = ?2")
            .bind(&[site_id.into(), id.into()])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        Ok(result
            .meta()
            .ok()
            .flatten()
            .and_then(|m| m.changes)
            .unwrap_or(0)
            > 0)
    }

    /// Sets the roles of known users (one batch); `None` removes a user's role.
    pub(crate) async fn set_roles(
        &self,
        site_id: &str,
        roles: &[(String, Option<String>)],
    ) -> Result<(), ServiceError> {
        let mut statements = Vec::with_capacity(roles.len());
        for (user, role) in roles {
            let statement = match role {
                Some(role) => self
                    .db
                    .prepare(
                        "INSERT INTO rental_users (site_id, user_id, role) VALUES (?1, ?2, ?3) \
                         ON CONFLICT (site_id, user_id) DO UPDATE SET role = excluded.role",
                    )
                    .bind(&[site_id.into(), user.as_str().into(), role.as_str().into()]),
                None => self
                    .db
                    .prepare("DELETE FROM rental_users WHERE site_id = ?1 AND user_id = ?2")
                    .bind(&[site_id.into(), user.as_str().into()]),
            };
            statements.push(statement.map_err(service_error)?);
        }
        self.db.batch(statements).await.map_err(service_error)?;
        Ok(())
    }
}
