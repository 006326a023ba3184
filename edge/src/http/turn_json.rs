//! A turn answered as one JSON document instead of a stream: `POST
//! /conversations/{id}/messages` with `Accept: application/json` (and not
//! `text/event-stream`), for any template.
//!
//! The turn runs to completion (the same engine, the same stored messages), then:
//! - 200 `{conversation_id, user_message_id, message_id, kind, message, payloads,
//!   intent?, confidence?, usage?}` — `kind` and `payloads` as the native stream's
//!   `completed` and `payload` events carry them, `message` the whole text;
//! - a template that describes its replies ([`Assistant::reply_envelope`]; `rental`) adds
//!   its envelope's fields over these: `rental` answers seed 002's `ChatResponse` (`kind`
//!   `DATA` | `CONTENT` | `CONTROL`, `sessionId` = the conversation, `timestamp`,
//!   `message`, `payload?`) with the ids above;
//! - a failed turn answers its error (`{"error":{"code","message"}}`, the status the
//!   error has everywhere); a turn that had started keeps the visitor's message stored.

use concierge_core::engine::TurnOutcome;
use concierge_core::error::Error;
use concierge_core::turn::{Started, TurnEvent, TurnSink};
use serde_json::{Map, Value, json};
use worker::{Request, Response};

use crate::error::ApiError;

/// Whether the caller asked for the reply as JSON: `Accept` names `application/json` and
/// not `text/event-stream` (a stream stays the default, `*/*` included).
pub(crate) fn wants_json(req: &Request) -> bool {
    let accept = req
        .headers()
        .get("accept")
        .ok()
        .flatten()
        .unwrap_or_default();
    let types = || {
        accept
            .split(',')
            .map(|t| t.split(';').next().unwrap_or("").trim())
    };
    types().any(|t| t.eq_ignore_ascii_case("application/json"))
        && !types().any(|t| t.eq_ignore_ascii_case("text/event-stream"))
}

/// The JSON answer of a turn that ran (`result`), from its `started` and its events.
pub(crate) fn answer(
    result: Result<TurnOutcome, Error>,
    started: Option<Started>,
    events: Vec<TurnEvent>,
) -> Result<Response, ApiError> {
    let mut sink = Collected {
        started,
        ..Collected::default()
    };
    for event in events {
        sink.emit(event);
    }
    sink.answer(result)
}

impl Collected {
    fn answer(self, result: Result<TurnOutcome, Error>) -> Result<Response, ApiError> {
        let outcome = result.map_err(ApiError::from)?;
        let Some(started) = self.started else {
            return Err(ApiError::Internal(worker::Error::RustError(
                "turn never started".into(),
            )));
        };
        let mut body = Map::new();
        body.insert("conversation_id".into(), started.conversation_id.into());
        body.insert("user_message_id".into(), started.user_message_id.into());
        body.insert("message_id".into(), outcome.reply.id.clone().into());
        body.insert("kind".into(), outcome.reply.kind.as_str().into());
        body.insert("message".into(), self.text.into());
        body.insert("payloads".into(), Value::Array(self.payloads));
        if !self.tools.is_empty() {
            body.insert("tools".into(), self.tools.into());
        }
        if let Some(intent) = outcome.intent {
            body.insert("intent".into(), intent.into());
        }
        if let Some(confidence) = outcome.confidence {
            body.insert("confidence".into(), json!(confidence));
        }
        if let Some(usage) = outcome.usage {
            body.insert(
                "usage".into(),
                serde_json::to_value(usage).unwrap_or_default(),
            );
        }
        if let Some(envelope) = self.envelope {
            body.insert("sessionId".into(), body["conversation_id"].clone());
            if let Value::Object(fields) = envelope.data {
                body.extend(fields);
            }
        }
        Ok(Response::from_json(&Value::Object(body))?)
    }
}

/// The turn's events, gathered.
#[derive(Default)]
struct Collected {
    started: Option<Started>,
    text: String,
    payloads: Vec<Value>,
    /// The tools called, by name, in order.
    tools: Vec<String>,
    envelope: Option<concierge_core::turn::ReplyEnvelope>,
}

impl TurnSink for Collected {
    fn started(&mut self, started: &Started) {
        self.started = Some(started.clone());
    }

    fn emit(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::Chunk { text } => self.text.push_str(&text),
            TurnEvent::Payload { kind, data } => {
                self.payloads.push(json!({"kind": kind, "data": data}));
            }
            TurnEvent::Completed { reply, .. } => self.envelope = reply,
            TurnEvent::ToolStart { name, .. } => self.tools.push(name),
            _ => {}
        }
    }
}
