//! `analyst`'s data sets in the site's object (issue 47): connections and their rows
//! (tables [`SCHEMA`]), so an upload and every query over a data set run in the site's own
//! database and never on the shared D1. Rows are JSON objects typed at upload, stored as
//! JSON text and sent back as text: the object never parses them.
//!
//! An upload replaces a data set in one transaction. Its rows travel in chunks of about
//! [`CHUNK_BYTES`] (a bound value's limit is 2 MB); an upload larger than one call
//! ([`CALL_BYTES`]) first stages its earlier chunks (`data_staging`, by upload id), and the
//! call that replaces the data set moves them, inserts its own, checks the row count and
//! the site's caps, all or nothing. A staged upload that never finishes is cleared by the
//! next upload an hour later.

use std::cell::Cell;
use std::rc::Rc;

use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows, DataSets};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::flows::analyst::eval::to_json;
use concierge_core::flows::analyst::sql::{
    AggregateQuery, AggregateRow, SqlParam, aggregate_sql, group_value,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use worker::{D1Database, Env, Response, SqlStorage, SqlStorageValue};

use super::{SiteCall, SiteObject, call, forget_imported};
use crate::error::ApiError;
use crate::site::caps::Caps;

pub(super) use concierge_core::flows::analyst::sql::SCHEMA;

/// The `meta` key set once the site's data sets of the shared D1 are imported (its own:
/// an object that imported its logs and warranty records before data sets moved here
/// still imports them).
pub(super) const IMPORTED: &str = "imported_d1_data";

/// Bytes of row JSON bound per insert statement (a bound value is at most 2 MB).
const CHUNK_BYTES: usize = 600_000;
/// Bytes of row JSON per call to the object: a 32 MB upload is about 8 calls.
const CALL_BYTES: usize = 4_000_000;
/// Rows read from D1 per import statement.
const IMPORT_PAGE: usize = 5_000;
/// A staged upload older than this (ms) is abandoned.
const STAGED_FOR: u64 = 3_600_000;

/// What the Worker asks about data sets (inside [`SiteCall::Data`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DataCall {
    /// Stages rows of upload `upload` (the new data set's id); answers `{}`.
    Stage { upload: String, chunks: Vec<Chunk> },
    /// Replaces (or creates) the user's data set `set.name` with the staged rows and
    /// `chunks`, refused whole past `caps`; answers `{"over": bool}`.
    Replace {
        set: NewSet,
        chunks: Vec<Chunk>,
        caps: Caps,
    },
    /// The site's data sets (one user's when `user_id`), by user then name.
    List { user_id: Option<String> },
    /// Deletes the user's data set `name`; answers `{"deleted": bool}`.
    Delete { user_id: String, name: String },
    /// The first `limit` rows of a data set, if it is `user_id`'s (any user's when `None`).
    Rows {
        user_id: Option<String>,
        connection_id: String,
        limit: u32,
    },
    /// An `aggregate_data` statement ([`aggregate_sql`], written by the Worker): its rows.
    Aggregate { sql: String, params: Vec<Value> },
    /// `{"n", "rows", "bytes"}`: the site's data sets against its caps.
    Usage,
}

/// Rows `start..` of an upload, as a JSON array's text.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Chunk {
    start: u64,
    rows: String,
}

/// A data set as an upload replaces it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct NewSet {
    id: String,
    user_id: String,
    name: String,
    description: String,
    schema: String,
    row_count: u64,
    bytes: u64,
    source_url: Option<String>,
    now: u64,
}

/// A data set as stored (numbers as SQLite gives them).
#[derive(Debug, Serialize, Deserialize)]
struct ConnectionRow {
    id: String,
    user_id: String,
    name: String,
    description: String,
    schema: String,
    row_count: f64,
    source_url: Option<String>,
    updated_at: f64,
}

const COLUMNS: &str = "id, user_id, name, description, schema, row_count, source_url, updated_at";

