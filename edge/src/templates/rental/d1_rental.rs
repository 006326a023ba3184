//! The `rental` template's own rows in D1 (`DB`): roles of known users, learned Q&A, and
//! the seed endpoint's sessions. Every statement is scoped by site, with bound parameters.

use concierge_core::error::ServiceError;
use concierge_core::flows::rental::{QaRecord, RentalData, RentalFuture};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::bindings::d1_store::service_error;

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

/// The seed endpoint's sessions (`rental_sessions`), keyed by site and `{owner}:{id}`.
pub(crate) mod sessions {
    use serde::Deserialize;
    use wasm_bindgen::JsValue;
    use worker::D1Database;

    use crate::error::ApiError;

    /// A session's conversation and when it was last used (Unix ms).
    #[derive(Debug)]
    pub(crate) struct Session {
        pub conversation_id: String,
        pub last_active_at: u64,
    }

    /// A session idle since before a cutoff.
    #[derive(Debug, Deserialize)]
    pub(crate) struct Idle {
        pub site_id: String,
        pub session_id: String,
        pub conversation_id: String,
    }

    /// Session `key` of `site_id`, idle or not.
    pub(crate) async fn find(
        db: &D1Database,
        site_id: &str,
        key: &str,
    ) -> Result<Option<Session>, ApiError> {
        #[derive(Deserialize)]
        struct Row {
            conversation_id: String,
            last_active_at: f64,
        }
        let row: Option<Row> = db
            .prepare("SELECT conversation_id, last_active_at FROM rental_sessions WHERE site_id = ?1 AND session_id = ?2")
            .bind(&[site_id.into(), key.into()])?
            .first(None)
            .await?;
        Ok(row.map(|r| Session {
            conversation_id: r.conversation_id,
            last_active_at: r.last_active_at as u64,
        }))
    }

    /// Records session `key` of `site_id` on `conversation_id` as used at `now`.
    pub(crate) async fn touch(
        db: &D1Database,
        site_id: &str,
        key: &str,
        conversation_id: &str,
        now: u64,
    ) -> Result<(), ApiError> {
        db.prepare(
            "INSERT INTO rental_sessions (site_id, session_id, conversation_id, last_active_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (site_id, session_id) DO UPDATE SET last_active_at = excluded.last_active_at",
        )
        .bind(&[
            site_id.into(),
            key.into(),
            conversation_id.into(),
            JsValue::from_f64(now as f64),
        ])?
        .run()
        .await?;
        Ok(())
    }

    /// At most `limit` sessions of any site idle since before `cutoff`, oldest first.
    pub(crate) async fn idle(
        db: &D1Database,
        cutoff: u64,
        limit: u32,
    ) -> Result<Vec<Idle>, ApiError> {
        Ok(db
            .prepare(
                "SELECT site_id, session_id, conversation_id FROM rental_sessions \
                 WHERE last_active_at < ?1 ORDER BY last_active_at LIMIT ?2",
            )
            .bind(&[JsValue::from_f64(cutoff as f64), JsValue::from(limit)])?
            .all()
            .await?
            .results()?)
    }

    /// Deletes `session` if it is still idle since before `cutoff` (not used meanwhile).
    pub(crate) async fn delete_idle(
        db: &D1Database,
        session: &Idle,
        cutoff: u64,
    ) -> Result<(), ApiError> {
        db.prepare(
            "DELETE FROM rental_sessions WHERE site_id = ?1 AND session_id = ?2 AND last_active_at < ?3",
        )
        .bind(&[
            session.site_id.as_str().into(),
            session.session_id.as_str().into(),
            JsValue::from_f64(cutoff as f64),
        ])?
        .run()
        .await?;
        Ok(())
    }
}
