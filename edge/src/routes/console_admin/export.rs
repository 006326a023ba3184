//! `GET /admin/conversations/export`: the filtered conversations' messages as a CSV or
//! JSON download.

use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_console_stats::ExportRow;
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;

use super::{EXPORT_CONVERSATIONS, EXPORT_ROWS, filter};

/// `GET /admin/conversations/export`.
pub(crate) async fn export(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let (filter, limit) = filter(&req, EXPORT_CONVERSATIONS, EXPORT_CONVERSATIONS)?;
    let csv = match req
        .url()?
        .query_pairs()
        .find(|(k, _)| k == "format")
        .map(|(_, v)| v.into_owned())
        .as_deref()
    {
        None | Some("csv") => true,
        Some("json") => false,
        Some(_) => {
            return Err(ApiError::bad_request(
                "`format` must be \"csv\" or \"json\".",
            ));
        }
    };
    let rows = D1Store::new(env)?
        .export_rows(&caller.site.id, &filter, limit, EXPORT_ROWS)
        .await
        .map_err(ApiError::store)?;
    let mut response = if csv {
        Response::ok(to_csv(&rows))?
    } else {
        Response::from_json(&serde_json::json!({ "messages": rows }))?
    };
    let (kind, extension) = if csv {
        ("text/csv; charset=utf-8", "csv")
    } else {
        ("application/json", "json")
    };
    let headers = response.headers_mut();
    headers.set("content-type", kind)?;
    headers.set(
        "content-disposition",
        &format!("attachment; filename=\"conversations.{extension}\""),
    )?;
    headers.set("cache-control", "no-store")?;
    Ok(response)
}

/// The rows as CSV (RFC 4180: every field quoted, quotes doubled, CRLF), with a header
/// line and a byte-order mark so spreadsheet programs read the Vietnamese text as UTF-8.
/// A field starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`
/// so no spreadsheet program runs it as a formula (OWASP's CSV injection list: a program
/// may skip a leading tab or CR and read the formula after it).
fn to_csv(rows: &[ExportRow]) -> String {
    let mut out = String::from("\u{feff}");
    let fields = [
        "conversation_id",
        "user_id",
        "seq",
        "role",
        "kind",
        "created_at",
        "content",
        "down_votes",
        "up_votes",
        "comments",
        "author",
    ];
    push_line(&mut out, fields.iter().map(|f| (*f).to_string()));
    for row in rows {
        let time = chrono_iso(row.created_at);
        push_line(
            &mut out,
            [
                row.conversation_id.clone(),
                row.user_id.clone().unwrap_or_default(),
                format!("{}", row.seq as u64),
                row.role.clone(),
                row.kind.clone(),
                time,
                row.content.clone(),
                format!("{}", row.down_votes as u64),
                format!("{}", row.up_votes as u64),
                row.comments.clone().unwrap_or_default(),
                row.author.clone().unwrap_or_default(),
            ]
            .into_iter(),
        );
    }
    out
}

/// First characters that make a spreadsheet cell a formula.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

fn push_line(out: &mut String, fields: impl Iterator<Item = String>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        if field.starts_with(FORMULA_STARTS) {
            out.push('\'');
        }
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    }
    out.push_str("\r\n");
}

/// Unix milliseconds as `YYYY-MM-DDTHH:MM:SSZ`.
fn chrono_iso(ms: f64) -> String {
    let secs = (ms / 1000.0).floor() as i64;
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}
