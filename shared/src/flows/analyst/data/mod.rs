//! Merchant data sets at upload (TEMPLATES.md §1.3): CSV parsing and per-column type
//! inference, accepting Vietnamese number (`150.000.000`, `1,5`) and date (`d/m/yyyy`)
//! formats; values are normalised (numbers as JSON numbers, dates as ISO strings).
//!
//! The CSV reader is in `csv`; this file holds the bounds, cell parsing and typing.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::boundary::DataField;

mod csv;

pub use csv::{CsvReader, parse_csv};

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

/// What the cells of a column seen so far allow it to be: a column is a number if every
/// non-blank cell is one, else a date if every one is, else a bool, else a string.
#[derive(Debug, Clone, Copy)]
struct Kinds {
    present: bool,
    number: bool,
    date: bool,
    boolean: bool,
}

impl Kinds {
    const ANY: Self = Self {
        present: false,
        number: true,
        date: true,
        boolean: true,
    };

    fn note(&mut self, cell: &str) {
        let cell = cell.trim();
        if cell.is_empty() {
            return;
        }
        self.present = true;
        // A number is never a date nor a bool: once a cell is a number the column can only
        // be one, and the other tests are skipped.
        if self.number && parse_number(cell).is_some() {
            self.date = false;
            self.boolean = false;
            return;
        }
        self.number = false;
        self.date = self.date && parse_date(cell).is_some();
        self.boolean = self.boolean
            && (cell.eq_ignore_ascii_case("true") || cell.eq_ignore_ascii_case("false"));
    }

    fn kind(&self) -> &'static str {
        match *self {
            Self { present: false, .. } => "string",
            Self { number: true, .. } => "number",
            Self { date: true, .. } => "date",
            Self { boolean: true, .. } => "bool",
            _ => "string",
        }
    }
}

/// A table's columns typed slice by slice: [`Typing::note`] checks rows and notes their
/// cells' kinds (a caller may yield between slices), [`Typing::typed`] then types rows
/// with the kinds of the whole table and [`Typing::fields`] describes the columns with
/// the first examples typed. [`prepare_table`] is one slice.
#[derive(Debug)]
pub struct Typing {
    header: Vec<String>,
    kinds: Vec<Kinds>,
    rows: usize,
    examples: Vec<Vec<Value>>,
}

impl Typing {
    /// Checks `header` (see [`check_header`]).
    pub fn new(header: Vec<String>) -> Result<Self, String> {
        check_header(&header)?;
        Ok(Self {
            kinds: alloc::vec![Kinds::ANY; header.len()],
            examples: alloc::vec![Vec::new(); header.len()],
            header,
            rows: 0,
        })
    }

    /// Checks the next `rows` (each as long as the header, no cell too long, the table
    /// within [`MAX_UPLOAD_ROWS`] and [`MAX_CELLS`]) and notes their kinds.
    pub fn note(&mut self, rows: &[Vec<String>]) -> Result<(), String> {
        let total = self.rows + rows.len();
        if total > MAX_UPLOAD_ROWS {
            return Err(too_many_rows());
        }
        if total.saturating_mul(self.header.len()) > MAX_CELLS {
            return Err(too_many_cells());
        }
        for (i, row) in rows.iter().enumerate() {
            let i = self.rows + i;
            if row.len() != self.header.len() {
                return Err(format!(
                    "row {} has {} cells; the header has {}",
                    i + 1,
                    row.len(),
                    self.header.len()
                ));
            }
            if let Some(c) = row
                .iter()
                .position(|cell| cell.chars().count() > MAX_CELL_CHARS)
            {
                return Err(cell_too_long(i + 2, c + 1, Some(&self.header[c])));
            }
        }
        for row in rows {
            for (kinds, cell) in self.kinds.iter_mut().zip(row) {
                kinds.note(cell);
            }
        }
        self.rows = total;
        Ok(())
    }

    /// The rows noted so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// `cells` (rows already noted) typed with every noted row's kinds, as JSON objects;
    /// the first distinct values of each column are kept as its examples.
    pub fn typed(&mut self, cells: Vec<Vec<String>>) -> Vec<Value> {
        let kinds: Vec<&'static str> = self.kinds.iter().map(Kinds::kind).collect();
        let rows: Vec<Value> = cells
            .into_iter()
            .map(|r| {
                let mut row = Map::new();
                for ((name, cell), kind) in self.header.iter().zip(r).zip(&kinds) {
                    row.insert(name.clone(), typed(cell, kind));
                }
                Value::Object(row)
            })
            .collect();
        for (c, examples) in self.examples.iter_mut().enumerate() {
            for row in &rows {
                if examples.len() == 3 {
                    break;
                }
                let v = row.get(&self.header[c]).cloned().unwrap_or(Value::Null);
                if !v.is_null() && !examples.contains(&v) {
                    examples.push(v);
                }
            }
        }
        rows
    }

    /// The columns: names, kinds, and the examples of the rows typed so far.
    pub fn fields(&self) -> Vec<DataField> {
        self.header
            .iter()
            .zip(&self.kinds)
            .zip(&self.examples)
            .map(|((name, kinds), examples)| DataField {
                name: name.clone(),
                kind: kinds.kind().into(),
                examples: examples.clone(),
            })
            .collect()
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
    let mut typing = Typing::new(header)?;
    typing.note(&cells)?;
    let rows = typing.typed(cells);
    Ok(Prepared {
        fields: typing.fields(),
        rows,
    })
}

/// Types JSON rows: string cells are inferred like CSV cells; numbers and booleans stay.
/// The same bounds as CSV, checked as the cells are read: the error names the row
/// (`rows[i]`) and key.
pub fn prepare_json(rows: &[Value]) -> Result<Prepared, String> {
    let (header, cells) = json_table(rows)?;
    prepare_table(header, cells)
}

/// JSON rows as a header (every key, in order of first use) and text cells, for
/// [`Typing`]: string cells are inferred like CSV cells; numbers and booleans as their JSON
/// text type back to themselves. Checks the bounds as [`prepare_json`] does.
pub fn json_table(rows: &[Value]) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
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
    Ok((header, cells))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
