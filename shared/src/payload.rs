//! Structured content a turn sends beside its text: lists, tables, charts, sources,
//! evidence, follow-up questions and control requests — typed here once for every template and every wire
//! format (TEMPLATES.md §0.2 and the rental `ChatResponse` decisions).
//!
//! A template hands a [`Payload`] to [`Turn::payload`](crate::engine::Turn::payload): the
//! turn emits it as a [`TurnEvent::Payload`](crate::turn::TurnEvent::Payload) (`kind` +
//! `data`) and stores it with the reply, so history and replays carry it too.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One piece of structured content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum Payload {
    /// Entities to show as a list of links (rooms, products, …).
    List(ListPayload),
    /// Rows to show as a table.
    Table(TablePayload),
    /// A rendered chart.
    Chart(ChartPayload),
    /// The sources an answer cites.
    Sources(Vec<Source>),
    /// The evidence behind an answer's claims.
    Evidence(Vec<Evidence>),
    /// Questions the visitor may ask next (tappable).
    FollowUps(Vec<String>),
    /// The assistant needs something from the visitor before it can go on.
    Control(ControlPayload),
    /// A plan about to run (`knowledge`: `{"type":"plan","plan_summary":{…}}`).
    Plan(Value),
    /// A template's final structured output (`knowledge`: `{"type":"final",…}`, or the
    /// seed's error structure with `"type":"error"`).
    Final(Value),
}

impl Payload {
    /// The payload's kind as the wire formats name it: `list`, `table`, `chart`, `sources`,
    /// `evidence`, `follow_ups`, `control`, `plan`, `final`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::List(_) => "list",
            Self::Table(_) => "table",
            Self::Chart(_) => "chart",
            Self::Sources(_) => "sources",
            Self::Evidence(_) => "evidence",
            Self::FollowUps(_) => "follow_ups",
            Self::Control(_) => "control",
            Self::Plan(_) => "plan",
            Self::Final(_) => "final",
        }
    }

    /// The payload's content, in the shape its kind defines (the `data` beside `kind`).
    pub fn data(&self) -> Value {
        let data = match self {
            Self::List(list) => serde_json::to_value(list),
            Self::Table(table) => serde_json::to_value(table),
            Self::Chart(chart) => serde_json::to_value(chart),
            Self::Sources(sources) => serde_json::to_value(sources),
            Self::Evidence(evidence) => serde_json::to_value(evidence),
            Self::FollowUps(questions) => serde_json::to_value(questions),
            Self::Control(control) => serde_json::to_value(control),
            Self::Plan(value) | Self::Final(value) => Ok(value.clone()),
        };
        data.unwrap_or_default()
    }
}

/// A list of entities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListPayload {
    /// The items shown.
    pub items: Vec<ListItem>,
    /// How many there are in all (may exceed `items`).
    pub total: u64,
}

/// One entity of a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListItem {
    /// The entity's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// A site-relative path to its page (`/rooms/123`), for a link.
    pub path: String,
    /// What it is (`room`, `product`, …).
    pub entity: String,
    /// A second line, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
}

/// Rows of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TablePayload {
    /// The columns, in order.
    pub columns: Vec<TableColumn>,
    /// The rows: column key → cell (`string | number | null | {text, href}`).
    pub rows: Vec<serde_json::Map<String, Value>>,
    /// How many rows to show before "more".
    #[serde(
        default,
        rename = "previewLimit",
        skip_serializing_if = "Option::is_none"
    )]
    pub preview_limit: Option<u32>,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableColumn {
    /// The key of this column's cells in each row.
    pub key: String,
    /// Its header.
    pub label: String,
    /// What its cells hold.
    #[serde(rename = "type")]
    pub column_type: ColumnKind,
}

/// What a table column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnKind {
    /// Text.
    String,
    /// A number.
    Number,
    /// A date (ISO-8601).
    Date,
    /// A link (`{text, href}`).
    Link,
}

