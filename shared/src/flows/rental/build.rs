//! Structured answers built by code from the SQL rows (TEMPLATES.md §2.2, "Payload
//! construction"): the model's `LIST`/`TABLE`/`CHART` JSON only picks the mode and selects
//! or orders items; ids not in the rows are dropped, and every link is built from the
//! entity's path template, so no model-written URL reaches the widget.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::format::Sections;
use super::schema::EntitySchema;
use crate::boundary::SqlRows;
use crate::conversation::Language;
use crate::payload::{
    ChartKind, ChartPayload, ChartSeries, ColumnKind, ListItem, ListPayload, Payload, TableColumn,
    TablePayload,
};

/// `table.previewLimit`.
pub const PREVIEW_LIMIT: u32 = 10;

/// How an answer shows its rows (seed modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Entities with links.
    List,
    /// Columns and rows.
    Table,
    /// A chart.
    Chart,
}

impl Mode {
    /// `LIST`, `TABLE`, `CHART`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::List => "LIST",
            Self::Table => "TABLE",
            Self::Chart => "CHART",
        }
    }

    /// Parses a seed mode name (any case).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_uppercase().as_str() {
            "LIST" => Some(Self::List),
            "TABLE" => Some(Self::Table),
            "CHART" => Some(Self::Chart),
            _ => None,
        }
    }
}

/// The mode the model's sections ask for (exactly one present), else the hint, else
/// LIST when the rows can be a list, else TABLE.
pub fn wanted_mode(sections: Option<&Sections>, hint: Option<Mode>, rows: &SqlRows) -> Mode {
    if let Some(s) = sections {
        match (&s.list, &s.table, &s.chart) {
            (Some(_), None, None) => return Mode::List,
            (None, Some(_), None) => return Mode::Table,
            (None, None, Some(_)) => return Mode::Chart,
            _ => {}
        }
    }
    hint.unwrap_or(if title_column(rows).is_some() {
        Mode::List
    } else {
        Mode::Table
    })
}

fn column(rows: &SqlRows, name: &str) -> Option<usize> {
    rows.columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case(name))
}

fn title_column(rows: &SqlRows) -> Option<(usize, usize)> {
    let id = column(rows, "id")?;
    let title = column(rows, "title").or_else(|| column(rows, "name"))?;
    Some((id, title))
}

/// Text of a cell (numbers without a trailing `.0`).
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f > -1e15 && f < 1e15 && (f as i64) as f64 == f => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn is_numeric(rows: &SqlRows, index: usize) -> bool {
    let mut any = false;
    for row in &rows.rows {
        match row.get(index) {
            Some(Value::Number(_)) => any = true,
            Some(Value::Null) | None => {}
            _ => return false,
        }
    }
    any
}

fn is_date(rows: &SqlRows, index: usize) -> bool {
    let name = rows.columns[index].to_ascii_lowercase();
    (name.ends_with("_at") || name.contains("date"))
        && rows.rows.iter().all(|row| match row.get(index) {
            Some(Value::String(s)) => {
                let b = s.as_bytes();
                b.len() >= 10 && b[4] == b'-' && b[7] == b'-'
            }
            Some(Value::Null) | None => true,
            _ => false,
        })
}

/// The payload for `mode` (falling back to TABLE when the rows cannot take it) and the
/// mode actually used; its words (a chart's text alternative) in `language`.
pub fn build(
    rows: &SqlRows,
    mode: Mode,
    entity: Option<&EntitySchema>,
    sections: Option<&Sections>,
    language: Language,
) -> (Mode, Payload) {
    match mode {
        Mode::List => {
            if let Some(list) = list(rows, entity, sections) {
                return (Mode::List, list);
            }
        }
        Mode::Chart => {
            let kind = sections.and_then(|s| s.chart.as_ref());
            if let Some(chart) = chart(rows, kind, language) {
                return (Mode::Chart, chart);
            }
        }
        Mode::Table => {}
    }
    (Mode::Table, table(rows, entity))
}