/// Inserts `chunks` into `table` (`data_staging` under `key` with `at`, or `data_rows`
/// under connection `key`).
fn insert(
    sql: &SqlStorage,
    staged: Option<u64>,
    key: &str,
    chunks: &[Chunk],
) -> worker::Result<()> {
    for chunk in chunks {
        let mut bound = vec![
            key.into(),
            SqlStorageValue::from(chunk.start as i64),
            chunk.rows.as_str().into(),
        ];
        let statement = match staged {
            Some(at) => {
                bound.push(SqlStorageValue::from(at as i64));
                "INSERT OR REPLACE INTO data_staging (upload, row_index, data, at) \
                 SELECT ?1, ?2 + CAST(key AS INTEGER), value, ?4 FROM json_each(?3)"
            }
            None => {
                "INSERT INTO data_rows (connection_id, row_index, data) \
                 SELECT ?1, ?2 + CAST(key AS INTEGER), value FROM json_each(?3)"
            }
        };
        sql.exec(statement, bound)?;
    }
    Ok(())
}

#[derive(Deserialize)]
struct Totals {
    n: f64,
    rows: f64,
    bytes: f64,
}

fn totals(sql: &SqlStorage) -> worker::Result<Totals> {
    sql.exec(
        "SELECT count(*) AS n, coalesce(sum(row_count), 0) AS rows, \
         coalesce(sum(bytes), 0) AS bytes FROM data_connections",
        None,
    )?
    .one()
}

/// The rows `statement` selects (one `data` column) as one JSON array's text.
fn array(sql: &SqlStorage, statement: &str, bound: Vec<SqlStorageValue>) -> worker::Result<String> {
    let mut out = String::from("[");
    for row in sql.exec(statement, bound)?.raw() {
        if let Some(SqlStorageValue::String(data)) = row?.into_iter().next() {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&data);
        }
    }
    out.push(']');
    Ok(out)
}

/// Replaces the data set in one transaction (see the module's documentation); whether it
/// was refused for the caps.
fn replace(
    object: &SiteObject,
    set: NewSet,
    chunks: Vec<Chunk>,
    caps: Caps,
) -> worker::Result<bool> {
    let sql = object.sql();
    let over = Rc::new(Cell::new(false));
    let flag = over.clone();
    let upload = set.id.clone();
    let tx = sql.clone();
    let written = object.transaction(move || {
        let sql = tx;
        sql.exec(
            "INSERT INTO data_connections (id, user_id, name, description, schema, row_count, \
             source_url, created_at, updated_at, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9) \
             ON CONFLICT (user_id, name) DO UPDATE SET description = excluded.description, \
             schema = excluded.schema, row_count = excluded.row_count, \
             source_url = excluded.source_url, updated_at = excluded.updated_at, bytes = excluded.bytes",
            vec![
                set.id.as_str().into(),
                set.user_id.as_str().into(),
                set.name.as_str().into(),
                set.description.as_str().into(),
                set.schema.as_str().into(),
                SqlStorageValue::from(set.row_count as i64),
                set.source_url.clone().into(),
                SqlStorageValue::from(set.now as i64),
                SqlStorageValue::from(set.bytes as i64),
            ],
        )?;
        #[derive(Deserialize)]
        struct Id {
            id: String,
        }
        let Id { id } = sql
            .exec(
                "SELECT id FROM data_connections WHERE user_id = ?1 AND name = ?2",
                vec![set.user_id.as_str().into(), set.name.as_str().into()],
            )?
            .one()?;
        sql.exec(
            "DELETE FROM data_rows WHERE connection_id = ?1",
            vec![id.as_str().into()],
        )?;
        sql.exec(
            "INSERT INTO data_rows (connection_id, row_index, data) \
             SELECT ?1, row_index, data FROM data_staging WHERE upload = ?2",
            vec![id.as_str().into(), set.id.as_str().into()],
        )?;
        sql.exec(
            "DELETE FROM data_staging WHERE upload = ?1",
            vec![set.id.as_str().into()],
        )?;
        insert(&sql, None, &id, &chunks)?;
        #[derive(Deserialize)]
        struct N {
            n: f64,
        }
        let N { n } = sql
            .exec(
                "SELECT count(*) AS n FROM data_rows WHERE connection_id = ?1",
                vec![id.as_str().into()],
            )?
            .one()?;
        if n as u64 != set.row_count {
            return Err(worker::Error::RustError(format!(
                "an upload of {} rows arrived with {n}",
                set.row_count
            )));
        }
        let t = totals(&sql)?;
        if t.n as u64 > caps.data_sets
            || t.rows as u64 > caps.data_rows
            || t.bytes as u64 > caps.data_bytes
        {
            flag.set(true);
            return Err(worker::Error::RustError("over the caps".into()));
        }
        Ok(())
    });
    if written.is_err() {
        // Rolled back: what was staged for this upload is of no use now.
        sql.exec(
            "DELETE FROM data_staging WHERE upload = ?1",
            vec![upload.as_str().into()],
        )?;
    }
    if !over.get() {
        written?;
    }
    Ok(over.get())
}

