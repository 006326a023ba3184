//! Merchant data sets at upload (TEMPLATES.md §1.3): CSV parsing and per-column type
//! inference, accepting Vietnamese number (`150.000.000`, `1,5`) and date (`d/m/yyyy`)
//! formats; values are normalised (numbers as JSON numbers, dates as ISO strings).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::boundary::DataField;

/// At most this many rows per upload.
pub const MAX_UPLOAD_ROWS: usize = 200_000;

/// Parses CSV text (RFC 4180 quoting; the first row is the header) into string rows.
pub fn parse_csv(text: &str) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            ',' => record.push(core::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                record.push(core::mem::take(&mut field));
                records.push(core::mem::take(&mut record));
                any = false;
            }
            c => field.push(c),
        }
    }
    if quoted {
        return Err("CSV has an unclosed quote".into());
    }
    if any {
        record.push(field);
        records.push(record);
    }
    records.retain(|r| !(r.len() == 1 && r[0].trim().is_empty()));
    let mut iter = records.into_iter();
    let header: Vec<String> = iter
        .next()
        .ok_or("CSV is empty: a header row is required")?
        .into_iter()
        .map(|h| h.trim().to_string())
        .collect();
    if header.iter().any(String::is_empty) {
        return Err("CSV header has an empty column name".into());
    }
    let rows: Vec<Vec<String>> = iter.collect();
    for (i, row) in rows.iter().enumerate() {
        if row.len() != header.len() {
            return Err(format!(
                "CSV row {} has {} cells; the header has {}",
                i + 2,
                row.len(),
                header.len()
            ));
        }
    }
    Ok((header, rows))
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn grouped(s: &str, sep: char) -> bool {
    let mut parts = s.split(sep);
    parts.next().is_some_and(|g| digits(g) && g.len() <= 3)
        && s.contains(sep)
        && parts.all(|g| digits(g) && g.len() == 3)
}

/// A number in Vietnamese (`150.000.000`, `1,5`, `1.234,5`) or plain (`1.5`, `150000`)
/// notation. `1.500` is read as one thousand five hundred (Vietnamese grouping).
pub fn parse_number(cell: &str) -> Option<f64> {
    let s = cell.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let body = body.trim_end_matches(['đ', '₫']).trim();
    let plain: String = if grouped(body, '.') {
        body.replace('.', "")
    } else if let Some((int, frac)) = body.split_once(',') {
        let int_ok = digits(int) || grouped(int, '.');
        if !int_ok || !digits(frac) {
            return None;
        }
        format!("{}.{frac}", int.replace('.', ""))
    } else if let Some((int, frac)) = body.split_once('.') {
        if !digits(int) || !digits(frac) {
            return None;
        }
        body.to_string()
    } else if digits(body) {
        body.to_string()
    } else {
        return None;
    };
    let n: f64 = plain.parse().ok()?;
    Some(if neg { -n } else { n })
}

/// A date as ISO `YYYY-MM-DD[THH:MM:SS]`, from ISO or `d/m/yyyy`.
pub fn parse_date(cell: &str) -> Option<String> {
    let s = cell.trim();
    let b = s.as_bytes();
    if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        let (y, m, d) = (&s[0..4], &s[5..7], &s[8..10]);
        if digits(y) && valid(m, d) && (b.len() == 10 || b[10] == b'T' || b[10] == b' ') {
            return Some(s.replacen(' ', "T", 1));
        }
        return None;
    }
    let mut parts = s.split('/');
    let (d, m, y) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || !digits(y) || d.len() > 2 || m.len() > 2 {
        return None;
    }
    let (d, m) = (format!("{d:0>2}"), format!("{m:0>2}"));
    valid(&m, &d).then(|| format!("{y}-{m}-{d}"))
}

fn valid(m: &str, d: &str) -> bool {
    let (Ok(m), Ok(d)) = (m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    (1..=12).contains(&m) && (1..=31).contains(&d)
}

fn kind_of(cells: &[&str]) -> &'static str {
    let present: Vec<&&str> = cells.iter().filter(|c| !c.trim().is_empty()).collect();
    if present.is_empty() {
        return "string";
    }
    if present.iter().all(|c| parse_number(c).is_some()) {
        "number"
    } else if present.iter().all(|c| parse_date(c).is_some()) {
        "date"
    } else if present
        .iter()
        .all(|c| matches!(c.trim().to_lowercase().as_str(), "true" | "false"))
    {
        "bool"
    } else {
        "string"
    }
}

fn typed(cell: &str, kind: &str) -> Value {
    if cell.trim().is_empty() {
        return Value::Null;
    }
    match kind {
        "number" => parse_number(cell).map_or(Value::Null, super::eval::to_json),
        "date" => parse_date(cell).map_or(Value::Null, Value::String),
        "bool" => Value::Bool(cell.trim().eq_ignore_ascii_case("true")),
        _ => Value::String(cell.trim().to_string()),
    }
}

/// A data set ready to store: typed rows and inferred fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The columns, in header order.
    pub fields: Vec<DataField>,
    /// The rows, typed.
    pub rows: Vec<Value>,
}

/// Types string cells by column.
pub fn prepare_table(header: Vec<String>, cells: Vec<Vec<String>>) -> Result<Prepared, String> {
    if cells.len() > MAX_UPLOAD_ROWS {
        return Err(format!("at most {MAX_UPLOAD_ROWS} rows per data set"));
    }
    let kinds: Vec<&'static str> = (0..header.len())
        .map(|c| kind_of(&cells.iter().map(|r| r[c].as_str()).collect::<Vec<_>>()))
        .collect();
    let rows: Vec<Value> = cells
        .iter()
        .map(|r| {
            let mut row = Map::new();
            for (c, name) in header.iter().enumerate() {
                row.insert(name.clone(), typed(&r[c], kinds[c]));
            }
            Value::Object(row)
        })
        .collect();
    Ok(Prepared {
        fields: fields(&header, &kinds, &rows),
        rows,
    })
}

/// Types JSON rows: string cells are inferred like CSV cells; numbers and booleans stay.
pub fn prepare_json(rows: &[Value]) -> Result<Prepared, String> {
    let mut header: Vec<String> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let Value::Object(map) = row else {
            return Err(format!("rows[{i}] must be an object"));
        };
        for key in map.keys() {
            if !header.contains(key) {
                header.push(key.clone());
            }
        }
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            header
                .iter()
                .map(|h| match row.get(h) {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                })
                .collect()
        })
        .collect();
    prepare_table(header, cells)
}

fn fields(header: &[String], kinds: &[&'static str], rows: &[Value]) -> Vec<DataField> {
    header
        .iter()
        .zip(kinds)
        .map(|(name, kind)| {
            let mut examples: Vec<Value> = Vec::new();
            for row in rows {
                let v = row.get(name).cloned().unwrap_or(Value::Null);
                if !v.is_null() && !examples.contains(&v) {
                    examples.push(v);
                }
                if examples.len() == 3 {
                    break;
                }
            }
            DataField {
                name: name.clone(),
                kind: (*kind).into(),
                examples,
            }
        })
        .collect()
}
