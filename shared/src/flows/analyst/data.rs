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
/// At most this many characters in one cell (a Google Sheets cell holds 50 000).
pub const MAX_CELL_CHARS: usize = 50_000;
/// At most this many columns per data set.
pub const MAX_COLUMNS: usize = 200;
/// A column name is at most this many characters (it is repeated in every stored row).
pub const MAX_COLUMN_NAME_CHARS: usize = 128;
/// At most this many cells (rows × columns) per data set. Typing a data set costs far more
/// than its text (a row is a JSON map, a cell a value and a copy of its column's name):
/// `examples/csv_memory.rs` measures a peak of 102 MB for 5,000 rows × 200 columns and 135
/// MB for 200,000 rows × 5 (64-bit host; wasm32's pointer-sized parts are half that), where
/// 16 million cells, which a 32 MB body could hold, took 2.2 GB.
pub const MAX_CELLS: usize = 1_000_000;

fn cell_too_long(row: usize, column: usize, name: Option<&str>) -> String {
    let name = name.map(|n| format!(" (`{n}`)")).unwrap_or_default();
    format!("CSV row {row}, column {column}{name}: a cell is at most {MAX_CELL_CHARS} characters")
}

fn too_many_cells() -> String {
    format!("a data set holds at most {MAX_CELLS} cells (rows × columns)")
}

fn too_many_rows() -> String {
    format!("at most {MAX_UPLOAD_ROWS} rows per data set")
}

fn too_many_columns(row: usize) -> String {
    format!(
        "CSV row {row} has more than {MAX_COLUMNS} cells: a data set has at most {MAX_COLUMNS} columns"
    )
}

/// Checks a header (column names, trimmed): none empty, none too long, not too many.
fn check_header(header: &[String]) -> Result<(), String> {
    if header.len() > MAX_COLUMNS {
        return Err(format!(
            "the header has {} columns: a data set has at most {MAX_COLUMNS} columns",
            header.len()
        ));
    }
    for (i, name) in header.iter().enumerate() {
        if name.is_empty() {
            return Err("CSV header has an empty column name".into());
        }
        if name.chars().count() > MAX_COLUMN_NAME_CHARS {
            return Err(format!(
                "header column {}: a column name is at most {MAX_COLUMN_NAME_CHARS} characters",
                i + 1
            ));
        }
    }
    Ok(())
}

/// A CSV reader's position and the bounds it enforces as it goes, so that no bound is
/// passed before it is noticed (a 30 MB cell or a row of millions of cells is refused at
/// its first character over, never held).
struct Reader {
    header: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
    record: Vec<String>,
    field: String,
    field_chars: usize,
    cells: usize,
}

impl Reader {
    /// The row number of the record being read (the header is row 1; blank lines are not
    /// counted).
    fn row(&self) -> usize {
        self.rows.len() + 1 + usize::from(self.header.is_some())
    }

    fn push_char(&mut self, c: char) -> Result<(), String> {
        self.field_chars += 1;
        if self.field_chars > MAX_CELL_CHARS {
            let column = self.record.len() + 1;
            let name = self
                .header
                .as_ref()
                .and_then(|h| h.get(column - 1))
                .map(String::as_str);
            return Err(cell_too_long(self.row(), column, name));
        }
        self.field.push(c);
        Ok(())
    }

    fn end_field(&mut self) -> Result<(), String> {
        let limit = self.header.as_ref().map_or(MAX_COLUMNS, Vec::len);
        if self.record.len() >= limit {
            return Err(match &self.header {
                Some(h) => format!(
                    "CSV row {} has more cells than the header's {}",
                    self.row(),
                    h.len()
                ),
                None => too_many_columns(self.row()),
            });
        }
        self.record.push(core::mem::take(&mut self.field));
        self.field_chars = 0;
        Ok(())
    }

    fn end_record(&mut self) -> Result<(), String> {
        self.end_field()?;
        let record = core::mem::take(&mut self.record);
        if record.len() == 1 && record[0].trim().is_empty() {
            return Ok(());
        }
        let Some(header) = &self.header else {
            let header: Vec<String> = record.into_iter().map(|h| h.trim().to_string()).collect();
            check_header(&header)?;
            self.header = Some(header);
            return Ok(());
        };
        if record.len() != header.len() {
            return Err(format!(
                "CSV row {} has {} cells; the header has {}",
                self.row(),
                record.len(),
                header.len()
            ));
        }
        if self.rows.len() >= MAX_UPLOAD_ROWS {
            return Err(too_many_rows());
        }
        self.cells += record.len();
        if self.cells > MAX_CELLS {
            return Err(too_many_cells());
        }
        self.rows.push(record);
        Ok(())
    }
}

/// Parses CSV text (RFC 4180 quoting; the first row is the header) into string rows,
/// within the bounds above ([`MAX_CELL_CHARS`], [`MAX_COLUMNS`],
/// [`MAX_COLUMN_NAME_CHARS`], [`MAX_UPLOAD_ROWS`], [`MAX_CELLS`]): the error names the
/// row and column where one is passed.
pub fn parse_csv(text: &str) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader {
        header: None,
        rows: Vec::new(),
        record: Vec::new(),
        field: String::new(),
        field_chars: 0,
        cells: 0,
    };
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    reader.push_char('"')?;
                }
                '"' => quoted = false,
                c => reader.push_char(c)?,
            }
            continue;
        }
        match c {
            '"' if reader.field.is_empty() => quoted = true,
            ',' => reader.end_field()?,
            '\r' => {}
            '\n' => {
                reader.end_record()?;
                any = false;
            }
            c => reader.push_char(c)?,
        }
    }
    if quoted {
        return Err("CSV has an unclosed quote".into());
    }
    if any {
        reader.end_record()?;
    }
    let header = reader
        .header
        .ok_or("CSV is empty: a header row is required")?;
    Ok((header, reader.rows))
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

