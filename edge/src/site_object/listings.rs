//! A rental site's listings in an object of their own: an instance of the site objects'
//! class named `listings/{site id}` (not the site's own, `{site id}`), which only ever gets
//! [`ListingsCall`]s. The model-written SQL runs there, so its database holds the site's
//! `rental_rows` and nothing else (the import flag is in the object's key-value storage,
//! which SQL cannot read). Even a statement that got past the validator reaches one site's
//! listings, never keys, conversations, the site's sessions, Q&A or logs, or another site's
//! rows; and it runs in a transaction that is always rolled back, so it cannot change them
//! either. (One class for both kinds of instance: a second class would cost the Worker its
//! own copy of the object glue for no isolation the name does not already give.)
//!
//! The Worker sends only the statement the validator Worker returned, wrapped in the
//! site's scoping CTEs (`templates::rental::listings`), with the site id, the row cap and
//! the user id bound. SQLite in an object has no statement timeout: a statement is bounded
//! by the validator's cost budget (the work it may do over at most 5,000 listings of each
//! kind, which [`ListingsCall::Upsert`] keeps true), by the bound `LIMIT` (at most the row
//! cap + 1 rows are read back), and by the object's CPU limit per request (30 s): past it
//! the object is reset and the turn's records are unavailable.
//!
//! Before this object the listings lived in the D1 database `LISTINGS` (all rental sites
//! in one `rental_rows`): the first call imports the site's rows, then deletes them there.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use worker::{Env, SqlStorage, SqlStorageValue};

use super::{SiteCall, SiteObject, first, forget_imported, number, post, transaction};
use crate::error::ApiError;

/// The D1 database the listings lived in before (`migrations-listings/`).
const LEGACY: &str = "LISTINGS";

const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS rental_rows (
    site_id    TEXT NOT NULL,
    entity     TEXT NOT NULL CHECK (entity IN ('room', 'post', 'room_seeking_post')),
    id         TEXT NOT NULL,
    data       TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (site_id, entity, id)
);";

/// The storage key set once the site's rows of D1 are imported.
const IMPORTED: &str = "imported_d1";

/// Rows read from D1 per import statement.
const IMPORT_PAGE: usize = 5_000;

/// What the Worker asks a site's listings.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ListingsCall {
    /// `(sql, limit, user)`: run a validated, scoped statement with the site id (`?1`),
    /// `limit` (`?2`) and the user id (`?3`, when signed in) bound; at most `limit` rows are
    /// read back ([`Rows`]).
    Query(String, u32, Option<String>),
    /// `(entity, [(id, data)], now, cap)`: upsert listings of `entity`, refused whole past
    /// `cap` of them: whether it was refused.
    Upsert(String, Vec<(String, String)>, u64, u64),
    /// How many listings of each entity: `[[entity, n]]`.
    Counts,
    /// `(entity, id)`: deletes one listing: whether it existed.
    Delete(String, String),
}

/// A statement's result: its columns and rows, or why it failed (the database's message).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Rows(
    pub(crate) Vec<String>,
    pub(crate) Vec<Vec<Value>>,
    pub(crate) Option<String>,
);

/// Upserts `rows` of `entity`.
fn upsert(
    sql: &SqlStorage,
    site_id: &str,
    entity: &str,
    rows: &[(String, String)],
    now: u64,
) -> worker::Result<()> {
    for (id, data) in rows {
        sql.exec(
            "INSERT INTO rental_rows (site_id, entity, id, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (site_id, entity, id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
            vec![
                site_id.into(),
                entity.into(),
                id.as_str().into(),
                data.as_str().into(),
                SqlStorageValue::Integer(now as i64),
            ],
        )?;
    }
    Ok(())
}

fn counts(sql: &SqlStorage) -> worker::Result<Vec<(String, u64)>> {
    let rows = sql.exec(
        "SELECT entity, count(*) FROM rental_rows GROUP BY entity",
        None,
    )?;
    rows.raw()
        .map(|row| {
            let mut row = row?.into_iter();
            let entity = match row.next() {
                Some(SqlStorageValue::String(entity)) => entity,
                _ => String::new(),
            };
            Ok((entity, number(row.next()) as u64))
        })
        .collect()
}

/// A value SQLite returned, as JSON (a blob, which no listing holds, as `null`).
fn json_of(value: SqlStorageValue) -> Value {
    match value {
        SqlStorageValue::Integer(n) => n.into(),
        SqlStorageValue::Float(x) => x.into(),
        SqlStorageValue::String(s) => s.into(),
        SqlStorageValue::Boolean(b) => b.into(),
        SqlStorageValue::Null | SqlStorageValue::Blob(_) => Value::Null,
    }
}

/// Runs `query`, reading back at most `max_rows` rows.
fn read(sql: &SqlStorage, query: &str, params: Vec<SqlStorageValue>, max_rows: usize) -> Rows {
    let failed = |e: worker::Error| Rows(Vec::new(), Vec::new(), Some(e.to_string()));
    let cursor = match sql.exec(query, params) {
        Ok(cursor) => cursor,
        Err(e) => return failed(e),
    };
    let mut rows = Vec::new();
    for row in cursor.raw().take(max_rows) {
        match row {
            Ok(row) => rows.push(row.into_iter().map(json_of).collect()),
            Err(e) => return failed(e),
        }
    }
    Rows(cursor.column_names(), rows, None)
}

