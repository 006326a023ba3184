//! The seed's direct JSON interface (seed 003 §1.1 input, §5 output, §9.2 stream),
//! `POST /knowledge/query` with the secret key (TEMPLATES.md §3.4):
//!
//! - [`SeedInput`]: `query`, `history_chat`, `user_context` (the identity — trusted only
//!   because the call carries the secret key; a `tenant_id` other than the site is
//!   refused), `agents` (may only *restrict* the configured agents and their tools);
//! - [`final_output`]: the seed's final output JSON (or its error structure) from a turn's
//!   answer and payloads;
//! - [`SeedStreamEncoder`]: the turn as the seed's stream of
//!   `{"node":"execute_planning","output":{…}}` objects (SSE `data:` lines), then the final
//!   output.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::config::KnowledgeConfig;
use crate::stream::{EncodeError, TurnEncoder};
use crate::turn::TurnEvent;

/// One message of `history_chat`.
#[derive(Debug, Clone, Deserialize)]
pub struct SeedMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// `user_context`.
#[derive(Debug, Clone, Deserialize)]
pub struct SeedUserContext {
    /// The user.
    pub user_id: String,
    /// Must be the site's id when given.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// Permission scopes.
    #[serde(default)]
    pub permissions: Vec<String>,
    /// The user's department.
    #[serde(default)]
    pub department: Option<String>,
}

/// An agent named in the input: its tools (the only part used, to restrict).
#[derive(Debug, Clone, Deserialize)]
pub struct SeedAgent {
    /// Its tools.
    #[serde(default)]
    pub tools: Vec<SeedTool>,
}

/// A tool named in the input.
#[derive(Debug, Clone, Deserialize)]
pub struct SeedTool {
    /// The tool's name.
    pub name: String,
}

/// The seed's input structure.
#[derive(Debug, Clone, Deserialize)]
pub struct SeedInput {
    /// The question.
    pub query: String,
    /// Earlier messages, oldest first.
    #[serde(default)]
    pub history_chat: Vec<SeedMessage>,
    /// Who asks.
    #[serde(default)]
    pub user_context: Option<SeedUserContext>,
    /// Agents to use (a subset of the configured ones).
    #[serde(default)]
    pub agents: Option<BTreeMap<String, SeedAgent>>,
}

impl KnowledgeConfig {
    /// These settings with only the agents (and their tools) `agents` names: an input may
    /// restrict the configured agents, never add an agent or a tool.
    pub fn restricted_to(&self, agents: &BTreeMap<String, SeedAgent>) -> Self {
        let mut config = self.clone();
        config.agents.retain(|a| agents.contains_key(&a.id));
        for agent in &mut config.agents {
            if let Some(named) = agents.get(&agent.id)
                && !named.tools.is_empty()
            {
                agent
                    .tools
                    .retain(|t| named.tools.iter().any(|n| n.name == t.name.as_str()));
            }
        }
        config
    }
}

/// The seed's final output from a turn's answer text and its `final` payload: the payload
/// without its `type`, with `answer` first (success), or the error structure as it is.
pub fn final_output(answer: &str, final_payload: Option<&Value>) -> Value {
    let mut out = Map::new();
    match final_payload {
        Some(Value::Object(payload)) if payload.get("type") == Some(&"final".into()) => {
            out.insert("answer".into(), answer.into());
            for (k, v) in payload {
                if k != "type" {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Some(Value::Object(payload)) => {
            for (k, v) in payload {
                if k != "type" {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        // Chitchat: the answer alone.
        _ => {
            out.insert("answer".into(), answer.into());
            out.insert("is_chitchat".into(), true.into());
        }
    }
    Value::Object(out)
}

/// A percentage as the turn wrote it (`81.7`, not the `f32`'s `81.69999694824219`): its
/// shortest decimal text read as an `f64`.
fn as_written(percentage: f32) -> Value {
    alloc::format!("{percentage}")
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A turn as the seed's stream (§9.2) of `execute_planning` node outputs, then the final
/// output, as SSE `data:` lines; a failed turn ends with
/// `{"error":true,"error_code":<code>,"error_message":<message>}`.
#[derive(Debug, Default)]
pub struct SeedStreamEncoder {
    tasks: Vec<Value>,
    answer: String,
    final_payload: Option<Value>,
    ended: bool,
}

impl SeedStreamEncoder {
    /// A fresh encoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn data(out: &mut String, value: &Value) {
        out.push_str("data: ");
        out.push_str(&value.to_string());
        out.push_str("\n\n");
    }

    fn node(out: &mut String, output: Value) {
        Self::data(out, &json!({"node": "execute_planning", "output": output}));
    }

    /// The plan's task whose step number starts `message` (`Task 2/3: …`).
    fn task_of(&self, message: &str) -> Option<&Value> {
        let rest = message
            .strip_prefix("Task ")
            .or_else(|| message.strip_prefix("Completed "))?;
        let step: u64 = rest.split('/').next()?.parse().ok()?;
        self.tasks.iter().find(|t| t["step_number"] == step)
    }
}

impl TurnEncoder for SeedStreamEncoder {
    fn encode(&mut self, event: &TurnEvent, out: &mut String) -> Result<(), EncodeError> {
        if self.ended {
            return Err(EncodeError::AfterEnd);
        }
        match event {
            TurnEvent::Progress {
                message,
                percentage,
                stage,
            } => {
                let stage = stage.as_deref().unwrap_or_default();
                if stage == "plan_ready" {
                    // Sent with its plan summary, from the `plan` payload that follows.
                    return Ok(());
                }
                let mut output = json!({"processing_status": stage,
                    "progress_percentage": percentage.map(as_written),
                    "progress_message": message});
                if let Some(task) = self.task_of(message) {
                    let brief = json!({"agent": task["agent"], "tool": task["tool"],
                                       "purpose": task["purpose"]});
                    match stage {
                        "executing_task" => output["current_task"] = brief,
                        "task_completed" => {
                            let mut done = brief;
                            done["status"] = "completed".into();
                            output["completed_task"] = done;
                        }
                        _ => {}
                    }
                }
                Self::node(out, output);
            }
            TurnEvent::Payload { kind, data } if kind == "plan" => {
                self.tasks = data["plan_summary"]["tasks"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                Self::node(
                    out,
                    json!({"processing_status": "plan_ready", "progress_percentage": 75,
                           "progress_message": "Execution plan is ready",
                           "plan_summary": data["plan_summary"]}),
                );
            }
            TurnEvent::Payload { kind, data } if kind == "final" => {
                self.final_payload = Some(data.clone());
            }
            TurnEvent::Chunk { text } => self.answer.push_str(text),
            TurnEvent::Completed { .. } => {
                self.ended = true;
                let output = final_output(&self.answer, self.final_payload.as_ref());
                Self::data(out, &output);
            }
            TurnEvent::Failed { code, message } => {
                self.ended = true;
                Self::data(
                    out,
                    &json!({"error": true, "error_code": code, "error_message": message}),
                );
            }
            _ => {}
        }
        Ok(())
    }

    fn close(&mut self, out: &mut String) -> bool {
        if self.ended {
            return false;
        }
        self.ended = true;
        Self::data(
            out,
            &json!({"error": true, "error_code": crate::stream::native::CLOSED_CODE,
                    "error_message": "The stream closed before the turn ended."}),
        );
        true
    }

    fn is_ended(&self) -> bool {
        self.ended
    }
}
