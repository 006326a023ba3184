//! `analyst`'s data sets in the site's object (issue 47): connections and their rows
//! (tables [`SCHEMA`]), so an upload and every query over a data set run in the site's own
//! database and never on the shared D1. Rows are JSON objects typed at upload, stored as
//! JSON text and sent back as text: the object never parses them.
//!
//! An upload never holds the object (nor, under `wrangler dev`, every object beside it)
//! for long: its rows arrive in calls of about [`CHUNK_BYTES`] each (a bound value's limit
//! is 2 MB), each written in a transaction of its own straight into `data_rows` under the
//! upload's id, where no query looks (queries join `data_connections`). The call that
//! replaces the data set is one short transaction: it checks the row count and the site's
//! caps and makes the upload's id the data set's, all or nothing. The rows of the data set
//! replaced (or deleted), and of an upload refused or abandoned (an hour without a call),
//! are then deleted in small batches between which the object serves other calls
//! ([`sweep`]; `data_uploads` remembers what is left, so a sweep cut short goes on at the
//! next one).

use std::cell::Cell;
use std::rc::Rc;

use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows, DataSets};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::flows::analyst::data::Typing;
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

/// Bytes of row JSON per call to the object (one insert statement and transaction of a
/// millisecond or two; a bound value is at most 2 MB).
const CHUNK_BYTES: usize = 64_000;
/// Rows typed (and sent) at a time by the Worker, which yields between slices (a few
/// milliseconds of work each).
const SLICE_ROWS: usize = 500;
/// Rows of a replaced data set deleted per batch of a [`sweep`].
const SWEEP_ROWS: u32 = 1_000;
/// Rows read from D1 per import statement.
const IMPORT_PAGE: usize = 5_000;
/// A staged upload older than this (ms) is abandoned.
const STAGED_FOR: u64 = 3_600_000;

/// What the Worker asks about data sets (inside [`SiteCall::Data`]): an [`Op`] and its
/// arguments, one flat struct (a derived enum of seven struct variants cost the Worker
/// about 10 KB of decoding).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct DataCall {
    op: Op,
    /// The user: whose data sets (`List`), whose data set (`Delete`), whose rows (`Rows`;
    /// `None`: any user's, the admin preview).
    user_id: Option<String>,
    /// The data set's name (`Delete`), its id (`Rows`), the upload's id (`Stage`), or the
    /// statement (`Aggregate`).
    key: String,
    /// Rows at most (`Rows`).
    limit: u32,
    /// Rows of the upload (`Stage`, `Replace`).
    chunks: Vec<Chunk>,
    /// The data set an upload replaces, and the site's caps (`Replace`).
    set: Option<NewSet>,
    caps: Option<Caps>,
    /// The statement's parameters (`Aggregate`).
    params: Vec<Value>,
}

/// What a [`DataCall`] does.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    /// Writes `chunks` of upload `key` (the new data set's id); answers `{}`.
    Stage,
    /// Replaces (or creates) the user's data set `set.name` with the upload's rows,
    /// refused whole past `caps`; answers `{"over": bool}`.
    Replace,
    /// The site's data sets (one user's when `user_id`), by user then name.
    #[default]
    List,
    /// Deletes the user's data set `key`; answers `{"deleted": bool}`.
    Delete,
    /// The first `limit` rows of data set `key`, if it is `user_id`'s (any user's when
    /// `None`), as a JSON array.
    Rows,
    /// An `aggregate_data` statement (`key`, from [`aggregate_sql`], written by the
    /// Worker) over `params`: its rows.
    Aggregate,
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

const COLUMNS: &str = "id, user_id, name, description, schema, row_count, source_url, updated_at";

/// Writes `chunks` of upload `key` (their rows under its id, out of every query's sight)
/// and notes the upload (from `now`: one that stops for an hour is abandoned).
fn stage(sql: &SqlStorage, key: &str, chunks: &[Chunk], now: u64) -> worker::Result<()> {
    sql.exec(
        "INSERT INTO data_uploads (id, at) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING",
        vec![key.into(), SqlStorageValue::from(now as i64)],
    )?;
    for chunk in chunks {
        sql.exec(
            "INSERT OR REPLACE INTO data_rows (connection_id, row_index, data) \
             SELECT ?1, ?2 + CAST(key AS INTEGER), value FROM json_each(?3)",
            vec![
                key.into(),
                SqlStorageValue::from(chunk.start as i64),
                chunk.rows.as_str().into(),
            ],
        )?;
    }
    Ok(())
}

