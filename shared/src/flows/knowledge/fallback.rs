//! The answers that skip node 5's model call or replace it: a cached answer, and the
//! seed's error structure with a fallback answer (§6).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use super::answer::{CachedAnswer, ROUTE, answered};
use super::config::{AgentConfig, KnowledgeConfig, sentence};
use super::plan::Plan;
use super::prompt;
use super::resolve::{AgentAnswer, Resolution};
use super::respond::{evidence_json, stream_final};
use super::run::Execution;
use crate::conversation::{Language, MessageKind, Metadata};
use crate::engine::{Answer, Platform, Turn, store_reply};
use crate::error::Error;
use crate::payload::{Payload, Source};
use crate::turn::TurnEvent;

/// A repeated question: the stored answer, no model call.
pub(super) async fn serve_cached<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    cached: CachedAnswer,
) -> Result<Answer, Error> {
    turn.sink.emit(TurnEvent::Chunk {
        text: cached.answer.clone(),
    });
    let mut output = cached.output;
    output["execution_metadata"]["cache_hit"] = true.into();
    let follow_ups: Vec<String> = output["follow_up_questions"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let sources: Vec<Source> = output["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let text = |key: &str| e[key].as_str().unwrap_or_default().to_string();
            let title = e["title"]
                .as_str()
                .map_or_else(|| text("document_id"), String::from);
            Source {
                title: format!("{title} · {}", text("scope")),
                url: text("url"),
                snippet: None,
            }
        })
        .collect();
    if !sources.is_empty() {
        turn.payload(Payload::Sources(sources));
    }
    if !follow_ups.is_empty() {
        turn.payload(Payload::FollowUps(follow_ups));
    }
    turn.payload(Payload::Final(output));
    let mut metadata = cached.metadata;
    metadata.insert("cached".into(), true.into());
    let confidence = metadata.get("confidence_score").and_then(Value::as_f64);
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        cached.answer,
        metadata,
        Vec::new(),
    )
    .await?;
    Ok(answered(
        reply,
        confidence,
        alloc::vec!["orchestrator", "final_response"],
    ))
}

/// A failed task: the seed's error structure (§6) with partial results, and a fallback
/// answer — the final-answer model over what succeeded, or a product string.
pub(super) async fn partial<P: Platform>(
    config: &KnowledgeConfig,
    platform: &P,
    turn: &mut Turn<'_>,
    plan: &Plan,
    execution: &Execution,
    resolution: &Resolution,
    syntheses: &[AgentAnswer],
) -> Result<Answer, Error> {
    let language: Language = turn.language;
    let Some((failed_task, failure, attempts)) = execution.failed.first() else {
        return Err(Error::EmptyAnswer);
    };
    let display = config.agent(&failed_task.agent).map_or_else(
        || failed_task.agent.to_uppercase(),
        AgentConfig::display_name,
    );
    let mut partial_results = Map::new();
    for (task, done) in &execution.done {
        let entry = partial_results
            .entry(task.agent.clone())
            .or_insert_with(|| json!({"status": "success", "answer": ""}));
        let answer = entry["answer"].as_str().unwrap_or_default();
        let joined = if answer.is_empty() {
            done.answer.answer.clone()
        } else {
            format!("{answer}\n{}", done.answer.answer)
        };
        entry["answer"] = joined.into();
    }
    for (task, failure, _) in &execution.failed {
        partial_results.insert(
            task.agent.clone(),
            json!({"status": "failed", "error": failure.message()}),
        );
    }
    let fallback = if execution.done.is_empty() {
        let text = sentence(language, "all_failed").to_string();
        turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
        text
    } else {
        let failed: Vec<String> = execution
            .failed
            .iter()
            .map(|(t, _, _)| format!("{} ({})", t.purpose, t.node_id))
            .collect();
        let request = prompt::final_answer(plan, resolution, syntheses, &failed, config, language);
        // What the final-answer model showed, even if it failed after; else a sentence.
        let (streamed, _) = stream_final(platform, turn, &request).await;
        match streamed.shown.trim() {
            "" => {
                let text = sentence(language, "partial_fallback").to_string();
                turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
                text
            }
            shown => shown.to_string(),
        }
    };
    let output = json!({
        "type": "error",
        "error": true,
        "error_code": "AGENT_EXECUTION_FAILED",
        "error_message": format!("{display} agent failed to execute {}", failed_task.tool.as_str()),
        "partial_results": partial_results,
        "fallback_answer": fallback,
        "flow_action": [{
            "order": 1, "node_id": "ErrorHandler", "type": "error_handler", "status": "handled",
            "error_details": {"failed_agent": failed_task.agent, "failed_tool": failed_task.tool.as_str(),
                              "error_type": failure.error_type(), "attempts": attempts},
        }],
    });
    let mut metadata = Metadata::new();
    for key in [
        "error_code",
        "error_message",
        "partial_results",
        "flow_action",
    ] {
        metadata.insert(key.into(), output[key].clone());
    }
    let evidence: Vec<Value> = resolution
        .evidence
        .iter()
        .map(|(e, _)| evidence_json(e))
        .collect();
    let ids: Vec<&str> = resolution
        .evidence
        .iter()
        .map(|(e, _)| e.document_id.as_str())
        .collect();
    metadata.insert("evidence".into(), evidence.into());
    metadata.insert("document_ids".into(), json!(ids));
    metadata.insert("partial".into(), true.into());
    turn.payload(Payload::Final(output));
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        fallback,
        metadata,
        Vec::new(),
    )
    .await?;
    Ok(answered(reply, None, ROUTE.to_vec()))
}