fn typed(cell: String, kind: &str) -> Value {
    if cell.trim().is_empty() {
        return Value::Null;
    }
    match kind {
        "number" => parse_number(&cell).map_or(Value::Null, super::eval::to_json),
        "date" => parse_date(&cell).map_or(Value::Null, Value::String),
        "bool" => Value::Bool(cell.trim().eq_ignore_ascii_case("true")),
        _ if cell.trim().len() == cell.len() => Value::String(cell),
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

/// Types string cells by column (consuming them row by row, so a row's text is freed as
/// soon as it is typed). Checks the bounds [`parse_csv`] checks as it reads, for tables
/// made otherwise.
pub fn prepare_table(header: Vec<String>, cells: Vec<Vec<String>>) -> Result<Prepared, String> {
    check_header(&header)?;
    if cells.len() > MAX_UPLOAD_ROWS {
        return Err(too_many_rows());
    }
    if cells.len().saturating_mul(header.len()) > MAX_CELLS {
        return Err(too_many_cells());
    }
    for (i, row) in cells.iter().enumerate() {
        if row.len() != header.len() {
            return Err(format!(
                "row {} has {} cells; the header has {}",
                i + 1,
                row.len(),
                header.len()
            ));
        }
        if let Some(c) = row
            .iter()
            .position(|cell| cell.chars().count() > MAX_CELL_CHARS)
        {
            return Err(cell_too_long(i + 2, c + 1, Some(&header[c])));
        }
    }
    let kinds: Vec<&'static str> = (0..header.len())
        .map(|c| kind_of(&cells.iter().map(|r| r[c].as_str()).collect::<Vec<_>>()))
        .collect();
    let rows: Vec<Value> = cells
        .into_iter()
        .map(|r| {
            let mut row = Map::new();
            for ((name, cell), kind) in header.iter().zip(r).zip(&kinds) {
                row.insert(name.clone(), typed(cell, kind));
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
/// The same bounds as CSV, checked as the cells are read: the error names the row
/// (`rows[i]`) and key.
pub fn prepare_json(rows: &[Value]) -> Result<Prepared, String> {
    if rows.len() > MAX_UPLOAD_ROWS {
        return Err(too_many_rows());
    }
    let mut header: Vec<String> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let Value::Object(map) = row else {
            return Err(format!("rows[{i}] must be an object"));
        };
        for key in map.keys() {
            if !header.contains(key) {
                if header.len() == MAX_COLUMNS {
                    return Err(format!(
                        "rows[{i}] has a key beyond the first {MAX_COLUMNS}: a data set has at most {MAX_COLUMNS} columns"
                    ));
                }
                header.push(key.clone());
            }
        }
    }
    check_header(&header)?;
    if rows.len().saturating_mul(header.len()) > MAX_CELLS {
        return Err(too_many_cells());
    }
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let mut typed = Vec::with_capacity(header.len());
        for key in &header {
            let cell = match row.get(key) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            if cell.chars().count() > MAX_CELL_CHARS {
                return Err(format!(
                    "rows[{i}] `{key}`: a cell is at most {MAX_CELL_CHARS} characters"
                ));
            }
            typed.push(cell);
        }
        cells.push(typed);
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn bounds_are_refused_where_they_are_passed() {
        let at = format!("a,b\n1,{}\n", "ệ".repeat(MAX_CELL_CHARS));
        assert!(parse_csv(&at).is_ok());
        let over = format!("a,b\n1,2\n3,\"{}\"\n", "x".repeat(MAX_CELL_CHARS + 1));
        assert_eq!(
            parse_csv(&over).unwrap_err(),
            "CSV row 3, column 2 (`b`): a cell is at most 50000 characters"
        );
        let wide = vec!["c"; MAX_COLUMNS + 1].join(",");
        assert!(
            parse_csv(&wide)
                .unwrap_err()
                .contains("at most 200 columns")
        );
        let long_name = format!("a,{}\n1,2\n", "n".repeat(MAX_COLUMN_NAME_CHARS + 1));
        assert!(
            parse_csv(&long_name)
                .unwrap_err()
                .contains("header column 2")
        );
        assert!(
            parse_csv(&format!("a\n{}\n", ",".repeat(1000)))
                .unwrap_err()
                .contains("row 2 has more cells")
        );
        let line = format!("{}\n", vec!["1"; 100].join(","));
        let many = format!(
            "{}\n{}",
            (0..100)
                .map(|i| format!("c{i}"))
                .collect::<Vec<_>>()
                .join(","),
            line.repeat(MAX_CELLS / 100 + 1)
        );
        assert!(parse_csv(&many).unwrap_err().contains("1000000 cells"));
        // JSON rows: any value, not only strings, counts in its written form.
        let nested = serde_json::json!([{"a": 1}, {"a": vec![1; MAX_CELL_CHARS / 2]}]);
        let rows = nested.as_array().unwrap();
        assert!(prepare_json(rows).unwrap_err().starts_with("rows[1] `a`"));
    }
}
