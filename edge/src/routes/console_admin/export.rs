//! `GET /admin/conversations/export`: the filtered conversations' messages as a CSV or
//! JSON download, streamed: the Worker reads the site's copy of its conversations a page
//! at a time ([`PAGE`] conversations) and sends each page as it comes, so an export of
//! every conversation a site has needs neither a background job nor the memory to hold
//! it (`limit`, optional, takes the newest conversations only). A page that cannot be
//! read after the first breaks the download (the client sees it incomplete, never a file
//! that looks whole); the first page's failure is the request's error.

use futures_util::stream;
use worker::{Env, Request, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_console_stats::{ConversationFilter, ExportRow};
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;

use super::{EXPORT_CONVERSATIONS, filter};

/// Conversations read (and sent) per page.
const PAGE: u32 = 100;

/// An export under way: where it is and what it has sent.
struct Export {
    store: D1Store,
    site_id: String,
    filter: ConversationFilter,
    csv: bool,
    /// Conversations still to take.
    left: u32,
    /// The last conversation sent (creation time, id); `None` before the first page.
    after: Option<(f64, String)>,
    /// Whether a message has been written (JSON's commas).
    wrote: bool,
    done: bool,
}

impl Export {
    /// The next page's rows.
    async fn page(&self) -> Result<Vec<ExportRow>, ApiError> {
        self.store
            .export_page(
                &self.site_id,
                &self.filter,
                self.after.as_ref(),
                self.left.min(PAGE),
            )
            .await
            .map_err(ApiError::store)
    }

    /// `rows` as the download's next bytes (the first page's with the header), and the
    /// cursor moved past them; the closing bytes once a page comes back short.
    fn encode(&mut self, rows: &[ExportRow]) -> Vec<u8> {
        let asked = self.left.min(PAGE);
        let mut out = String::new();
        if self.after.is_none() {
            out.push_str(if self.csv {
                CSV_HEAD
            } else {
                "{\"messages\":["
            });
            if self.csv {
                push_line(&mut out, FIELDS.iter().map(|f| (*f).to_string()));
            }
        }
        let mut taken = 0;
        let mut last: Option<&str> = None;
        for row in rows {
            if last != Some(row.conversation_id.as_str()) {
                taken += 1;
                last = Some(row.conversation_id.as_str());
            }
            if self.csv {
                push_row(&mut out, row);
            } else {
                if self.wrote {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(row).unwrap_or_else(|_| "null".into()));
            }
            self.wrote = true;
        }
        self.left = self.left.saturating_sub(taken);
        self.after = Some(match rows.last() {
            Some(row) => (row.conversation_created_at, row.conversation_id.clone()),
            None => (f64::NEG_INFINITY, String::new()),
        });
        if taken < asked || self.left == 0 {
            self.done = true;
            if !self.csv {
                out.push_str("]}");
            }
        }
        out.into_bytes()
    }
}

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
    let mut export = Export {
        store: D1Store::new(env)?,
        site_id: caller.site.id.clone(),
        filter,
        csv,
        left: limit,
        after: None,
        wrote: false,
        done: false,
    };
    // The first page before the answer: its failure is the request's error.
    let rows = export.page().await?;
    let first = export.encode(&rows);
    let body = stream::unfold((Some(first), export), |(first, mut export)| async move {
        if let Some(first) = first {
            return Some((Ok::<_, worker::Error>(first), (None, export)));
        }
        if export.done {
            return None;
        }
        match export.page().await {
            Ok(rows) => {
                let bytes = export.encode(&rows);
                Some((Ok(bytes), (None, export)))
            }
            Err(error) => {
                export.done = true;
                Some((
                    Err(worker::Error::RustError(error.to_string())),
                    (None, export),
                ))
            }
        }
    });
    let mut response = Response::from_stream(body)?;
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

/// A CSV download's first characters: a byte-order mark, so spreadsheet programs read the
/// Vietnamese text as UTF-8.
const CSV_HEAD: &str = "\u{feff}";

/// The CSV's columns.
const FIELDS: [&str; 11] = [
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

/// One message as a CSV line (see [`push_line`]).
fn push_row(out: &mut String, row: &ExportRow) {
    push_line(
        out,
        [
            row.conversation_id.clone(),
            row.user_id.clone().unwrap_or_default(),
            format!("{}", row.seq as u64),
            row.role.clone(),
            row.kind.clone(),
            chrono_iso(row.created_at),
            row.content.clone(),
            format!("{}", row.down_votes as u64),
            format!("{}", row.up_votes as u64),
            row.comments.clone().unwrap_or_default(),
            row.author.clone().unwrap_or_default(),
        ]
        .into_iter(),
    );
}

// CSV lines follow RFC 4180: every field quoted, quotes doubled, CRLF. A field starting
// with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` so no spreadsheet
// program runs it as a formula (OWASP's CSV injection list: a program may skip a leading
// tab or CR and read the formula after it).

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
