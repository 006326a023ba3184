//! Node 5's assembly: the streamed final answer, the trace (`flow_action`),
//! `execution_metadata`, the stored metadata and the payloads (seed 003 §5).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use super::access::Access;
use super::config::{AgentConfig, KnowledgeConfig};
use super::deps::KnowledgePorts;
use super::exec::Exec;
use super::output::{EndSplitter, permission_entry, router_entry};
use super::plan::Plan;
use super::resolve::Resolution;
use super::run::Execution;
use crate::boundary::{ChatRequest, ModelCall};
use crate::conversation::Metadata;
use crate::engine::{Platform, Streamed, Turn, stream_text};
use crate::payload::{Payload, Source};

/// When the trace's timed nodes ran.
pub(super) struct Times<'a> {
    pub(super) router_started: &'a str,
    pub(super) router_ended: &'a str,
    pub(super) permission_at: &'a str,
    pub(super) resolver_ms: u64,
    pub(super) formatter_ms: u64,
}

/// The trace: Router, PermissionCheck, one `agent_tool` entry per finished task (in
/// completion order within each stage), ConflictResolver, AnswerFormatter.
pub(super) fn flow_action(
    config: &KnowledgeConfig,
    access: &Access,
    plan: &Plan,
    execution: &Execution,
    resolution: &Resolution,
    decision: &str,
    times: &Times<'_>,
) -> Vec<Value> {
    let mut flow_action = alloc::vec![
        router_entry(
            times.router_started,
            times.router_ended,
            decision,
            plan.fallback
        ),
        permission_entry(times.permission_at, &access.scopes),
    ];
    for (task, done) in &execution.done {
        let mut entry = json!({
            "order": flow_action.len() + 1, "node_id": task.node_id, "type": "agent_tool",
            "agent": task.agent, "tool": task.tool.as_str(), "status": "done",
            "duration_ms": done.duration_ms, "input_hash": done.input_hash,
            "output_hash": done.output_hash, "attempts": done.attempts,
        });
        if let Some(index) = task.query_index {
            entry["query_index"] = index.into();
        }
        if !task.depends_on.is_empty() {
            entry["depends_on"] = json!(task.depends_on);
        }
        if done.cached {
            entry["cached"] = true.into();
        }
        flow_action.push(entry);
    }
    let mut resolver = json!({
        "order": flow_action.len() + 1, "node_id": "ConflictResolver", "type": "resolver",
        "status": "done", "policy": config.rules.resolution_strategy,
        "duration_ms": times.resolver_ms, "resolved_conflicts": resolution.resolved_conflicts,
    });
    if let Some(hint) = &plan.hint {
        resolver["plan_hint"] = hint.clone().into();
    }
    flow_action.push(resolver);
    flow_action.push(json!({
        "order": flow_action.len() + 1, "node_id": "AnswerFormatter", "type": "formatter",
        "status": "done", "duration_ms": times.formatter_ms,
    }));

    flow_action
}

/// Streams the final answer up to `---END`: what streamed, and the tail after it.
pub(super) async fn stream_final<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
) -> (Streamed, String) {
    let mut splitter = EndSplitter::default();
    let call = ModelCall::new(request);
    let streamed = stream_text(platform, &mut *turn.sink, &call, &mut splitter).await;
    (streamed, core::mem::take(&mut splitter.tail))
}

/// "Ưu tiên kết quả từ {AGENT} (nguồn {scope}[, cập nhật mới hơn])."
pub(super) fn default_reasoning(
    config: &KnowledgeConfig,
    resolution: &Resolution,
    now: u64,
) -> String {
    let Some((top, _)) = resolution.ranked.first() else {
        return String::new();
    };
    let display = config
        .agent(&top.agent)
        .map_or_else(|| top.agent.to_uppercase(), AgentConfig::display_name);
    let best = top.evidence.iter().max_by(|a, b| {
        config
            .rules
            .evidence_score(&top.agent, a, now)
            .total_cmp(&config.rules.evidence_score(&top.agent, b, now))
    });
    let scope = best.map_or("public", |e| e.scope.as_str());
    let newest = resolution
        .evidence
        .iter()
        .filter_map(|(e, _)| e.created_at.as_deref())
        .max();
    let newer = best
        .and_then(|e| e.created_at.as_deref())
        .is_some_and(|at| Some(at) == newest && resolution.evidence.len() > 1);
    let suffix = if newer {
        ", cập nhật mới hơn"
    } else {
        ""
    };
    format!("Ưu tiên kết quả từ {display} (nguồn {scope}{suffix}).")
}

pub(super) fn evidence_json(e: &super::resolve::EvidenceItem) -> Value {
    json!({"url": e.url, "created_at": e.created_at, "source_type": e.source_type,
           "scope": e.scope, "relevance_score": e.relevance_score,
           "document_id": e.document_id, "title": e.title})
}