/// Answers a [`DataCall`].
pub(super) fn serve(object: &SiteObject, call: DataCall) -> Result<Response, ApiError> {
    let sql = object.sql();
    let answer = match call {
        DataCall::Stage { upload, chunks } => {
            let now = crate::runtime::now_ms();
            if chunks.first().is_some_and(|c| c.start == 0) {
                sql.exec(
                    "DELETE FROM data_staging WHERE at < ?1",
                    vec![SqlStorageValue::from(now.saturating_sub(STAGED_FOR) as i64)],
                )?;
            }
            object.transaction(move || insert(&sql, Some(now), &upload, &chunks))?;
            serde_json::json!({})
        }
        DataCall::Replace { set, chunks, caps } => {
            serde_json::json!({ "over": replace(object, set, chunks, caps)? })
        }
        DataCall::List { user_id } => {
            let rows: Vec<ConnectionRow> = match user_id {
                Some(user) => sql.exec(
                    &format!(
                        "SELECT {COLUMNS} FROM data_connections WHERE user_id = ?1 ORDER BY name"
                    ),
                    vec![user.into()],
                ),
                None => sql.exec(
                    &format!("SELECT {COLUMNS} FROM data_connections ORDER BY user_id, name"),
                    None,
                ),
            }?
            .to_array()?;
            serde_json::to_value(rows).map_err(worker::Error::from)?
        }
        DataCall::Delete { user_id, name } => {
            let deleted = Rc::new(Cell::new(false));
            let flag = deleted.clone();
            object.transaction(move || {
                let find = "(SELECT id FROM data_connections WHERE user_id = ?1 AND name = ?2)";
                let bound = || vec![user_id.as_str().into(), name.as_str().into()];
                sql.exec(
                    &format!("DELETE FROM data_rows WHERE connection_id = {find}"),
                    bound(),
                )?;
                let cursor = sql.exec(
                    "DELETE FROM data_connections WHERE user_id = ?1 AND name = ?2",
                    bound(),
                )?;
                flag.set(cursor.rows_written() > 0);
                Ok(())
            })?;
            serde_json::json!({ "deleted": deleted.get() })
        }
        DataCall::Rows {
            user_id,
            connection_id,
            limit,
        } => {
            // The connection must be the user's: isolation is enforced here, in SQL.
            let text = array(
                &sql,
                "SELECT r.data FROM data_rows r JOIN data_connections c ON c.id = r.connection_id \
                 WHERE r.connection_id = ?1 AND (?2 IS NULL OR c.user_id = ?2) \
                 ORDER BY r.row_index LIMIT ?3",
                vec![
                    connection_id.into(),
                    user_id.into(),
                    SqlStorageValue::from(i64::from(limit)),
                ],
            )?;
            return Ok(Response::ok(text)?);
        }
        DataCall::Aggregate {
            sql: statement,
            params,
        } => {
            let bound = params
                .into_iter()
                .map(|p| match p {
                    Value::Number(n) => SqlStorageValue::from(n.as_f64().unwrap_or(0.0)),
                    Value::String(s) => s.into(),
                    _ => SqlStorageValue::Null,
                })
                .collect::<Vec<_>>();
            let rows: Vec<Value> = sql.exec(&statement, bound)?.to_array()?;
            Value::Array(rows)
        }
        DataCall::Usage => {
            let t = totals(&sql)?;
            serde_json::json!({ "n": t.n as u64, "rows": t.rows as u64, "bytes": t.bytes as u64 })
        }
    };
    Ok(Response::from_json(&answer)?)
}