fn list(
    rows: &SqlRows,
    entity: Option<&EntitySchema>,
    sections: Option<&Sections>,
) -> Option<Payload> {
    let entity = entity?;
    let (id, title) = title_column(rows)?;
    let subtitle_columns: Vec<usize> = ["price", "area_m2", "district", "city", "budget_max"]
        .iter()
        .filter_map(|c| column(rows, c))
        .collect();
    let item = |row: &Vec<Value>| {
        let id_text = text(row.get(id).unwrap_or(&Value::Null));
        let parts: Vec<String> = subtitle_columns
            .iter()
            .map(|i| text(row.get(*i).unwrap_or(&Value::Null)))
            .filter(|t| !t.is_empty())
            .collect();
        ListItem {
            path: entity.path_for(&id_text),
            id: id_text,
            title: text(row.get(title).unwrap_or(&Value::Null)),
            entity: entity.entity.clone(),
            subtitle: (!parts.is_empty()).then(|| parts.join(" · ")),
        }
    };
    let all: Vec<ListItem> = rows.rows.iter().map(item).collect();
    // The model may select and order items by id; anything else it wrote is ignored.
    let chosen: Vec<String> = sections
        .and_then(|s| s.list.as_ref())
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(|i| i.get("id").map(text)).collect())
        .unwrap_or_default();
    let mut items: Vec<ListItem> = Vec::new();
    for id in &chosen {
        if let Some(found) = all.iter().find(|i| &i.id == id)
            && !items.iter().any(|i| &i.id == id)
        {
            items.push(found.clone());
        }
    }
    if items.is_empty() {
        items = all;
    }
    Some(Payload::List(ListPayload {
        items,
        total: rows.rows.len() as u64,
    }))
}

/// A table of the rows. With an entity and a title column (`title`, else `name`) beside the
/// id, the title comes first and links to the row's page (the column a visitor reads and
/// the one kept in view on a phone); the id is plain text. Without a title, the id links.
fn table(rows: &SqlRows, entity: Option<&EntitySchema>) -> Payload {
    let titled = title_column(rows).filter(|_| entity.is_some());
    let link = titled.map_or_else(|| column(rows, "id"), |(_, title)| Some(title));
    let mut order: Vec<usize> = (0..rows.columns.len()).collect();
    if let Some((_, title)) = titled {
        order.retain(|i| *i != title);
        order.insert(0, title);
    }
    let columns: Vec<(usize, TableColumn)> = order
        .into_iter()
        .map(|i| {
            let name = &rows.columns[i];
            let column_type = if entity.is_some() && Some(i) == link {
                ColumnKind::Link
            } else if is_numeric(rows, i) {
                ColumnKind::Number
            } else if is_date(rows, i) {
                ColumnKind::Date
            } else {
                ColumnKind::String
            };
            let column = TableColumn {
                key: name.clone(),
                label: name.clone(),
                column_type,
            };
            (i, column)
        })
        .collect();
    let id_column = column(rows, "id");
    let table_rows = rows
        .rows
        .iter()
        .map(|row| {
            let mut cells = Map::new();
            for (i, column) in &columns {
                let value = row.get(*i).cloned().unwrap_or(Value::Null);
                let cell = match (column.column_type, entity) {
                    (ColumnKind::Link, Some(entity)) => {
                        let id = id_column
                            .and_then(|c| row.get(c))
                            .map(text)
                            .unwrap_or_default();
                        serde_json::json!({"text": text(&value), "href": entity.path_for(&id)})
                    }
                    (_, _) => match value {
                        Value::Bool(b) => Value::from(i64::from(b)),
                        Value::Array(_) | Value::Object(_) => Value::String(value.to_string()),
                        other => other,
                    },
                };
                cells.insert(column.key.clone(), cell);
            }
            cells
        })
        .collect();
    Payload::Table(TablePayload {
        columns: columns.into_iter().map(|(_, c)| c).collect(),
        rows: table_rows,
        preview_limit: Some(PREVIEW_LIMIT),
    })
}

