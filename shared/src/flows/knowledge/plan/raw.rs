//! The router's reply as JSON (code fences, prose and trailing commas dropped) and its
//! tasks and queries as the model wrote them.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

/// The JSON object in a model's reply: code fences and prose around it dropped, and
/// trailing commas removed (the common ways models break JSON).
pub fn extract_json(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let body = text.get(start..=end)?;
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return Some(value);
    }
    serde_json::from_str::<Value>(&without_trailing_commas(body)).ok()
}

fn without_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// One task as the model wrote it.
pub(super) struct RawTask {
    pub(super) stage: u32,
    pub(super) agent: String,
    pub(super) tool: String,
    pub(super) message: String,
    pub(super) purpose: Option<String>,
    pub(super) query_index: Option<usize>,
}

pub(super) fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// `[{"1":"…"},{"2":"…"}]` (or plain strings) → queries by index.
pub(super) fn queries_of(value: Option<&Value>) -> Vec<(usize, String)> {
    let mut queries = Vec::new();
    for (position, item) in value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        match item {
            Value::String(q) if !q.trim().is_empty() => {
                queries.push((position + 1, q.trim().to_string()));
            }
            Value::Object(map) => {
                for (key, q) in map {
                    let (Ok(index), Some(q)) = (key.trim().parse::<usize>(), q.as_str()) else {
                        continue;
                    };
                    if !q.trim().is_empty() {
                        queries.push((index, q.trim().to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    queries.sort_by_key(|(i, _)| *i);
    queries.dedup_by_key(|(i, _)| *i);
    queries
}

pub(super) fn raw_tasks(planning: Option<&Value>) -> Vec<RawTask> {
    let mut tasks = Vec::new();
    let groups = planning
        .and_then(|p| p.get("tasks"))
        .and_then(Value::as_array);
    for group in groups.into_iter().flatten() {
        let Some(map) = group.as_object() else {
            continue;
        };
        for (key, list) in map {
            let Ok(stage) = key.trim().parse::<u32>() else {
                continue;
            };
            for task in list.as_array().into_iter().flatten() {
                let (Some(agent), Some(tool)) = (text(task, "agent"), text(task, "tool")) else {
                    continue;
                };
                tasks.push(RawTask {
                    stage,
                    agent,
                    tool,
                    message: text(task, "message").unwrap_or_default(),
                    purpose: text(task, "purpose"),
                    query_index: task
                        .get("query_index")
                        .and_then(Value::as_u64)
                        .map(|i| i as usize),
                });
            }
        }
    }
    // Stable: tasks keep their order within a stage.
    tasks.sort_by_key(|t| t.stage);
    tasks
}