/// The site's data sets of D1 (`data_connections`, `data_rows`: where they lived before
/// this object), copied here one data set at a time (its rows page by page, then the data
/// set itself, so a copy cut short shows nothing and is done again), then deleted there;
/// how many data sets.
pub(super) async fn import(
    object: &SiteObject,
    db: &D1Database,
    site_id: &str,
) -> Result<usize, ApiError> {
    #[derive(Deserialize)]
    struct Old {
        id: String,
        user_id: String,
        name: String,
        description: String,
        schema: String,
        row_count: f64,
        source_url: Option<String>,
        created_at: f64,
        updated_at: f64,
        bytes: f64,
    }
    #[derive(Deserialize)]
    struct OldRow {
        row_index: f64,
        data: String,
    }
    let sets: Vec<Old> = db
        .prepare(
            "SELECT id, user_id, name, description, schema, row_count, source_url, created_at, \
             updated_at, bytes FROM data_connections WHERE site_id = ?1",
        )
        .bind(&[site_id.into()])?
        .all()
        .await?
        .results()?;
    let n = sets.len();
    for set in sets {
        let mut after = -1.0;
        loop {
            let page: Vec<OldRow> = db
                .prepare(
                    "SELECT row_index, data FROM data_rows WHERE site_id = ?1 \
                     AND connection_id = ?2 AND row_index > ?3 ORDER BY row_index LIMIT ?4",
                )
                .bind(&[
                    site_id.into(),
                    set.id.as_str().into(),
                    after.into(),
                    (IMPORT_PAGE as f64).into(),
                ])?
                .all()
                .await?
                .results()?;
            let full = page.len() == IMPORT_PAGE;
            if let Some(last) = page.last() {
                after = last.row_index;
            }
            let (sql, id) = (object.sql(), set.id.clone());
            object.transaction(move || {
                for row in &page {
                    sql.exec(
                        "INSERT OR REPLACE INTO data_rows (connection_id, row_index, data) \
                         VALUES (?1, ?2, ?3)",
                        vec![
                            id.as_str().into(),
                            SqlStorageValue::from(row.row_index as i64),
                            row.data.as_str().into(),
                        ],
                    )?;
                }
                Ok(())
            })?;
            if !full {
                break;
            }
        }
        object.sql().exec(
            "INSERT OR REPLACE INTO data_connections (id, user_id, name, description, schema, \
             row_count, source_url, created_at, updated_at, bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            vec![
                set.id.into(),
                set.user_id.into(),
                set.name.into(),
                set.description.into(),
                set.schema.into(),
                SqlStorageValue::from(set.row_count as i64),
                set.source_url.into(),
                SqlStorageValue::from(set.created_at as i64),
                SqlStorageValue::from(set.updated_at as i64),
                SqlStorageValue::from(set.bytes as i64),
            ],
        )?;
    }
    if n > 0 {
        forget_imported(db, site_id, "DELETE FROM data_rows WHERE site_id = ?1").await;
        forget_imported(
            db,
            site_id,
            "DELETE FROM data_connections WHERE site_id = ?1",
        )
        .await;
    }
    Ok(n)
}

// ---- The Worker's side ------------------------------------------------------------------

/// A data set as the admin API lists it.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) connection: DataConnection,
    pub(crate) source_url: Option<String>,
    pub(crate) updated_at: u64,
}

