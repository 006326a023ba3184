//! The `analyst` template's data sets in D1 (`DB`): connections and their rows. Every
//! statement is scoped by site (and by user where it reads for a turn), with bound
//! parameters; an upload replaces a connection in one D1 batch (all or nothing).

use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows, DataSets};
use concierge_core::error::ServiceError;
use concierge_core::flows::analyst::eval::to_json;
use concierge_core::flows::analyst::sql::{
    AggregateQuery, AggregateRow, SqlParam, aggregate_sql, group_value,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::bindings::d1_caps::{self, CapError};
use crate::bindings::d1_store::service_error;
use crate::site::caps::Caps;

/// Bytes of row JSON bound per insert statement (D1 caps a value at 2 MB).
const CHUNK_BYTES: usize = 600_000;

/// Data sets over D1.
#[derive(Debug)]
pub(crate) struct D1Data {
    db: D1Database,
}

#[derive(Debug, Deserialize)]
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

#[derive(Debug, Deserialize)]
struct AggregateOut {
    g: Value,
    t: Option<String>,
    v: Value,
    n: f64,
}

#[derive(Debug, Deserialize)]
struct DataRow {
    data: String,
}

/// A connection as the admin API lists it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Listed {
    #[serde(flatten)]
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

const COLUMNS: &str = "id, user_id, name, description, schema, row_count, source_url, updated_at";

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// `rows` as JSON arrays of about [`CHUNK_BYTES`] each: (index of the first row, the
/// array, how many rows it holds). A row's bytes are its JSON text's.
fn chunks(rows: &[Value]) -> Vec<(usize, String, usize)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < rows.len() {
        let mut chunk = String::from("[");
        let mut end = start;
        while end < rows.len() && (end == start || chunk.len() < CHUNK_BYTES) {
            if end > start {
                chunk.push(',');
            }
            chunk.push_str(&rows[end].to_string());
            end += 1;
        }
        chunk.push(']');
        out.push((start, chunk, end - start));
        start = end;
    }
    out
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

impl D1Data {
    pub(crate) fn new(db: D1Database) -> Self {
        Self { db }
    }

    /// The site's connections (optionally one user's), by user then name.
    pub(crate) async fn list(
        &self,
        site_id: &str,
        user_id: Option<&str>,
    ) -> Result<Vec<Listed>, ServiceError> {
        let statement = match user_id {
            Some(user) => self
                .db
                .prepare(format!(
                    "SELECT {COLUMNS} FROM data_connections WHERE site_id = ?1 AND user_id = ?2 \
                     ORDER BY name"
                ))
                .bind(&[site_id.into(), user.into()]),
            None => self
                .db
                .prepare(format!(
                    "SELECT {COLUMNS} FROM data_connections WHERE site_id = ?1 \
                     ORDER BY user_id, name"
                ))
                .bind(&[site_id.into()]),
        };
        let rows: Vec<ConnectionRow> = statement
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Replaces (or creates) the user's connection `name` with `rows`, atomically; refused
    /// whole ([`CapError::Over`]) when the site's data sets would pass its caps.
    pub(crate) async fn replace(
        &self,
        site_id: &str,
        up: &Upload<'_>,
        caps: &Caps,
    ) -> Result<(), CapError> {
        let schema = serde_json::to_string(up.fields).unwrap_or_else(|_| "[]".into());
        let find =
            "(SELECT id FROM data_connections WHERE site_id = ?1 AND user_id = ?2 AND name = ?3)";
        let chunks = chunks(up.rows);
        let bytes: usize = chunks
            .iter()
            .map(|(_, json, rows)| json.len() - 1 - rows)
            .sum();
        let mut statements = vec![
            self.db
                .prepare(
                    "INSERT INTO data_connections (site_id, id, user_id, name, description, schema, \
                     row_count, source_url, created_at, updated_at, bytes) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10) \
                     ON CONFLICT (site_id, user_id, name) DO UPDATE SET \
                     description = excluded.description, schema = excluded.schema, \
                     row_count = excluded.row_count, source_url = excluded.source_url, \
                     updated_at = excluded.updated_at, bytes = excluded.bytes",
                )
                .bind(&[
                    site_id.into(),
                    up.new_id.into(),
                    up.user_id.into(),
                    up.name.into(),
                    up.description.into(),
                    schema.into(),
                    num(up.rows.len() as u64),
                    up.source_url.map_or(JsValue::NULL, Into::into),
                    num(up.now),
                    num(bytes as u64),
                ])
                .map_err(service_error)?,
            self.db
                .prepare(format!(
                    "DELETE FROM data_rows WHERE site_id = ?1 AND connection_id = {find}"
                ))
                .bind(&[site_id.into(), up.user_id.into(), up.name.into()])
                .map_err(service_error)?,
        ];
        for (start, chunk, _) in chunks {
            statements.push(
                self.db
                    .prepare(format!(
                        "INSERT INTO data_rows (site_id, connection_id, row_index, data) \
                         SELECT ?1, {find}, ?4 + CAST(key AS INTEGER), value FROM json_each(?5)"
                    ))
                    .bind(&[
                        site_id.into(),
                        up.user_id.into(),
                        up.name.into(),
                        num(start as u64),
                        chunk.into(),
                    ])
                    .map_err(service_error)?,
            );
        }
        statements.push(d1_caps::data_guard(&self.db, site_id, caps)?);
        self.db
            .batch(statements)
            .await
            .map_err(CapError::from_batch)?;
        Ok(())
    }

    /// Deletes the user's connection `name` and its rows; whether it existed.
    pub(crate) async fn delete(
        &self,
        site_id: &str,
        user_id: &str,
        name: &str,
    ) -> Result<bool, ServiceError> {
        let find =
            "(SELECT id FROM data_connections WHERE site_id = ?1 AND user_id = ?2 AND name = ?3)";
        let params: [JsValue; 3] = [site_id.into(), user_id.into(), name.into()];
        let results = self
            .db
            .batch(vec![
                self.db
                    .prepare(format!(
                        "DELETE FROM data_rows WHERE site_id = ?1 AND connection_id = {find}"
                    ))
                    .bind(&params)
                    .map_err(service_error)?,
                self.db
                    .prepare(
                        "DELETE FROM data_connections WHERE site_id = ?1 AND user_id = ?2 AND name = ?3",
                    )
                    .bind(&params)
                    .map_err(service_error)?,
            ])
            .await
            .map_err(service_error)?;
        let changes = results
            .get(1)
            .and_then(|r| r.meta().ok().flatten())
            .and_then(|m| m.changes)
            .unwrap_or(0);
        Ok(changes > 0)
    }

    /// The first `limit` rows of one of the site's connections (admin preview).
    pub(crate) async fn preview(
        &self,
        site_id: &str,
        connection_id: &str,
        limit: usize,
    ) -> Result<Vec<Value>, ServiceError> {
        let rows: Vec<DataRow> = self
            .db
            .prepare(
                "SELECT data FROM data_rows WHERE site_id = ?1 AND connection_id = ?2 \
                 ORDER BY row_index LIMIT ?3",
            )
            .bind(&[site_id.into(), connection_id.into(), num(limit as u64)])
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| serde_json::from_str(&r.data).ok())
            .collect())
    }
}