/// Marks `id`'s rows (a data set's, an upload's) for the [`sweep`].
fn retire(sql: &SqlStorage, id: &str, now: u64) -> worker::Result<()> {
    sql.exec(
        "INSERT INTO data_uploads (id, at, gone) VALUES (?1, ?2, 1) \
         ON CONFLICT (id) DO UPDATE SET gone = 1",
        vec![id.into(), SqlStorageValue::from(now as i64)],
    )?;
    Ok(())
}

/// Deletes the rows of retired data sets and uploads (and of uploads abandoned for
/// [`STAGED_FOR`]) in batches of [`SWEEP_ROWS`], yielding between batches so the object's
/// other calls run meanwhile; one sweep at a time per object (`sweeping`).
pub(super) async fn sweep(sql: SqlStorage, sweeping: Rc<Cell<bool>>) {
    if sweeping.replace(true) {
        return;
    }
    let stale = crate::runtime::now_ms().saturating_sub(STAGED_FOR) as i64;
    let next = || -> worker::Result<Option<String>> {
        Ok(first(
            &sql,
            "SELECT id FROM data_uploads WHERE gone = 1 OR at < ?1 LIMIT 1",
            vec![SqlStorageValue::from(stale)],
        )?
        .pop()
        .and_then(|v| match v {
            SqlStorageValue::String(id) => Some(id),
            _ => None,
        }))
    };
    loop {
        let batch = next().and_then(|id| {
            let Some(id) = id else { return Ok(false) };
            let cursor = sql.exec(
                "DELETE FROM data_rows WHERE rowid IN \
                 (SELECT rowid FROM data_rows WHERE connection_id = ?1 LIMIT ?2)",
                vec![
                    id.as_str().into(),
                    SqlStorageValue::from(i64::from(SWEEP_ROWS)),
                ],
            )?;
            let _ = cursor.raw().count();
            if cursor.rows_written() == 0 {
                sql.exec("DELETE FROM data_uploads WHERE id = ?1", vec![id.into()])?;
            }
            Ok(true)
        });
        match batch {
            Ok(true) => crate::runtime::yield_now().await,
            Ok(false) => break,
            Err(error) => {
                worker::console_warn!("data sets: a sweep stopped: {error}");
                break;
            }
        }
    }
    sweeping.set(false);
}

/// The first row of `statement`'s answer, as SQLite values.
fn first(
    sql: &SqlStorage,
    statement: &str,
    bound: Vec<SqlStorageValue>,
) -> worker::Result<Vec<SqlStorageValue>> {
    sql.exec(statement, bound)?
        .raw()
        .next()
        .unwrap_or_else(|| Ok(Vec::new()))
}

/// A value as a count.
fn count(value: Option<&SqlStorageValue>) -> u64 {
    match value {
        Some(SqlStorageValue::Integer(n)) => *n as u64,
        Some(SqlStorageValue::Float(n)) => *n as u64,
        _ => 0,
    }
}

/// `[data sets, rows, bytes]` the site holds.
fn totals(sql: &SqlStorage) -> worker::Result<[u64; 3]> {
    let row = first(
        sql,
        "SELECT count(*), coalesce(sum(row_count), 0), coalesce(sum(bytes), 0) \
         FROM data_connections",
        Vec::new(),
    )?;
    Ok([count(row.first()), count(row.get(1)), count(row.get(2))])
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

/// Makes upload `set.id` the user's data set `set.name`, in one short transaction (see the
/// module's documentation); whether it was refused for the caps.
fn replace(object: &SiteObject, set: NewSet, caps: Caps) -> worker::Result<bool> {
    let sql = object.sql();
    let over = Rc::new(Cell::new(false));
    let flag = over.clone();
    let upload = set.id.clone();
    let tx = sql.clone();
    let written = object.transaction(move || {
        let sql = tx;
        let n = count(
            first(
                &sql,
                "SELECT count(*) FROM data_rows WHERE connection_id = ?1",
                vec![set.id.as_str().into()],
            )?
            .first(),
        );
        if n != set.row_count {
            return Err(worker::Error::RustError(format!(
                "an upload of {} rows arrived with {n}",
                set.row_count
            )));
        }
        let old = first(
            &sql,
            "SELECT id, created_at FROM data_connections WHERE user_id = ?1 AND name = ?2",
            vec![set.user_id.as_str().into(), set.name.as_str().into()],
        )?;
        let created = match old.get(1) {
            Some(SqlStorageValue::Integer(at)) => *at,
            _ => set.now as i64,
        };
        if let Some(SqlStorageValue::String(old)) = old.first() {
            sql.exec(
                "DELETE FROM data_connections WHERE id = ?1",
                vec![old.as_str().into()],
            )?;
            retire(&sql, old, set.now)?;
        }
        sql.exec(
            "INSERT INTO data_connections (id, user_id, name, description, schema, row_count, \
             source_url, created_at, updated_at, bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            vec![
                set.id.as_str().into(),
                set.user_id.as_str().into(),
                set.name.as_str().into(),
                set.description.as_str().into(),
                set.schema.as_str().into(),
                SqlStorageValue::from(set.row_count as i64),
                set.source_url.clone().into(),
                SqlStorageValue::from(created),
                SqlStorageValue::from(set.now as i64),
                SqlStorageValue::from(set.bytes as i64),
            ],
        )?;
        sql.exec(
            "DELETE FROM data_uploads WHERE id = ?1",
            vec![set.id.as_str().into()],
        )?;
        let [sets, rows, bytes] = totals(&sql)?;
        if sets > caps.data_sets || rows > caps.data_rows || bytes > caps.data_bytes {
            flag.set(true);
            return Err(worker::Error::RustError("over the caps".into()));
        }
        Ok(())
    });
    if written.is_err() {
        // Rolled back: the upload's rows are of no use now.
        retire(&sql, &upload, crate::runtime::now_ms())?;
    }
    if !over.get() {
        written?;
    }
    Ok(over.get())
}

