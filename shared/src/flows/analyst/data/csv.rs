//! The bounded CSV reader (RFC 4180 quoting) behind [`parse_csv`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{
    MAX_CELL_CHARS, MAX_CELLS, MAX_COLUMNS, MAX_UPLOAD_ROWS, cell_too_long, check_header,
    too_many_cells, too_many_columns, too_many_rows,
};

/// Where the reader is within a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside quotes.
    Plain,
    /// Inside a quoted field.
    Quoted,
    /// Just after a `"` inside a quoted field: `""` is a quote, anything else ends the
    /// quotes (kept as a state, so a piece may end between the two quotes).
    QuoteSeen,
}

/// A CSV reader fed piece by piece ([`CsvReader::feed`]), so a caller can hand over rows
/// and yield between pieces (the Worker types and stores a large upload in slices, never
/// holding its thread for the whole body). Its position and the bounds it enforces as it
/// goes, so that no bound is passed before it is noticed (a 30 MB cell or a row of
/// millions of cells is refused at its first character over, never held). [`parse_csv`]
/// is one feed of the whole text.
#[derive(Debug)]
pub struct CsvReader {
    header: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
    /// Rows handed over by [`CsvReader::take_rows`] so far.
    taken: usize,
    record: Vec<String>,
    field: String,
    field_chars: usize,
    cells: usize,
    state: State,
    /// Whether the record being read has a character yet.
    any: bool,
    /// Whether a piece has been fed (a byte-order mark is skipped at the very start).
    started: bool,
}

impl Default for CsvReader {
    fn default() -> Self {
        Self::new()
    }
}

impl CsvReader {
    pub fn new() -> Self {
        Self {
            header: None,
            rows: Vec::new(),
            taken: 0,
            record: Vec::new(),
            field: String::new(),
            field_chars: 0,
            cells: 0,
            state: State::Plain,
            any: false,
            started: false,
        }
    }

    /// The row number of the record being read (the header is row 1; blank lines are not
    /// counted).
    fn row(&self) -> usize {
        self.taken + self.rows.len() + 1 + usize::from(self.header.is_some())
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
        if self.taken + self.rows.len() >= MAX_UPLOAD_ROWS {
            return Err(too_many_rows());
        }
        self.cells += record.len();
        if self.cells > MAX_CELLS {
            return Err(too_many_cells());
        }
        self.rows.push(record);
        Ok(())
    }

    /// Reads `piece`, the next part of the text (any split: a piece may end inside a field,
    /// a quoted field or a `""`).
    pub fn feed(&mut self, piece: &str) -> Result<(), String> {
        let piece = if self.started {
            piece
        } else {
            self.started = true;
            piece.strip_prefix('\u{feff}').unwrap_or(piece)
        };
        for c in piece.chars() {
            self.any = true;
            match (self.state, c) {
                (State::Quoted, '"') => self.state = State::QuoteSeen,
                (State::Quoted, c) => self.push_char(c)?,
                (State::QuoteSeen, '"') => {
                    self.state = State::Quoted;
                    self.push_char('"')?;
                }
                (State::QuoteSeen | State::Plain, c) => {
                    self.state = State::Plain;
                    self.plain(c)?;
                }
            }
        }
        Ok(())
    }

    /// A character outside quotes.
    fn plain(&mut self, c: char) -> Result<(), String> {
        match c {
            '"' if self.field.is_empty() => self.state = State::Quoted,
            ',' => self.end_field()?,
            '\r' => {}
            '\n' => {
                self.end_record()?;
                self.any = false;
            }
            c => self.push_char(c)?,
        }
        Ok(())
    }

    /// The header, once its row has been read.
    pub fn header(&self) -> Option<&[String]> {
        self.header.as_deref()
    }

    /// The rows read since the last call (complete records only).
    pub fn take_rows(&mut self) -> Vec<Vec<String>> {
        self.taken += self.rows.len();
        core::mem::take(&mut self.rows)
    }

    /// Ends the text: the header and the rows not taken yet.
    pub fn finish(mut self) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
        if self.state == State::Quoted {
            return Err("CSV has an unclosed quote".into());
        }
        if self.any {
            self.end_record()?;
        }
        let header = self
            .header
            .ok_or("CSV is empty: a header row is required")?;
        Ok((header, self.rows))
    }
}

/// Parses CSV text (RFC 4180 quoting; the first row is the header) into string rows,
/// within the bounds above ([`MAX_CELL_CHARS`], [`MAX_COLUMNS`],
/// [`MAX_COLUMN_NAME_CHARS`](super::MAX_COLUMN_NAME_CHARS), [`MAX_UPLOAD_ROWS`], [`MAX_CELLS`]): the error names the
/// row and column where one is passed.
pub fn parse_csv(text: &str) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let mut reader = CsvReader::new();
    reader.feed(text)?;
    reader.finish()
}
