//! The bounded CSV reader (RFC 4180 quoting) behind [`parse_csv`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{
    MAX_CELL_CHARS, MAX_CELLS, MAX_COLUMNS, MAX_UPLOAD_ROWS, cell_too_long, check_header,
    too_many_cells, too_many_columns, too_many_rows,
};

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
/// [`MAX_COLUMN_NAME_CHARS`](super::MAX_COLUMN_NAME_CHARS), [`MAX_UPLOAD_ROWS`], [`MAX_CELLS`]): the error names the
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
