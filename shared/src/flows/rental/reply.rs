//! How a rental reply is told to clients (TEMPLATES.md §2.4): seed 002's kind of reply —
//! `DATA`, `CONTENT` or `CONTROL` — and its `ChatResponse` (`{kind, sessionId, timestamp,
//! message, payload?}`), read from the stored reply so that a replay says the same.
//!
//! - The native stream's `completed` says `kind` `data` | `content` | `control` and carries
//!   `reply` = the `ChatResponse` without `message` (the chunks carry it) and without
//!   `sessionId` (the conversation is the session; `started` names it): [`envelope`].
//! - `POST /ai/chat` and a message sent with `Accept: application/json` answer the whole
//!   `ChatResponse`: [`chat_response`].

use serde_json::{Value, json};

use crate::boundary::iso_of_ms;
use crate::conversation::StoredMessage;
use crate::payload::{CHART_HEIGHT, CHART_WIDTH, ChartPayload, Payload};
use crate::turn::ReplyEnvelope;

/// The seed's kind of `reply`, as stored (`DATA`, `CONTENT` or `CONTROL`; a reply stored
/// without one is content).
pub fn seed_kind(reply: &StoredMessage) -> &'static str {
    match reply.meta_str("kind") {
        Some("DATA") => "DATA",
        Some("CONTROL") => "CONTROL",
        _ => "CONTENT",
    }
}

/// The `completed` event's kind and envelope for `reply`: the `ChatResponse` without
/// `message` and `sessionId`.
pub fn envelope(reply: &StoredMessage) -> ReplyEnvelope {
    let kind = seed_kind(reply);
    let mut data = json!({"kind": kind, "timestamp": iso_of_ms(reply.created_at)});
    if let Some(payload) = seed_payload(reply) {
        data["payload"] = payload;
    }
    ReplyEnvelope {
        kind: match kind {
            "DATA" => "data",
            "CONTROL" => "control",
            _ => "content",
        },
        data,
    }
}

/// The seed's whole `ChatResponse` for `reply` in session `session_id`: its envelope with
/// `sessionId` and `message`.
pub fn chat_response(reply: &StoredMessage, session_id: &str) -> Value {
    let mut response = envelope(reply).data;
    response["sessionId"] = session_id.into();
    response["message"] = reply.content.as_str().into();
    response
}

/// The seed's `ChatResponse.payload` of a stored reply: `DataPayload` (`mode` + `list` /
/// `table` / `chart`), `ControlPayload`, or none (content: the seed's `ContentPayload` is
/// absent, TEMPLATES.md §2.4).
pub fn seed_payload(reply: &StoredMessage) -> Option<Value> {
    reply.payloads.iter().find_map(|payload| match payload {
        Payload::List(list) => Some(json!({"mode": "LIST", "list": list})),
        Payload::Table(table) => Some(json!({"mode": "TABLE", "table": table})),
        Payload::Chart(chart) => Some(json!({"mode": "CHART", "chart": seed_chart(chart)})),
        Payload::Control(control) => serde_json::to_value(control).ok(),
        _ => None,
    })
}

/// The seed's chart object (`mimeType`, QuickChart `url`, `width`, `height`, `alt`) plus
/// `spec`, the Chart.js configuration the URL draws. The URL is built, never fetched.
fn seed_chart(chart: &ChartPayload) -> Value {
    json!({
        "mimeType": "image/png",
        "url": chart.quickchart_url(),
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "alt": chart.alt,
        "spec": chart.chart_js(),
    })
}
