//! `concierge-sql`: the `rental` template's validator of model-written SQL
//! (`concierge_core::flows::rental::sql::validate_in`: `sqlparser` and the allow-lists) as
//! a Worker of its own, so the main Worker's wasm holds no SQL parser (issue 29: the parser
//! was about a quarter of it).
//!
//! A pure function behind one `POST`: no bindings, no secrets, no data. In production it
//! has no public route (`workers_dev = false`): only the main Worker reaches it, through
//! its `SQL_CHECK` service binding, right before a statement runs on the listings.
//!
//! ```text
//! POST {"sql": "...", "catalog": [{"name": "rooms", "columns": ["id", …] | null, "max_rows": N}, …]}
//!   200 {"sql": <the statement re-serialised: what may run>, "first_table": "rooms" | null}
//!   422 {"error": {"code": "invalid_sql", "message": <the validator's sentence>}}
//!   400 {"error": {"code": "invalid_request", "message": …}}   the body is not that JSON
//!   413 {"error": {"code": "request_too_large", "message": …}} over MAX_BODY_BYTES
//!   405 {"error": {"code": "method_not_allowed", "message": …}} (worker.js)
//! ```
//!
//! `worker.js` is the Worker's entry: it reads the body and answers with [`respond`]'s
//! status and JSON (through `check`, the one export of the wasm).

use concierge_core::flows::rental::sql::{Table, validate_in};
use serde::{Deserialize, Serialize};

/// Largest request body, in bytes: a statement is at most 4,000 characters
/// (`MAX_SQL_CHARS`, up to 16,000 bytes of UTF-8) and a catalog a few tables.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Most tables in a catalog.
pub const MAX_TABLES: usize = 64;

/// A statement to validate and the logical tables it may read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckRequest {
    sql: String,
    catalog: Vec<Table>,
}

/// An accepted statement.
#[derive(Debug, Serialize)]
struct Accepted<'a> {
    sql: &'a str,
    first_table: Option<&'a str>,
}

/// The HTTP status and JSON body that answer a request `body`.
pub fn respond(body: &str) -> (u16, String) {
    if body.len() > MAX_BODY_BYTES {
        return error(
            413,
            "request_too_large",
            &format!("the request body is over {MAX_BODY_BYTES} bytes"),
        );
    }
    let request: CheckRequest = match serde_json::from_str(body) {
        Ok(request) => request,
        Err(e) => {
            return error(
                400,
                "invalid_request",
                &format!("the body must be JSON {{\"sql\": string, \"catalog\": [tables]}}: {e}"),
            );
        }
    };
    if request.catalog.len() > MAX_TABLES {
        return error(
            400,
            "invalid_request",
            &format!("the catalog has more than {MAX_TABLES} tables"),
        );
    }
    match validate_in(&request.sql, &request.catalog) {
        Ok(valid) => {
            let accepted = Accepted {
                sql: valid.sql(),
                first_table: valid.first_table(),
            };
            (200, json(&accepted))
        }
        Err(rejection) => error(422, "invalid_sql", &rejection.0),
    }
}

/// The error shape of every Concierge API: `{"error": {"code", "message"}}`.
fn error(status: u16, code: &str, message: &str) -> (u16, String) {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    (status, body.to_string())
}

fn json(value: &impl Serialize) -> String {
    // Serialising these plain structs cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// The wasm export `worker.js` calls: [`respond`]'s status, a space, its JSON body.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn check(body: &str) -> String {
    let (status, json) = respond(body);
    format!("{status} {json}")
}