/// A chart's data, drawn by the client (the widget renders inline SVG; no third-party
/// chart service).
///
/// On the wire it also carries seed 002's chart object on every surface (TEMPLATES.md
/// §2.4): `mimeType` `image/png`, the QuickChart `url` (built from the Chart.js
/// configuration, never fetched by the Worker), `width` 500, `height` 300, and `spec`, that
/// Chart.js configuration (`type`, `data.labels`, `data.datasets`). They are derived from
/// the fields below when it is written, so a stored chart written before them gains them too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ChartWire")]
pub struct ChartPayload {
    /// How to draw it.
    pub chart: ChartKind,
    /// Its title, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The category labels (x axis, or pie slices).
    pub labels: Vec<String>,
    /// One or more series of values, one value per label.
    pub series: Vec<ChartSeries>,
    /// A text alternative describing what the chart shows.
    pub alt: String,
}

/// Seed 002's chart size (QuickChart's default image size), in pixels.
pub const CHART_WIDTH: u32 = 500;
/// See [`CHART_WIDTH`].
pub const CHART_HEIGHT: u32 = 300;

impl ChartPayload {
    /// The Chart.js configuration that draws it (one dataset per series).
    pub fn chart_js(&self) -> ChartJs {
        ChartJs {
            kind: self.chart,
            data: ChartJsData {
                labels: self.labels.clone(),
                datasets: self
                    .series
                    .iter()
                    .map(|s| ChartJsDataset {
                        label: s.name.clone(),
                        data: s.values.clone(),
                    })
                    .collect(),
            },
        }
    }

    /// Seed 002's QuickChart URL for it: `https://quickchart.io/chart?c=<the Chart.js
    /// configuration, URI-component encoded>&w=500&h=300`. Built, never fetched.
    pub fn quickchart_url(&self) -> String {
        let config = serde_json::to_string(&self.chart_js()).unwrap_or_default();
        let mut url = String::from("https://quickchart.io/chart?c=");
        encode_uri_component(&config, &mut url);
        url.push_str(&alloc::format!("&w={CHART_WIDTH}&h={CHART_HEIGHT}"));
        url
    }
}

/// Appends `text` encoded as JavaScript's `encodeURIComponent` does: every UTF-8 byte but
/// `A–Z a–z 0–9 - _ . ! ~ * ' ( )` as `%XX`.
fn encode_uri_component(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xF)]));
        }
    }
}

/// A Chart.js configuration: what QuickChart draws (seed 002's chart `url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartJs {
    /// `bar`, `line` or `pie`.
    #[serde(rename = "type")]
    pub kind: ChartKind,
    /// The labels and datasets.
    pub data: ChartJsData,
}

/// A Chart.js configuration's `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartJsData {
    /// The category labels.
    pub labels: Vec<String>,
    /// One dataset per series.
    pub datasets: Vec<ChartJsDataset>,
}

/// One Chart.js dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartJsDataset {
    /// The series' name.
    pub label: String,
    /// Its values, one per label.
    pub data: Vec<f64>,
}

/// A [`ChartPayload`] as written: its own fields, then seed 002's chart object.
#[derive(Serialize)]
struct ChartWire {
    chart: ChartKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    labels: Vec<String>,
    series: Vec<ChartSeries>,
    alt: String,
    #[serde(rename = "mimeType")]
    mime_type: &'static str,
    url: String,
    width: u32,
    height: u32,
    spec: ChartJs,
}

impl From<ChartPayload> for ChartWire {
    fn from(chart: ChartPayload) -> Self {
        Self {
            mime_type: "image/png",
            url: chart.quickchart_url(),
            width: CHART_WIDTH,
            height: CHART_HEIGHT,
            spec: chart.chart_js(),
            chart: chart.chart,
            title: chart.title,
            labels: chart.labels,
            series: chart.series,
            alt: chart.alt,
        }
    }
}

/// How a chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    /// Bars per label.
    Bar,
    /// A line through the labels.
    Line,
    /// Slices of a whole (one series).
    Pie,
}

/// One series of a chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartSeries {
    /// Its name (legend).
    pub name: String,
    /// Its values, one per label.
    pub values: Vec<f64>,
}

/// A source an answer cites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// Its title.
    pub title: String,
    /// Where it is (an absolute http(s) URL, or a site-relative path for the site's own
    /// documents).
    pub url: String,
    /// The passage used, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// One claim of an answer and what supports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The claim.
    pub claim: String,
    /// The supporting sources' indexes in the turn's [`Payload::Sources`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<usize>,
    /// How sure the assistant is, 0 to 1, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
}

/// A request to the visitor (rental's `ControlPayload`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlPayload {
    /// Why (`CLARIFICATION`).
    pub reason: String,
    /// The questions to answer, when there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
}