/// How the plan came about and what its execution cost beyond the tasks themselves.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RunFacts {
    /// Tool calls made, and how many the task cache served.
    pub(super) calls: usize,
    pub(super) hits: usize,
    /// Wall time of the turn and of conflict resolution, ms.
    pub(super) total_ms: u64,
    pub(super) resolver_ms: u64,
    /// The router's plan was repaired by asking again.
    pub(super) repaired: bool,
    /// The direct plan stood in for the router's.
    pub(super) fallback: bool,
}

impl RunFacts {
    /// The counts of `exec`.
    pub(super) fn of<P: Platform, D: KnowledgePorts>(exec: &Exec<'_, P, D>) -> Self {
        Self {
            calls: exec.calls.get(),
            hits: exec.hits.get(),
            ..Self::default()
        }
    }
}

/// The seed's `execution_metadata` (§5) for `plan`'s `execution`: a chitchat reply's is
/// the same object over an empty plan (no agents, no tools, `total_queries` 0).
pub(super) fn execution_metadata(
    config: &KnowledgeConfig,
    access: &Access,
    plan: &Plan,
    execution: &Execution,
    resolved_conflicts: usize,
    facts: RunFacts,
) -> Value {
    let RunFacts {
        calls,
        hits,
        total_ms,
        resolver_ms,
        repaired,
        fallback,
    } = facts;
    let mut agents: Vec<&str> = Vec::new();
    let mut tools: Vec<&str> = Vec::new();
    let mut agent_ms: Map<String, Value> = Map::new();
    let mut tool_stats: Vec<(&str, u64, u64)> = Vec::new();
    for (task, done) in &execution.done {
        if !agents.contains(&task.agent.as_str()) {
            agents.push(&task.agent);
        }
        let tool = task.tool.as_str();
        if !tools.contains(&tool) {
            tools.push(tool);
        }
        let ms = agent_ms
            .get(&task.agent)
            .and_then(Value::as_u64)
            .unwrap_or(0);
        agent_ms.insert(task.agent.clone(), (ms + done.duration_ms).into());
        match tool_stats.iter_mut().find(|(t, _, _)| *t == tool) {
            Some(stat) => {
                stat.1 += 1;
                stat.2 += done.duration_ms;
            }
            None => tool_stats.push((tool, 1, done.duration_ms)),
        }
    }
    let usage: Map<String, Value> = tool_stats
        .iter()
        .map(|(tool, calls, ms)| {
            (
                (*tool).to_string(),
                json!({"calls": calls, "avg_time_ms": ms / calls}),
            )
        })
        .collect();
    let ratio = if calls == 0 {
        0.0
    } else {
        super::resolve::round2(hits as f64 / calls as f64)
    };
    json!({
        "total_duration_ms": total_ms,
        "agents_invoked": agents,
        "tools_executed": tools,
        "total_queries": execution.done.iter().filter(|(t, _)| t.tool.is_retrieval()).count(),
        "total_tasks": plan.len(),
        "conflict_resolution_applied": resolved_conflicts > 0,
        "department_permission_filtering": access.restricted,
        "accessible_departments": access.accessible_in_order(&config.permissions),
        "plan_repaired": repaired,
        "plan_fallback": fallback,
        "performance_metrics": {
            "query_processing_time_ms": total_ms,
            "agent_execution_times": agent_ms,
            "tool_usage_stats": usage,
            "conflict_resolution_time_ms": resolver_ms,
            "cache_hit_ratio": ratio,
        },
    })
}

/// The stored reply's metadata: the final output's fields, and the documents drawn on.
pub(super) fn reply_metadata(output: &Value, resolution: &Resolution, route: &str) -> Metadata {
    let mut metadata = Metadata::new();
    for key in [
        "evidence",
        "reasoning",
        "confidence_score",
        "follow_up_questions",
        "flow_action",
        "execution_metadata",
    ] {
        metadata.insert(key.into(), output[key].clone());
    }
    let mut ids: Vec<&str> = Vec::new();
    for (answer, _) in &resolution.ranked {
        for e in &answer.evidence {
            if !ids.contains(&e.document_id.as_str()) {
                ids.push(&e.document_id);
            }
        }
    }
    metadata.insert("document_ids".into(), json!(ids));
    metadata.insert("route".into(), route.into());
    metadata
}

/// The payloads before `completed`: sources (with scope), follow-ups, the final output.
pub(super) fn emit_output(
    turn: &mut Turn<'_>,
    resolution: &Resolution,
    follow_ups: &[String],
    output: Value,
) {
    let sources: Vec<Source> = resolution
        .evidence
        .iter()
        .map(|(e, _)| Source {
            title: format!(
                "{} · {}",
                e.title.clone().unwrap_or_else(|| e.document_id.clone()),
                e.scope
            ),
            url: e.url.clone(),
            snippet: None,
        })
        .collect();
    if !sources.is_empty() {
        turn.payload(Payload::Sources(sources));
    }
    if !follow_ups.is_empty() {
        turn.payload(Payload::FollowUps(follow_ups.to_vec()));
    }
    turn.payload(Payload::Final(output));
}