impl SiteObject {
    /// Serves a call of the listings' instance (after the site's rows of D1 are imported).
    pub(super) async fn listings(
        &self,
        site_id: &str,
        call: ListingsCall,
    ) -> Result<Value, ApiError> {
        if !self.ready.get() {
            self.sql().exec(SCHEMA, None)?;
            self.import_listings(site_id).await?;
            self.ready.set(true);
        }
        let sql = self.sql();
        Ok(match call {
            ListingsCall::Query(query, limit, user) => {
                // Read in a transaction that is always rolled back: whatever the statement
                // is, the listings are as they were.
                let result = Rc::new(RefCell::new(Rows::default()));
                let out = result.clone();
                let mut params = vec![site_id.into(), SqlStorageValue::from(i64::from(limit))];
                params.extend(user.map(SqlStorageValue::from));
                let _ = transaction(
                    &self.storage,
                    Box::new(move || {
                        *out.borrow_mut() = read(&sql, &query, params, limit as usize);
                        Err(worker::Error::RustError("read only".into()))
                    }),
                );
                let rows = result.take();
                serde_json::to_value(rows).map_err(worker::Error::from)?
            }
            ListingsCall::Upsert(entity, rows, now, cap) => {
                let over = Rc::new(Cell::new(false));
                let flag = over.clone();
                let site = site_id.to_string();
                let written = transaction(
                    &self.storage,
                    Box::new(move || {
                        upsert(&sql, &site, &entity, &rows, now)?;
                        let n = first(
                            &sql,
                            "SELECT count(*) FROM rental_rows WHERE entity = ?1",
                            vec![entity.as_str().into()],
                        )?;
                        if number(n) > cap as f64 {
                            flag.set(true);
                            return Err(worker::Error::RustError("over the cap".into()));
                        }
                        Ok(())
                    }),
                );
                if !over.get() {
                    written?;
                }
                json!(over.get())
            }
            ListingsCall::Counts => json!(counts(&sql)?),
            ListingsCall::Delete(entity, id) => {
                let gone = sql
                    .exec(
                        "DELETE FROM rental_rows WHERE entity = ?1 AND id = ?2 RETURNING id",
                        vec![entity.into(), id.into()],
                    )?
                    .raw()
                    .count();
                json!(gone > 0)
            }
        })
    }

    /// Once per site: its rows of D1's `rental_rows` (at most 5,000 of each kind) copied
    /// here in one transaction, then deleted there. A failed copy leaves the flag unset and
    /// is tried again by the next call (copies replace by key).
    async fn import_listings(&self, site_id: &str) -> Result<(), ApiError> {
        let storage = self.state.storage();
        if site_id.is_empty() || storage.get::<u64>(IMPORTED).await?.is_some() {
            return Ok(());
        }
        #[derive(Deserialize)]
        struct Row {
            entity: String,
            id: String,
            data: String,
            updated_at: f64,
        }
        // A deployment that never had the D1 listings (or has dropped them) has nothing to
        // import.
        let db = self.env.d1(LEGACY).ok();
        let mut all: Vec<Row> = Vec::new();
        let (mut entity, mut id) = (String::new(), String::new());
        while let Some(db) = &db {
            let page: Vec<Row> = db
                .prepare(
                    "SELECT entity, id, data, updated_at FROM rental_rows \
                     WHERE site_id = ?1 AND (entity, id) > (?2, ?3) ORDER BY entity, id LIMIT ?4",
                )
                .bind(&[
                    site_id.into(),
                    entity.as_str().into(),
                    id.as_str().into(),
                    (IMPORT_PAGE as f64).into(),
                ])?
                .all()
                .await?
                .results()?;
            let full = page.len() == IMPORT_PAGE;
            if let Some(last) = page.last() {
                (entity, id) = (last.entity.clone(), last.id.clone());
            }
            all.extend(page);
            if !full {
                break;
            }
        }
        let n = all.len();
        if let (true, Some(db)) = (n > 0, &db) {
            let sql = self.sql();
            let site = site_id.to_string();
            transaction(
                &self.storage,
                Box::new(move || {
                    for row in &all {
                        let one = [(row.id.clone(), row.data.clone())];
                        upsert(&sql, &site, &row.entity, &one, row.updated_at as u64)?;
                    }
                    Ok(())
                }),
            )?;
            forget_imported(db, site_id, "DELETE FROM rental_rows WHERE site_id = ?1").await;
        }
        storage.put(IMPORTED, n as u64).await?;
        Ok(())
    }
}

/// Sends `call` to `site_id`'s listings (the instance `listings/{site_id}`); its JSON
/// answer.
pub(crate) async fn call<T: serde::de::DeserializeOwned>(
    env: &Env,
    site_id: &str,
    call: ListingsCall,
) -> Result<T, ApiError> {
    let name = format!("listings/{site_id}");
    let answer = post(env, &name, site_id, &SiteCall::Listings(call)).await?;
    serde_json::from_str(&answer).map_err(|e| ApiError::Internal(e.into()))
}