fn chart(rows: &SqlRows, hint: Option<&Value>, language: Language) -> Option<Payload> {
    let label = (0..rows.columns.len()).find(|i| !is_numeric(rows, *i))?;
    let value = (0..rows.columns.len()).find(|i| *i != label && is_numeric(rows, *i))?;
    let kind = match hint.and_then(|h| h.get("type")).and_then(Value::as_str) {
        Some("line") => ChartKind::Line,
        Some("pie") => ChartKind::Pie,
        _ => ChartKind::Bar,
    };
    let labels: Vec<String> = rows
        .rows
        .iter()
        .map(|r| text(r.get(label).unwrap_or(&Value::Null)))
        .collect();
    let values: Vec<f64> = rows
        .rows
        .iter()
        .map(|r| r.get(value).and_then(Value::as_f64).unwrap_or(0.0))
        .collect();
    let (label_name, value_name) = (&rows.columns[label], &rows.columns[value]);
    Some(Payload::Chart(ChartPayload {
        chart: kind,
        title: None,
        alt: match language {
            Language::Vi => format!("{value_name} theo {label_name} ({} giá trị)", labels.len()),
            Language::En => format!("{value_name} by {label_name} ({} values)", labels.len()),
        },
        labels,
        series: alloc::vec![ChartSeries {
            name: value_name.clone(),
            values,
        }],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use serde_json::json;

    fn rooms() -> EntitySchema {
        EntitySchema {
            entity: "room".into(),
            path: "/rooms/{id}".into(),
            description: String::new(),
            columns: Vec::new(),
        }
    }

    fn rows(columns: &[&str], rows: Vec<Vec<Value>>) -> SqlRows {
        SqlRows {
            columns: columns.iter().map(|c| (*c).into()).collect(),
            rows,
            ..SqlRows::default()
        }
    }

    fn table_of(payload: Payload) -> TablePayload {
        match payload {
            Payload::Table(table) => table,
            other => panic!("not a table: {other:?}"),
        }
    }

    #[test]
    fn a_table_with_a_title_leads_with_the_title_linked_and_keeps_the_id_as_text() {
        let result = rows(
            &["id", "price", "title"],
            vec![vec![
                json!("r-101"),
                json!(2_500_000),
                json!("Phòng gần chợ"),
            ]],
        );
        let linked = table_of(table(&result, Some(&rooms())));
        let keys: Vec<&str> = linked.columns.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["title", "id", "price"]);
        assert_eq!(linked.columns[0].column_type, ColumnKind::Link);
        assert_eq!(linked.columns[1].column_type, ColumnKind::String);
        let row = &linked.rows[0];
        assert_eq!(
            row["title"],
            json!({"text": "Phòng gần chợ", "href": "/rooms/r-101"})
        );
        assert_eq!(row["id"], json!("r-101"));
        assert_eq!(row["price"], json!(2_500_000));
    }

    #[test]
    fn without_a_title_the_id_links_and_without_an_entity_nothing_does() {
        let result = rows(&["id", "price"], vec![vec![json!("r-7"), json!(1_800_000)]]);
        let linked = table_of(table(&result, Some(&rooms())));
        assert_eq!(linked.columns[0].column_type, ColumnKind::Link);
        assert_eq!(
            linked.rows[0]["id"],
            json!({"text": "r-7", "href": "/rooms/r-7"})
        );
        let titled = rows(
            &["id", "title"],
            vec![vec![json!("r-7"), json!("Phòng đẹp")]],
        );
        let plain = table_of(table(&titled, None));
        assert!(
            plain
                .columns
                .iter()
                .all(|c| c.column_type != ColumnKind::Link)
        );
        assert_eq!(plain.rows[0]["title"], json!("Phòng đẹp"));
    }
}