impl DataSets for D1Data {
    fn aggregate<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        query: &'a AggregateQuery,
    ) -> DataFuture<'a, Option<Vec<AggregateRow>>> {
        Box::pin(async move {
            let Some((sql, params)) = aggregate_sql(query, site_id, connection_id, user_id) else {
                return Ok(None);
            };
            let params: Vec<JsValue> = params
                .into_iter()
                .map(|p| match p {
                    SqlParam::Text(t) => JsValue::from(t),
                    SqlParam::Number(n) => JsValue::from_f64(n),
                })
                .collect();
            let rows: Vec<AggregateOut> = self
                .db
                .prepare(sql)
                .bind(&params)
                .map_err(service_error)?
                .all()
                .await
                .map_err(service_error)?
                .results()
                .map_err(service_error)?;
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
            let listed = self.list(site_id, Some(user_id)).await?;
            Ok(listed.into_iter().map(|l| l.connection).collect())
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
            // The connection must be the user's: isolation is enforced here, in SQL.
            let rows: Vec<DataRow> = self
                .db
                .prepare(
                    "SELECT r.data FROM data_rows r JOIN data_connections c \
                     ON c.site_id = r.site_id AND c.id = r.connection_id \
                     WHERE r.site_id = ?1 AND r.connection_id = ?2 AND c.user_id = ?3 \
                     ORDER BY r.row_index LIMIT ?4",
                )
                .bind(&[
                    site_id.into(),
                    connection_id.into(),
                    user_id.into(),
                    num(cap as u64 + 1),
                ])
                .map_err(service_error)?
                .all()
                .await
                .map_err(service_error)?
                .results()
                .map_err(service_error)?;
            let over_cap = rows.len() > cap;
            Ok(DataRows {
                rows: rows
                    .into_iter()
                    .take(cap)
                    .filter_map(|r| serde_json::from_str(&r.data).ok())
                    .collect(),
                over_cap,
            })
        })
    }
}
