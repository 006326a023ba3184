//! The `analyst` merchant data sets (secret key; TEMPLATES.md §1.3): `PUT /admin/data/{name}`
//! uploads (JSON rows or a CSV body, or a CSV URL to import from) and replaces the
//! connection atomically; `GET /admin/data` lists them with their inferred columns;
//! `GET /admin/data/{name}` shows one with its first rows; `DELETE` removes one;
//! `POST /admin/data/{name}/sync` re-imports from its CSV URL.
//!
//! A CSV URL is fetched within the outbound rule of every URL the Worker calls for a site
//! (`site::endpoint`: https to a public host, no credentials; loopback only in
//! development), each redirect checked again (at most 3), in at most 10 s, reading at most
//! the 32 MB upload cap (`bindings::outbound`).

use concierge_core::boundary::Ids;
use concierge_core::flows::analyst::data::{CsvReader, Typing, json_table};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use worker::{Env, Request, Response};

use crate::auth::{Caller, SecretCaller};
use crate::bindings::outbound::{self, FetchError, MAX_REDIRECTS};
use crate::bindings::services::RandomIds;
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::{now_ms, yield_now};
use crate::site::caps::Caps;
use crate::site::endpoint;
use crate::site_object::data::{Listed, SiteData, Upload};

/// Upload bodies may be large (a 100 000-row data set).
const MAX_UPLOAD_BYTES: usize = 32 * 1024 * 1024;
const TOO_LARGE: &str = "The data set is over 32 MB.";
/// The longest a `csv_url` import may take, redirects and body included.
const FETCH_LIMIT: Duration = Duration::from_secs(10);
/// Rows shown by `GET /admin/data/{name}`.
const PREVIEW_ROWS: usize = 50;

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
}

fn check_user(user_id: &str) -> Result<&str, ApiError> {
    let id = user_id.trim();
    if id.is_empty() || id.chars().count() > 128 {
        return Err(ApiError::bad_request(
            "`user_id` must be 1 to 128 characters.",
        ));
    }
    Ok(id)
}

fn query(req: &Request, key: &str) -> Option<String> {
    req.url()
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonUpload {
    user_id: String,
    #[serde(default)]
    description: String,
    rows: Option<Vec<Value>>,
    csv_url: Option<String>,
}

fn listed_json(l: &Listed) -> Value {
    let c = &l.connection;
    let columns: Vec<Value> = c
        .fields
        .iter()
        .map(|f| json!({"name": f.name, "type": f.kind, "examples": f.examples}))
        .collect();
    json!({"id": c.id, "name": c.name, "user_id": c.user_id, "description": c.description,
           "row_count": c.row_count, "columns": columns, "source_url": l.source_url,
           "updated_at": l.updated_at})
}

/// The CSV at `url`, fetched within the outbound rule (see the module's documentation).
async fn fetch_csv(env: &Env, url: &str) -> Result<String, ApiError> {
    let development = endpoint::development(env);
    let bytes = outbound::get_capped(url, development, FETCH_LIMIT, MAX_UPLOAD_BYTES)
        .await
        .map_err(|err| match err {
            FetchError::Refused { hop: 0, why } => {
                ApiError::bad_request(format!("`csv_url` {why}."))
            }
            FetchError::Refused { why, .. } => ApiError::bad_request(format!(
                "`csv_url` redirects to a URL that is not allowed: it {why}."
            )),
            FetchError::TooManyRedirects => ApiError::bad_request(format!(
                "`csv_url` redirects more than {MAX_REDIRECTS} times."
            )),
            FetchError::BadRedirect => {
                ApiError::bad_request("`csv_url` answered a redirect without a usable `Location`.")
            }
            FetchError::TimedOut => ApiError::bad_request(format!(
                "`csv_url` did not answer within {} s.",
                FETCH_LIMIT.as_secs()
            )),
            FetchError::TooLarge => ApiError::PayloadTooLarge(TOO_LARGE),
            FetchError::Status(status) => {
                ApiError::bad_request(format!("`csv_url` answered HTTP {status}."))
            }
            FetchError::Unreachable => ApiError::bad_request("`csv_url` could not be fetched."),
        })?;
    String::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("The CSV at `csv_url` must be UTF-8."))
}

