//! The cap on a tool result sent back to the model (TEMPLATES.md §1.2.3: "≤ 16,000 chars,
//! with a 'truncated: k of n rows' note"). A result's row list (`rows`, `groups`, `items`,
//! `connections`, …: its longest top-level array) keeps its first `k` whole rows and gains
//! `"note": "truncated: k of n rows"` (and a `"truncated"` flag it carries becomes `true`), so the text stays valid JSON and no row, number or
//! character is cut. A result whose text is still too long without any row (one huge
//! value) becomes its text cut at a character boundary, with the same kind of note. The
//! `tool_end` event and the stored tool record carry the same capped result the model
//! read.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

/// At most this many characters of tool result text reach the model.
pub const MAX_RESULT_CHARS: usize = 16_000;

/// Characters of `value`'s JSON text, counted while it is written and never stored;
/// counting stops past `limit` (the result is then `limit + 1` or a little more).
fn chars_upto(value: &Value, limit: usize) -> usize {
    let mut text = Text {
        kept: None,
        chars: 0,
        limit,
    };
    let _ = core::fmt::write(&mut text, format_args!("{value}"));
    text.chars
}

/// The first `keep` characters of `value`'s JSON text; writing stops there.
fn text_prefix(value: &Value, keep: usize) -> String {
    let mut text = Text {
        kept: Some(String::new()),
        chars: 0,
        limit: keep,
    };
    let mut prefix = Prefix {
        text: &mut text,
        keep,
    };
    let _ = core::fmt::write(&mut prefix, format_args!("{value}"));
    text.kept.unwrap_or_default()
}

/// A `fmt::Write` that counts characters (and keeps some, for [`text_prefix`]).
struct Text {
    kept: Option<String>,
    chars: usize,
    limit: usize,
}

impl core::fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.chars += s.chars().count();
        if self.chars > self.limit {
            Err(core::fmt::Error)
        } else {
            Ok(())
        }
    }
}

struct Prefix<'t> {
    text: &'t mut Text,
    keep: usize,
}

impl core::fmt::Write for Prefix<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let before = self.text.chars;
        if let Some(kept) = self.text.kept.as_mut().filter(|_| before < self.keep) {
            kept.extend(s.chars().take(self.keep - before));
        }
        self.text.write_str(s)
    }
}

fn chars(value: &Value) -> usize {
    chars_upto(value, usize::MAX)
}

/// `value` capped to at most `max` characters of JSON text (see the module docs).
pub fn cap_result(value: Value, max: usize) -> Value {
    if chars_upto(&value, max) <= max {
        return value;
    }
    let Value::Object(mut map) = value else {
        return cut_text(&value, max);
    };
    let longest = map
        .iter()
        .filter_map(|(k, v)| v.as_array().map(|a| (k.clone(), a.len())))
        .filter(|(_, n)| *n > 0)
        .max_by_key(|(_, n)| *n);
    let Some((key, n)) = longest else {
        return cut_text(&Value::Object(map), max);
    };
    let rows = match map.remove(&key) {
        Some(Value::Array(rows)) => rows,
        _ => Vec::new(),
    };
    // The object without rows, with the longest note it can get; each row adds its text
    // and a comma.
    let mut shell = map.clone();
    shell.insert(key.clone(), Value::Array(Vec::new()));
    shell.insert("note".into(), note(n, n));
    let mut used = chars(&Value::Object(shell));
    let mut k = 0;
    for row in &rows {
        let cost = chars_upto(row, max) + usize::from(k > 0);
        if used + cost > max {
            break;
        }
        used += cost;
        k += 1;
    }
    let kept: Vec<Value> = rows.into_iter().take(k).collect();
    map.insert(key, Value::Array(kept));
    map.insert("note".into(), note(k, n));
    // Rows were left out here: a `truncated` flag the result carries (the query's own,
    // false when the query returned every row) must now say so too.
    if let Some(flag) = map.get_mut("truncated").filter(|f| f.is_boolean()) {
        *flag = Value::Bool(true);
    }
    let capped = Value::Object(map);
    if chars_upto(&capped, max) <= max {
        capped
    } else {
        cut_text(&capped, max)
    }
}

fn note(k: usize, n: usize) -> Value {
    Value::String(format!("truncated: {k} of {n} rows"))
}

/// The text of `value`, cut at a character boundary, with a note; within `max`.
fn cut_text(value: &Value, max: usize) -> Value {
    let total = match value {
        Value::String(s) => s.chars().count(),
        other => chars(other),
    };
    // The note's own length depends on `keep`: reserve room for the widest one.
    let room = format!(" … (truncated: {total} of {total} characters)")
        .chars()
        .count();
    let keep = max.saturating_sub(room);
    let mut out: String = match value {
        Value::String(s) => s.chars().take(keep).collect(),
        other => text_prefix(other, keep),
    };
    out.push_str(&format!(" … (truncated: {keep} of {total} characters)"));
    Value::String(out)
}
