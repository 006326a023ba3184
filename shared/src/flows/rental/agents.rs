//! The four agents' model calls and the tolerant readers of what they answer.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::build::Mode;
use crate::boundary::{ChatModel, ChatRequest, ModelCall};
use crate::engine;
use crate::error::Error;

/// The orchestrator's request types (seed `RequestType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestType {
    /// Needs SQL.
    Query,
    /// A greeting.
    Greeting,
    /// Needs clarification.
    Clarification,
    /// Small talk.
    GeneralChat,
}

impl RequestType {
    /// `QUERY`, `GREETING`, `CLARIFICATION`, `GENERAL_CHAT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Query => "QUERY",
            Self::Greeting => "GREETING",
            Self::Clarification => "CLARIFICATION",
            Self::GeneralChat => "GENERAL_CHAT",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_uppercase().as_str() {
            "QUERY" => Some(Self::Query),
            "GREETING" => Some(Self::Greeting),
            "CLARIFICATION" => Some(Self::Clarification),
            "GENERAL_CHAT" => Some(Self::GeneralChat),
            _ => None,
        }
    }
}

/// What the model decides in Agent 1 (`userRole`, `userId`, `businessContext` are code's).
#[derive(Debug, Clone, PartialEq)]
pub struct Orchestration {
    /// The conversational message (a draft for Agent 3 on the QUERY path).
    pub message: String,
    /// The request type.
    pub request_type: RequestType,
    /// Enough information to write SQL.
    pub ready_for_sql: bool,
    /// `intentModeHint`.
    pub mode_hint: Option<Mode>,
    /// `entityHint`.
    pub entity_hint: Option<String>,
    /// `filtersHint`.
    pub filters_hint: Option<String>,
}

/// The first JSON object in a model reply (code fences and leading prose allowed).
pub fn json_object(text: &str) -> Option<serde_json::Map<String, Value>> {
    let mut rest = text;
    while let Some(at) = rest.find('{') {
        let candidate = &rest[at..];
        let mut values = serde_json::Deserializer::from_str(candidate).into_iter::<Value>();
        if let Some(Ok(Value::Object(object))) = values.next() {
            return Some(object);
        }
        rest = &candidate[1..];
    }
    None
}

/// Reads Agent 1's reply; `None` when it is not the JSON asked for.
pub fn parse_orchestration(text: &str) -> Option<Orchestration> {
    let object = json_object(text)?;
    let request_type = object
        .get("requestType")
        .and_then(Value::as_str)
        .and_then(RequestType::parse)?;
    let string = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(ToString::to_string)
    };
    Some(Orchestration {
        message: string("message").unwrap_or_default(),
        request_type,
        ready_for_sql: object
            .get("readyForSql")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        mode_hint: string("intentModeHint").as_deref().and_then(Mode::parse),
        entity_hint: string("entityHint").filter(|e| super::schema::ENTITIES.contains(&e.as_str())),
        filters_hint: string("filtersHint"),
    })
}

/// Reads Agent 4's reply: `isValid` (seed: anything unreadable counts as valid) and the
/// reason.
pub fn parse_validation(text: &str) -> (bool, Option<String>) {
    let Some(object) = json_object(text) else {
        return (true, None);
    };
    let valid = object
        .get("isValid")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let reason = object.get("reason").and_then(Value::as_str).map(Into::into);
    (valid, reason)
}

/// The statement in Agent 2's reply: the body of a code fence if there is one, else the
/// whole reply, trimmed.
pub fn extract_sql(text: &str) -> String {
    if let Some(open) = text.find("```") {
        let after = &text[open + 3..];
        let body_start = after.find('\n').map_or(0, |n| n + 1);
        let body = &after[body_start..];
        let end = body.find("```").unwrap_or(body.len());
        return body[..end].trim().to_string();
    }
    text.trim().to_string()
}

/// Calls the model and returns its whole text (no streaming to the visitor).
pub async fn complete<M: ChatModel>(model: &M, request: &ChatRequest) -> Result<String, Error> {
    engine::complete(model, &ModelCall::new(request))
        .await
        .map_err(Error::ChatModel)
}

/// Rows as compact JSON objects for a prompt, at most `max` of them.
pub fn rows_json(rows: &crate::boundary::SqlRows, max: usize) -> String {
    let objects: Vec<Value> = rows
        .rows
        .iter()
        .take(max)
        .map(|row| {
            let mut object = serde_json::Map::new();
            for (column, value) in rows.columns.iter().zip(row) {
                object.insert(column.clone(), value.clone());
            }
            Value::Object(object)
        })
        .collect();
    serde_json::to_string(&objects).unwrap_or_default()
}