/// CSV text read this many bytes at a time (a few hundred rows), the Worker yielding
/// between pieces so that a large upload never holds its thread for long.
const PIECE_BYTES: usize = 32 * 1024;

/// An upload's rows, read and checked: their kinds noted by the typing, their text cells.
type Table = (Typing, Vec<Vec<String>>);

/// Notes `rows` (the next rows of the table) and keeps them.
fn note(table: &mut Table, rows: Vec<Vec<String>>) -> Result<(), ApiError> {
    table.0.note(&rows).map_err(ApiError::bad_request)?;
    table.1.extend(rows);
    Ok(())
}

/// CSV text read piece by piece (see [`PIECE_BYTES`]), as a checked table.
async fn from_csv(text: &str) -> Result<Table, ApiError> {
    let mut reader = CsvReader::new();
    let mut table: Option<Table> = None;
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = PIECE_BYTES.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, after) = rest.split_at(end);
        rest = after;
        reader.feed(piece).map_err(ApiError::bad_request)?;
        if table.is_none()
            && let Some(header) = reader.header()
        {
            let typing = Typing::new(header.to_vec()).map_err(ApiError::bad_request)?;
            table = Some((typing, Vec::new()));
        }
        if let Some(table) = table.as_mut() {
            note(table, reader.take_rows())?;
        }
        yield_now().await;
    }
    let (header, rows) = reader.finish().map_err(ApiError::bad_request)?;
    let mut table = match table {
        Some(table) => table,
        None => (
            Typing::new(header).map_err(ApiError::bad_request)?,
            Vec::new(),
        ),
    };
    note(&mut table, rows)?;
    Ok(table)
}

/// JSON rows as a checked table, its cells noted a slice at a time with yields between.
async fn from_json(rows: &[Value]) -> Result<Table, ApiError> {
    let (header, cells) = json_table(rows).map_err(ApiError::bad_request)?;
    let mut table = (
        Typing::new(header).map_err(ApiError::bad_request)?,
        Vec::with_capacity(cells.len()),
    );
    let mut cells = cells.into_iter();
    loop {
        let slice: Vec<Vec<String>> = cells.by_ref().take(1024).collect();
        if slice.is_empty() {
            return Ok(table);
        }
        note(&mut table, slice)?;
        yield_now().await;
    }
}

async fn store(
    env: &Env,
    caller: &Caller,
    name: &str,
    user_id: &str,
    description: &str,
    (typing, cells): Table,
    source_url: Option<&str>,
) -> Result<Response, ApiError> {
    let data = SiteData::new(env, &caller.site.id);
    let new_id = RandomIds.new_id();
    let upload = Upload {
        new_id: &new_id,
        user_id,
        name,
        description,
        typing,
        cells,
        source_url,
        now: now_ms(),
    };
    let caps = Caps::of(env);
    if !data.replace(upload, caps).await? {
        return Err(caps.data_full());
    }
    let listed = data.list(Some(user_id)).await?;
    let one = listed
        .iter()
        .find(|l| l.connection.name == name)
        .ok_or(ApiError::NotFound)?;
    Ok(Response::from_json(&listed_json(one))?)
}