impl From<ConnectionRow> for Listed {
    fn from(row: ConnectionRow) -> Self {
        let fields: Vec<DataField> = serde_json::from_str(&row.schema).unwrap_or_default();
        Self {
            connection: DataConnection {
                id: row.id,
                user_id: row.user_id,
                name: row.name,
                description: row.description,
                row_count: row.row_count as u64,
                fields,
            },
            source_url: row.source_url,
            updated_at: row.updated_at as u64,
        }
    }
}

/// What an upload stores.
pub(crate) struct Upload<'a> {
    pub(crate) new_id: &'a str,
    pub(crate) user_id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) fields: &'a [DataField],
    pub(crate) rows: &'a [Value],
    pub(crate) source_url: Option<&'a str>,
    pub(crate) now: u64,
}

/// `rows` as chunks of about [`CHUNK_BYTES`] of JSON each, and the bytes of their rows'
/// JSON text.
fn chunks(rows: &[Value]) -> (Vec<Chunk>, usize) {
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut start = 0usize;
    while start < rows.len() {
        let mut chunk = String::from("[");
        let mut end = start;
        while end < rows.len() && (end == start || chunk.len() < CHUNK_BYTES) {
            if end > start {
                chunk.push(',');
            }
            let before = chunk.len();
            chunk.push_str(&rows[end].to_string());
            bytes += chunk.len() - before;
            end += 1;
        }
        chunk.push(']');
        out.push(Chunk {
            start: start as u64,
            rows: chunk,
        });
        start = end;
    }
    (out, bytes)
}

fn unavailable(error: ApiError) -> ServiceError {
    ServiceError::new(ServiceErrorKind::Unavailable, error.to_string())
}

/// A site's data sets, in its object: what the admin API writes and `analyst` reads.
#[derive(Debug, Clone)]
pub(crate) struct SiteData {
    env: Env,
    site_id: String,
}

impl SiteData {
    pub(crate) fn new(env: &Env, site_id: &str) -> Self {
        Self {
            env: env.clone(),
            site_id: site_id.to_string(),
        }
    }

    async fn ask<T: serde::de::DeserializeOwned>(&self, data: DataCall) -> Result<T, ApiError> {
        self.ask_of(&self.site_id, data).await
    }

    async fn ask_of<T: serde::de::DeserializeOwned>(
        &self,
        site_id: &str,
        data: DataCall,
    ) -> Result<T, ApiError> {
        call(&self.env, site_id, &SiteCall::Data(data)).await
    }

