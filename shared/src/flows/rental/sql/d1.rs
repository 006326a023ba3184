//! A database error, as a sentence the SQL model can act on: no offsets into the scoped
//! statement, no names of the physical table or its JSON columns, no driver codes.

use alloc::format;
use alloc::string::String;

/// Words that name the storage behind the logical tables; a message holding one is
/// replaced by a generic sentence.
const INTERNAL: [&str; 9] = [
    "rental_rows",
    "json_extract",
    "site_id",
    "entity",
    "updated_at",
    "$.",
    "?1",
    "sqlite_",
    "d1_",
];

/// Longest detail quoted back from a database message.
const MAX_DETAIL: usize = 80;

/// The core of a D1/SQLite message: without `D1_ERROR:`/`Error:` prefixes, `at offset N`
/// and `: SQLITE_…` codes.
fn core(raw: &str) -> String {
    let mut text = raw.trim();
    loop {
        let before = text;
        for prefix in [
            "D1_ERROR:",
            "D1_EXEC_ERROR:",
            "Error:",
            "SqliteError:",
            "D1 error:",
        ] {
            if let Some(rest) = text.strip_prefix(prefix) {
                text = rest.trim_start();
            }
        }
        if text == before {
            break;
        }
    }
    let mut out = String::from(text);
    // Drivers may echo the statement (` in WITH rooms AS …`): never pass it on.
    for echo in [" in WITH ", " in SELECT ", " in with ", " in select "] {
        if let Some(at) = out.find(echo) {
            out.truncate(at);
        }
    }
    if let Some(at) = out.find(" at offset ") {
        let digits = out[at + 11..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(out.len(), |n| at + 11 + n);
        out.replace_range(at..digits, "");
    }
    if let Some(at) = out.find(": SQLITE_") {
        out.truncate(at);
    }
    if let Some(at) = out.find("SQLITE_") {
        out.truncate(at);
    }
    String::from(out.trim().trim_end_matches(':').trim())
}

/// What comes after `prefix` in `text`, up to [`MAX_DETAIL`] characters, when it is free
/// of internal names.
fn detail<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let at = text.find(prefix)?;
    let rest = text[at + prefix.len()..].trim();
    let end = rest
        .char_indices()
        .nth(MAX_DETAIL)
        .map_or(rest.len(), |(i, _)| i);
    let rest = &rest[..end];
    (!internal(rest)).then_some(rest)
}

fn internal(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    INTERNAL.iter().any(|word| lower.contains(word))
}

/// The sentence fed back to the SQL model for a failed statement.
pub fn error_sentence(raw: &str) -> String {
    let text = core(raw);
    let lower = text.to_ascii_lowercase();
    if let Some(column) = detail(&text, "no such column:") {
        return format!(
            "there is no column {column}: use only the columns listed for the tables the statement reads, written as alias.column when it reads several"
        );
    }
    if let Some(column) = detail(&text, "ambiguous column name:") {
        return format!(
            "the column {column} is in more than one table of the statement: write it as alias.{column}"
        );
    }
    if let Some(function) = detail(&text, "no such function:") {
        return format!(
            "the function {function} does not exist here: use only the allowed functions"
        );
    }
    if lower.contains("misuse of aggregate") || lower.contains("misuse of window") {
        return "an aggregate (count, sum, avg, min, max) is used where it cannot be: filter groups with HAVING, not WHERE, and do not nest aggregates".into();
    }
    if lower.contains("do not have the same number of result columns") {
        return "every SELECT combined with UNION, INTERSECT or EXCEPT must return the same number of columns".into();
    }
    if lower.contains("sub-select returns") || lower.contains("row value misused") {
        return "a subquery used as a value must return exactly one column".into();
    }
    if lower.contains("interrupt")
        || lower.contains("timeout")
        || lower.contains("timed out")
        || lower.contains("exceeded")
        || lower.contains("too big")
        || lower.contains("out of memory")
        || lower.contains("cpu")
    {
        return "the statement ran too long or produced too much data: read fewer rows (filter with WHERE, join on id) and return fewer, shorter columns".into();
    }
    if text.is_empty() || internal(&text) {
        return "the statement could not run on the listings: use only the listed tables and columns, and simplify it".into();
    }
    let end = text
        .char_indices()
        .nth(MAX_DETAIL)
        .map_or(text.len(), |(i, _)| i);
    format!("the statement could not run: {}", &text[..end])
}