/// `PUT /admin/data/{name}`: JSON `{user_id, description?, rows}` or `{user_id,
/// description?, csv_url}`, or a `text/csv` body with `?user_id=&description=`.
pub(crate) async fn put(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    name: &str,
) -> Result<Response, ApiError> {
    if !valid_name(name) {
        return Err(ApiError::bad_request(
            "A data set name is 1 to 64 letters, digits, '-' or '_'.",
        ));
    }
    let csv = req
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/csv"));
    if csv {
        let user = query(&req, "user_id").unwrap_or_default();
        let user = check_user(&user)?.to_string();
        let description = query(&req, "description").unwrap_or_default();
        let bytes = body::capped(&mut req, MAX_UPLOAD_BYTES, TOO_LARGE).await?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ApiError::bad_request("The CSV body must be UTF-8."))?;
        let table = from_csv(&text).await?;
        return store(env, &caller, name, &user, &description, table, None).await;
    }
    let upload: JsonUpload = body::json_up_to(&mut req, MAX_UPLOAD_BYTES, TOO_LARGE).await?;
    let user = check_user(&upload.user_id)?.to_string();
    let (table, source) = match (upload.rows, upload.csv_url) {
        (Some(rows), None) => (from_json(&rows).await?, None),
        (None, Some(url)) => (from_csv(&fetch_csv(env, &url).await?).await?, Some(url)),
        _ => {
            return Err(ApiError::bad_request(
                "Send exactly one of `rows` (an array of objects) and `csv_url`.",
            ));
        }
    };
    let description = upload.description;
    store(
        env,
        &caller,
        name,
        &user,
        &description,
        table,
        source.as_deref(),
    )
    .await
}

/// The connection `name` of the site (its `?user_id=`, required when several users have
/// one of that name).
async fn find(req: &Request, data: &SiteData, name: &str) -> Result<Listed, ApiError> {
    let user = query(req, "user_id");
    let listed = data.list(user.as_deref()).await?;
    let mut matching = listed.into_iter().filter(|l| l.connection.name == name);
    match (matching.next(), matching.next()) {
        (Some(one), None) => Ok(one),
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "Several users have a data set of this name; add `?user_id=`.",
        )),
        (None, _) => Err(ApiError::NotFound),
    }
}

/// `GET /admin/data[?user_id=]`: the site's data sets with their inferred columns.
pub(crate) async fn list(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let user = query(&req, "user_id");
    let listed = SiteData::new(env, &caller.site.id)
        .list(user.as_deref())
        .await?;
    let all: Vec<Value> = listed.iter().map(listed_json).collect();
    Ok(Response::from_json(&json!({ "connections": all }))?)
}

/// `GET /admin/data/{name}`: one data set and its first 50 rows.
pub(crate) async fn get(
    req: Request,
    env: &Env,
    caller: SecretCaller,
    name: &str,
) -> Result<Response, ApiError> {
    let data = SiteData::new(env, &caller.site.id);
    let one = find(&req, &data, name).await?;
    let rows = data.preview(&one.connection.id, PREVIEW_ROWS).await?;
    let mut out = listed_json(&one);
    out["rows"] = Value::Array(rows);
    Ok(Response::from_json(&out)?)
}

/// `DELETE /admin/data/{name}`: 204, or 404.
pub(crate) async fn delete(
    req: Request,
    env: &Env,
    caller: SecretCaller,
    name: &str,
) -> Result<Response, ApiError> {
    let data = SiteData::new(env, &caller.site.id);
    let one = find(&req, &data, name).await?;
    data.delete(&one.connection.user_id, name).await?;
    Ok(Response::empty()?.with_status(204))
}

/// `POST /admin/data/{name}/sync`: re-imports the data set from its CSV URL.
pub(crate) async fn sync(
    req: Request,
    env: &Env,
    caller: SecretCaller,
    name: &str,
) -> Result<Response, ApiError> {
    let data = SiteData::new(env, &caller.site.id);
    let one = find(&req, &data, name).await?;
    let Some(url) = one.source_url.clone() else {
        return Err(ApiError::bad_request(
            "This data set was not imported from a `csv_url`; upload it again instead.",
        ));
    };
    let table = from_csv(&fetch_csv(env, &url).await?).await?;
    let c = &one.connection;
    store(
        env,
        &caller,
        name,
        &c.user_id,
        &c.description,
        table,
        Some(&url),
    )
    .await
}