    /// The site's data sets (optionally one user's), by user then name.
    pub(crate) async fn list(&self, user_id: Option<&str>) -> Result<Vec<Listed>, ApiError> {
        let rows: Vec<ConnectionRow> = self
            .ask(DataCall::List {
                user_id: user_id.map(str::to_string),
            })
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Replaces (or creates) the user's data set `name` with `rows`, atomically; `false`
    /// (nothing written) when the site's data sets would pass its caps.
    pub(crate) async fn replace(&self, up: &Upload<'_>, caps: Caps) -> Result<bool, ApiError> {
        let (mut chunks, bytes) = chunks(up.rows);
        // Every call but the last stages about `CALL_BYTES` of rows.
        let mut calls: Vec<Vec<Chunk>> = Vec::new();
        let mut size = usize::MAX;
        for chunk in chunks.drain(..) {
            if size >= CALL_BYTES {
                calls.push(Vec::new());
                size = 0;
            }
            size += chunk.rows.len();
            if let Some(call) = calls.last_mut() {
                call.push(chunk);
            }
        }
        let last = calls.pop().unwrap_or_default();
        for staged in calls {
            let stage = DataCall::Stage {
                upload: up.new_id.to_string(),
                chunks: staged,
            };
            self.ask::<Value>(stage).await?;
        }
        #[derive(Deserialize)]
        struct Answer {
            over: bool,
        }
        let set = NewSet {
            id: up.new_id.to_string(),
            user_id: up.user_id.to_string(),
            name: up.name.to_string(),
            description: up.description.to_string(),
            schema: serde_json::to_string(up.fields).unwrap_or_else(|_| "[]".into()),
            row_count: up.rows.len() as u64,
            bytes: bytes as u64,
            source_url: up.source_url.map(str::to_string),
            now: up.now,
        };
        let answer: Answer = self
            .ask(DataCall::Replace {
                set,
                chunks: last,
                caps,
            })
            .await?;
        Ok(!answer.over)
    }

    /// Deletes the user's data set `name` and its rows; whether it existed.
    pub(crate) async fn delete(&self, user_id: &str, name: &str) -> Result<bool, ApiError> {
        #[derive(Deserialize)]
        struct Answer {
            deleted: bool,
        }
        let answer: Answer = self
            .ask(DataCall::Delete {
                user_id: user_id.to_string(),
                name: name.to_string(),
            })
            .await?;
        Ok(answer.deleted)
    }

    /// The first `limit` rows of one of the site's data sets (admin preview).
    pub(crate) async fn preview(
        &self,
        connection_id: &str,
        limit: usize,
    ) -> Result<Vec<Value>, ApiError> {
        self.ask(DataCall::Rows {
            user_id: None,
            connection_id: connection_id.to_string(),
            limit: limit as u32,
        })
        .await
    }

    /// `(data sets, rows, bytes)` the site holds.
    pub(crate) async fn usage(&self) -> Result<(u64, u64, u64), ApiError> {
        #[derive(Deserialize)]
        struct Answer {
            n: u64,
            rows: u64,
            bytes: u64,
        }
        let a: Answer = self.ask(DataCall::Usage).await?;
        Ok((a.n, a.rows, a.bytes))
    }
}

impl DataSets for SiteData {
    fn aggregate<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        query: &'a AggregateQuery,
    ) -> DataFuture<'a, Option<Vec<AggregateRow>>> {
        Box::pin(async move {
            let Some((sql, params)) = aggregate_sql(query, connection_id, user_id) else {
                return Ok(None);
            };
            let params = params
                .into_iter()
                .map(|p| match p {
                    SqlParam::Text(t) => Value::String(t),
                    SqlParam::Number(n) => to_json(n),
                })
                .collect();
            #[derive(Deserialize)]
            struct Out {
                g: Value,
                t: Option<String>,
                v: Value,
                n: f64,
            }
            let rows: Vec<Out> = self
                .ask_of(site_id, DataCall::Aggregate { sql, params })
                .await
                .map_err(unavailable)?;
            let number = |v: Value| v.as_f64().map_or(v.clone(), to_json);
            Ok(Some(
                rows.into_iter()
                    .map(|r| AggregateRow {
                        group: number(group_value(&r.g, r.t.as_deref())),
                        value: number(r.v),
                        row_count: r.n as u64,
                    })
                    .collect(),
            ))
        })
    }

    fn connections<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
    ) -> DataFuture<'a, Vec<DataConnection>> {
        Box::pin(async move {
            let list = DataCall::List {
                user_id: Some(user_id.to_string()),
            };
            let rows: Vec<ConnectionRow> = self.ask_of(site_id, list).await.map_err(unavailable)?;
            Ok(rows
                .into_iter()
                .map(|r| Listed::from(r).connection)
                .collect())
        })
    }

    fn rows<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        cap: usize,
    ) -> DataFuture<'a, DataRows> {
        Box::pin(async move {
            let rows = DataCall::Rows {
                user_id: Some(user_id.to_string()),
                connection_id: connection_id.to_string(),
                limit: (cap + 1) as u32,
            };
            let mut rows: Vec<Value> = self.ask_of(site_id, rows).await.map_err(unavailable)?;
            let over_cap = rows.len() > cap;
            rows.truncate(cap);
            Ok(DataRows { rows, over_cap })
        })
    }
}