/// Answers a [`DataCall`].
pub(super) fn serve(object: &SiteObject, call: DataCall) -> Result<Response, ApiError> {
    let sql = object.sql();
    let DataCall {
        op,
        user_id,
        key,
        limit,
        chunks,
        set,
        caps,
        params,
    } = call;
    let answer = match (op, set) {
        (Op::Stage, _) => {
            let now = crate::runtime::now_ms();
            object.transaction(move || stage(&sql, &key, &chunks, now))?;
            serde_json::json!({})
        }
        (Op::Replace, Some(set)) => {
            let over = replace(object, set, caps.unwrap_or_default())?;
            object.sweep_data();
            serde_json::json!({ "over": over })
        }
        (Op::Replace, None) => return Err(ApiError::bad_request("No data set.")),
        (Op::List, _) => {
            let rows: Vec<Value> = match user_id {
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
            Value::Array(rows)
        }
        (Op::Delete, _) => {
            let deleted = Rc::new(Cell::new(false));
            let flag = deleted.clone();
            let user = user_id.unwrap_or_default();
            let now = crate::runtime::now_ms();
            object.transaction(move || {
                let found = first(
                    &sql,
                    "SELECT id FROM data_connections WHERE user_id = ?1 AND name = ?2",
                    vec![user.as_str().into(), key.as_str().into()],
                )?;
                if let Some(SqlStorageValue::String(id)) = found.first() {
                    sql.exec(
                        "DELETE FROM data_connections WHERE id = ?1",
                        vec![id.as_str().into()],
                    )?;
                    retire(&sql, id, now)?;
                    flag.set(true);
                }
                Ok(())
            })?;
            object.sweep_data();
            serde_json::json!({ "deleted": deleted.get() })
        }
        (Op::Rows, _) => {
            // The connection must be the user's: isolation is enforced here, in SQL.
            let text = array(
                &sql,
                "SELECT r.data FROM data_rows r JOIN data_connections c ON c.id = r.connection_id \
                 WHERE r.connection_id = ?1 AND (?2 IS NULL OR c.user_id = ?2) \
                 ORDER BY r.row_index LIMIT ?3",
                vec![
                    key.into(),
                    user_id.into(),
                    SqlStorageValue::from(i64::from(limit)),
                ],
            )?;
            return Ok(Response::ok(text)?);
        }
        (Op::Aggregate, _) => {
            let params = params.iter().map(bound).collect::<Vec<_>>();
            let rows: Vec<Value> = sql.exec(&key, params)?.to_array()?;
            Value::Array(rows)
        }
        (Op::Usage, _) => {
            let [n, rows, bytes] = totals(&sql)?;
            serde_json::json!({ "n": n, "rows": rows, "bytes": bytes })
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
    // Read as JSON values (one decoder shared with the object's own reads).
    let sets: Vec<Value> = db
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
        let Some(id) = set["id"].as_str().map(str::to_string) else {
            continue;
        };
        let mut after = -1.0;
        loop {
            let page: Vec<Value> = db
                .prepare(
                    "SELECT row_index, data FROM data_rows WHERE site_id = ?1 \
                     AND connection_id = ?2 AND row_index > ?3 ORDER BY row_index LIMIT ?4",
                )
                .bind(&[
                    site_id.into(),
                    id.as_str().into(),
                    after.into(),
                    (IMPORT_PAGE as f64).into(),
                ])?
                .all()
                .await?
                .results()?;
            let full = page.len() == IMPORT_PAGE;
            if let Some(last) = page.last().and_then(|r| r["row_index"].as_f64()) {
                after = last;
            }
            let (sql, id) = (object.sql(), id.clone());
            object.transaction(move || {
                for row in page {
                    sql.exec(
                        "INSERT OR REPLACE INTO data_rows (connection_id, row_index, data) \
                         VALUES (?1, ?2, ?3)",
                        vec![
                            id.as_str().into(),
                            bound(&row["row_index"]),
                            bound(&row["data"]),
                        ],
                    )?;
                }
                Ok(())
            })?;
            if !full {
                break;
            }
        }
        let columns = [
            "id",
            "user_id",
            "name",
            "description",
            "schema",
            "row_count",
            "source_url",
            "created_at",
            "updated_at",
            "bytes",
        ];
        object.sql().exec(
            "INSERT OR REPLACE INTO data_connections (id, user_id, name, description, schema, \
             row_count, source_url, created_at, updated_at, bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            columns.iter().map(|c| bound(&set[*c])).collect::<Vec<_>>(),
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

/// A JSON value bound as SQLite's (numbers whole where they are, as D1 gives them).
fn bound(value: &Value) -> SqlStorageValue {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => SqlStorageValue::from(f as i64),
            Some(f) => SqlStorageValue::from(f),
            None => SqlStorageValue::Null,
        },
        Value::String(s) => s.as_str().into(),
        _ => SqlStorageValue::Null,
    }
}

// ---- The Worker's side ------------------------------------------------------------------

/// A data set as the admin API lists it.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) connection: DataConnection,
    pub(crate) source_url: Option<String>,
    pub(crate) updated_at: u64,
}

impl Listed {
    /// A data set as the object lists it (a row of `COLUMNS`).
    fn of(row: &Value) -> Self {
        let text = |key: &str| row[key].as_str().unwrap_or_default().to_string();
        let number = |key: &str| row[key].as_f64().unwrap_or(0.0) as u64;
        let fields: Vec<DataField> = serde_json::from_str(&text("schema")).unwrap_or_default();
        Self {
            connection: DataConnection {
                id: text("id"),
                user_id: text("user_id"),
                name: text("name"),
                description: text("description"),
                row_count: number("row_count"),
                fields,
            },
            source_url: row["source_url"].as_str().map(str::to_string),
            updated_at: number("updated_at"),
        }
    }
}

/// A JSON array's items (none for anything else).
fn items(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

/// What an upload stores: its rows as text cells, already checked and their kinds noted
/// by `typing` (they are typed slice by slice as they are sent).
pub(crate) struct Upload<'a> {
    pub(crate) new_id: &'a str,
    pub(crate) user_id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) typing: Typing,
    pub(crate) cells: Vec<Vec<String>>,
    pub(crate) source_url: Option<&'a str>,
    pub(crate) now: u64,
}

/// `rows` (numbered from `start`) as chunks of about [`CHUNK_BYTES`] of JSON each, and the
/// bytes of their rows' JSON text.
fn chunks(rows: &[Value], start: usize) -> (Vec<Chunk>, usize) {
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut first = 0usize;
    while first < rows.len() {
        let mut chunk = String::from("[");
        let mut end = first;
        while end < rows.len() && (end == first || chunk.len() < CHUNK_BYTES) {
            if end > first {
                chunk.push(',');
            }
            let before = chunk.len();
            chunk.push_str(&rows[end].to_string());
            bytes += chunk.len() - before;
            end += 1;
        }
        chunk.push(']');
        out.push(Chunk {
            start: (start + first) as u64,
            rows: chunk,
        });
        first = end;
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

    async fn ask(&self, data: DataCall) -> Result<Value, ApiError> {
        self.ask_of(&self.site_id, data).await
    }

    /// The object's answer as JSON (one decoding for every answer).
    async fn ask_of(&self, site_id: &str, data: DataCall) -> Result<Value, ApiError> {
        call(&self.env, site_id, &SiteCall::Data(data)).await
    }

    /// The site's data sets (optionally one user's), by user then name.
    pub(crate) async fn list(&self, user_id: Option<&str>) -> Result<Vec<Listed>, ApiError> {
        let rows = self
            .ask(DataCall {
                op: Op::List,
                user_id: user_id.map(str::to_string),
                ..DataCall::default()
            })
            .await?;
        Ok(items(rows).iter().map(Listed::of).collect())
    }

    /// Replaces (or creates) the user's data set `name` with the upload's rows, atomically;
    /// `false` (nothing written) when the site's data sets would pass its caps. Rows are
    /// typed [`SLICE_ROWS`] at a time and sent a chunk per call: the Worker yields at each
    /// call, so a large upload never holds its thread for long.
    pub(crate) async fn replace(&self, up: Upload<'_>, caps: Caps) -> Result<bool, ApiError> {
        let Upload {
            new_id,
            user_id,
            name,
            description,
            mut typing,
            cells,
            source_url,
            now,
        } = up;
        let row_count = typing.rows();
        let (mut start, mut bytes) = (0, 0);
        let mut cells = cells.into_iter();
        loop {
            let slice: Vec<Vec<String>> = cells.by_ref().take(SLICE_ROWS).collect();
            if slice.is_empty() {
                break;
            }
            let rows = typing.typed(slice);
            let (parts, n) = chunks(&rows, start);
            start += rows.len();
            bytes += n;
            drop(rows);
            for chunk in parts {
                let stage = DataCall {
                    op: Op::Stage,
                    key: new_id.to_string(),
                    chunks: vec![chunk],
                    ..DataCall::default()
                };
                self.ask(stage).await?;
                crate::runtime::yield_now().await;
            }
        }
        let set = NewSet {
            id: new_id.to_string(),
            user_id: user_id.to_string(),
            name: name.to_string(),
            description: description.to_string(),
            schema: serde_json::to_string(&typing.fields()).unwrap_or_else(|_| "[]".into()),
            row_count: row_count as u64,
            bytes: bytes as u64,
            source_url: source_url.map(str::to_string),
            now,
        };
        let answer = self
            .ask(DataCall {
                op: Op::Replace,
                set: Some(set),
                caps: Some(caps),
                ..DataCall::default()
            })
            .await?;
        Ok(answer["over"] == false)
    }

    /// Deletes the user's data set `name` and its rows; whether it existed.
    pub(crate) async fn delete(&self, user_id: &str, name: &str) -> Result<bool, ApiError> {
        let answer = self
            .ask(DataCall {
                op: Op::Delete,
                user_id: Some(user_id.to_string()),
                key: name.to_string(),
                ..DataCall::default()
            })
            .await?;
        Ok(answer["deleted"] == true)
    }

    /// The first `limit` rows of one of the site's data sets (admin preview).
    pub(crate) async fn preview(
        &self,
        connection_id: &str,
        limit: usize,
    ) -> Result<Vec<Value>, ApiError> {
        let rows = DataCall {
            op: Op::Rows,
            key: connection_id.to_string(),
            limit: limit as u32,
            ..DataCall::default()
        };
        Ok(items(self.ask(rows).await?))
    }

    /// `(data sets, rows, bytes)` the site holds.
    pub(crate) async fn usage(&self) -> Result<(u64, u64, u64), ApiError> {
        let a = self
            .ask(DataCall {
                op: Op::Usage,
                ..DataCall::default()
            })
            .await?;
        let n = |key: &str| a[key].as_u64().unwrap_or(0);
        Ok((n("n"), n("rows"), n("bytes")))
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
            let rows = self
                .ask_of(
                    site_id,
                    DataCall {
                        op: Op::Aggregate,
                        key: sql,
                        params,
                        ..DataCall::default()
                    },
                )
                .await
                .map_err(unavailable)?;
            let number = |v: &Value| v.as_f64().map_or(v.clone(), to_json);
            Ok(Some(
                items(rows)
                    .iter()
                    .map(|r| AggregateRow {
                        group: number(&group_value(&r["g"], r["t"].as_str())),
                        value: number(&r["v"]),
                        row_count: r["n"].as_f64().unwrap_or(0.0) as u64,
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
            let list = DataCall {
                op: Op::List,
                user_id: Some(user_id.to_string()),
                ..DataCall::default()
            };
            let rows = self.ask_of(site_id, list).await.map_err(unavailable)?;
            Ok(items(rows)
                .iter()
                .map(|r| Listed::of(r).connection)
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
            let rows = DataCall {
                op: Op::Rows,
                user_id: Some(user_id.to_string()),
                key: connection_id.to_string(),
                limit: (cap + 1) as u32,
                ..DataCall::default()
            };
            let mut rows = items(self.ask_of(site_id, rows).await.map_err(unavailable)?);
            let over_cap = rows.len() > cap;
            rows.truncate(cap);
            Ok(DataRows { rows, over_cap })
        })
    }
}
