//! One `knowledge` turn, node by node (see the module docs for the graph).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::access::Access;
use super::config::{AgentConfig, KnowledgeConfig, sentence};
use super::exec::{Exec, complete};
use super::output::{EndSplitter, parse_tail, permission_entry, router_entry};
use super::plan::{Plan, PlanError, RouterOutput, direct_plan, parse_router};
use super::prompt;
use super::resolve::{AgentAnswer, Resolution, iso_of_ms, resolve};
use super::run::{Execution, execute};
use crate::boundary::{CacheKey, ChatModel, ChatRequest, KvCache, LogRecord};
use crate::chat::ChatEvent;
use crate::conversation::{Language, MessageKind, Metadata, StoredMessage};
use crate::engine::{Answer, Platform, Turn, store_reply};
use crate::error::Error;
use crate::payload::{Payload, Source};
use crate::turn::TurnEvent;

/// The graph nodes a planned turn visits.
const ROUTE: [&str; 5] = [
    "orchestrator",
    "reflection_router",
    "agent_execution",
    "conflict_resolution",
    "final_response",
];

/// An answer kept in the answer cache.
#[derive(Debug, Serialize, Deserialize)]
struct CachedAnswer {
    answer: String,
    output: Value,
    metadata: Metadata,
}

pub(super) async fn answer<P: Platform>(
    config: &KnowledgeConfig,
    platform: &P,
    turn: &mut Turn<'_>,
) -> Result<Answer, Error> {
    let clock = platform.clock();
    let started = clock.now_ms();
    let history = core::mem::take(&mut turn.history);
    let query = history
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let site_id = turn.conversation.site_id.clone();
    let language = turn.language;

    // Node 1, orchestrator: the permission check, the answer cache, the path.
    let access = Access::of(turn.identity(), &config.permissions);
    let permission_at = iso_of_ms(clock.now_ms());
    let kb = platform.knowledge_state(&site_id).await.unwrap_or_default();
    let logs_usable = kb.has_logs && access.scopes.iter().any(|s| s != "public");
    let scopes = access.scopes.join(",");
    let departments = access.departments.join(",");
    let answer_key = CacheKey::for_site(
        &site_id,
        &[
            "knowledge-answer",
            language.as_str(),
            query.trim(),
            &scopes,
            &departments,
            &kb.version,
        ],
    );
    // The whole answer is cached only for a conversation's first question: a later one
    // may lean on the conversation so far (the planner refines it with the history).
    let first_question = history
        .iter()
        .rev()
        .skip(1)
        .all(|m| m.role != crate::conversation::Role::User);
    let caching = config.workflow.enable_caching && first_question;
    if caching
        && let Ok(Some(text)) = platform.cache().get(&answer_key).await
        && let Ok(cached) = serde_json::from_str::<CachedAnswer>(&text)
    {
        return serve_cached(platform, turn, cached).await;
    }

    // Node 2, reflection router (or the direct plan).
    let router_started = iso_of_ms(clock.now_ms());
    let mut repaired = false;
    let (decision, routed) = if config.workflow.enable_reflection {
        let agents: Vec<&AgentConfig> =
            config.agents.iter().filter(|a| access.may_use(a)).collect();
        let mut error: Option<&str> = None;
        let mut routed = None;
        for attempt in 0..2 {
            let request = prompt::router(config, &agents, &history, &query, error);
            let Ok(reply) = complete(platform.model(), &request).await else {
                break;
            };
            match parse_router(&reply, &query, config, &access, logs_usable) {
                Ok(output) => {
                    repaired = attempt > 0;
                    routed = Some(output);
                    break;
                }
                Err(PlanError::NotJson) => error = Some("không phải JSON"),
                Err(PlanError::NotAPlan) => error = Some("JSON không phải kế hoạch"),
            }
        }
        let routed =
            routed.unwrap_or_else(|| RouterOutput::Plan(direct_plan(&query, config, &access)));
        ("reflection_needed", routed)
    } else {
        let plan = direct_plan(&query, config, &access);
        ("direct_execution", RouterOutput::Plan(plan))
    };
    let router_ended = iso_of_ms(clock.now_ms());
    let plan = match routed {
        RouterOutput::Chitchat(text) => {
            turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
            let mut metadata = Metadata::new();
            metadata.insert("route".into(), "chitchat".into());
            let trace = alloc::vec![router_entry(&router_started, &router_ended, "chitchat")];
            metadata.insert("flow_action".into(), Value::Array(trace));
            let reply = store_reply(
                platform,
                turn,
                MessageKind::Answer,
                text,
                metadata,
                Vec::new(),
            )
            .await?;
            return Ok(answered(
                reply,
                None,
                alloc::vec!["orchestrator", "reflection_router", "final_response"],
            ));
        }
        RouterOutput::Plan(plan) => plan,
    };

    // The plan summary (seed §9.2 `plan_ready`).
    let tasks: Vec<Value> = plan
        .tasks()
        .map(|t| {
            json!({"step_number": t.step, "agent": t.agent, "tool": t.tool.as_str(),
                   "purpose": t.purpose, "message": t.message})
        })
        .collect();
    let plan_summary = json!({"total_tasks": plan.len(), "tasks": tasks});
    turn.sink
        .emit(progress("Execution plan is ready", 75.0, "plan_ready"));
    turn.payload(Payload::Plan(json!({
        "type": "plan", "node": "execute_planning", "processing_status": "plan_ready",
        "progress_percentage": 75, "progress_message": "Execution plan is ready",
        "plan_summary": plan_summary,
    })));

    // Node 3, agent execution.
    let exec = Exec {
        platform,
        config,
        access: &access,
        site_id: &site_id,
        kb_version: &kb.version,
        language,
        calls: Cell::new(0),
        hits: Cell::new(0),
        finished: Cell::new(0),
    };
    let execution = execute(&exec, &plan, &config.workflow.stage(), &mut *turn.sink).await;
    turn.sink.emit(progress(
        "All tasks completed, proceeding to final response",
        95.0,
        "ready_for_resolution",
    ));

    // Node 4, conflict resolution.
    let resolver_started = clock.now_ms();
    let (retrieved, syntheses) = answers_of(&execution);
    let now = clock.now_ms();
    let resolution = resolve(
        &retrieved,
        &config.rules,
        config.workflow.conflict_resolution_threshold,
        now,
    );
    let resolver_ms = clock.now_ms().saturating_sub(resolver_started);

    if !execution.failed.is_empty() {
        return partial(
            config,
            platform,
            turn,
            &plan,
            &execution,
            &resolution,
            &syntheses,
        )
        .await;
    }

    // Node 5, final response.
    let formatter_started = clock.now_ms();
    let request = prompt::final_answer(&plan, &resolution, &syntheses, &[], config, language);
    let (text, tail) = match stream_final(platform, turn, &request).await {
        Ok(done) => done,
        Err((streamed, error)) => {
            if !streamed.is_empty() {
                let mut metadata = Metadata::new();
                metadata.insert("incomplete".into(), true.into());
                metadata.insert("error".into(), error.code().into());
                let _ = store_reply(
                    platform,
                    turn,
                    MessageKind::Answer,
                    streamed,
                    metadata,
                    Vec::new(),
                )
                .await;
            }
            return Err(error);
        }
    };
    let (reasoning, follow_ups) = parse_tail(&tail);
    let reasoning = reasoning.unwrap_or_else(|| default_reasoning(config, &resolution, now));
    let mut follow_ups = if config.workflow.enable_follow_up_questions {
        follow_ups.unwrap_or_default()
    } else {
        Vec::new()
    };
    follow_ups.truncate(config.workflow.max_follow_up_questions);
    let formatter_ms = clock.now_ms().saturating_sub(formatter_started);

    let mut flow_action = alloc::vec![
        router_entry(&router_started, &router_ended, decision),
        permission_entry(&permission_at, &access.scopes),
    ];
    for (task, done) in &execution.done {
        let mut entry = json!({
            "order": flow_action.len() + 1, "node_id": task.node_id, "type": "agent_tool",
            "agent": task.agent, "tool": task.tool.as_str(), "status": "done",
            "duration_ms": done.duration_ms, "input_hash": done.input_hash,
            "output_hash": done.output_hash,
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
        "duration_ms": resolver_ms, "resolved_conflicts": resolution.resolved_conflicts,
    });
    if let Some(hint) = &plan.hint {
        resolver["plan_hint"] = hint.clone().into();
    }
    flow_action.push(resolver);
    flow_action.push(json!({
        "order": flow_action.len() + 1, "node_id": "AnswerFormatter", "type": "formatter",
        "status": "done", "duration_ms": formatter_ms,
    }));

    let metadata_json = execution_metadata(
        config,
        &access,
        &plan,
        &execution,
        &resolution,
        &exec,
        clock.now_ms() - started,
        resolver_ms,
        repaired,
    );
    let evidence: Vec<Value> = resolution
        .evidence
        .iter()
        .map(|(e, _)| evidence_json(e))
        .collect();
    let output = json!({
        "type": "final",
        "evidence": evidence,
        "reasoning": reasoning,
        "confidence_score": resolution.confidence_score,
        "follow_up_questions": follow_ups,
        "flow_action": flow_action,
        "execution_metadata": metadata_json,
    });
    platform.logger().log(&LogRecord::Metrics {
        conversation_id: &turn.conversation.id,
        name: "knowledge",
        data: &output["execution_metadata"]["performance_metrics"],
    });
    let metadata = reply_metadata(&output, &resolution, decision);
    emit_output(turn, &resolution, &follow_ups, output.clone());
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        text.clone(),
        metadata.clone(),
        Vec::new(),
    )
    .await?;
    if caching {
        let cached = CachedAnswer {
            answer: text,
            output,
            metadata,
        };
        if let Ok(value) = serde_json::to_string(&cached) {
            let _ = platform
                .cache()
                .put(&answer_key, &value, config.workflow.cache_ttl_seconds)
                .await;
        }
    }
    Ok(answered(
        reply,
        Some(resolution.confidence_score),
        ROUTE.to_vec(),
    ))
}

fn progress(message: &str, percentage: f32, stage: &str) -> TurnEvent {
    TurnEvent::Progress {
        message: message.into(),
        percentage: Some(percentage),
        stage: Some(stage.into()),
    }
}

fn answered(reply: StoredMessage, confidence: Option<f64>, route: Vec<&'static str>) -> Answer {
    Answer {
        reply,
        intent: None,
        confidence: confidence.map(|c| c as f32),
        usage: None,
        route,
    }
}

/// Retrieval answers (ranked by the resolver) and summary/math answers (given to the final
/// prompt as they are).
fn answers_of(execution: &Execution) -> (Vec<AgentAnswer>, Vec<AgentAnswer>) {
    let mut retrieved = Vec::new();
    let mut syntheses = Vec::new();
    for (task, done) in &execution.done {
        if task.tool.is_retrieval() {
            retrieved.push(done.answer.clone());
        } else {
            syntheses.push(done.answer.clone());
        }
    }
    (retrieved, syntheses)
}

/// Streams the final answer up to `---END`; returns the text and the tail, or the text a
/// visitor saw and the error.
async fn stream_final<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
) -> Result<(String, String), (String, Error)> {
    let mut splitter = EndSplitter::default();
    let mut upstream = None;
    let sink = &mut *turn.sink;
    let mut on_event = |event: ChatEvent| match event {
        ChatEvent::TextDelta(delta) if upstream.is_none() => {
            let out = splitter.feed(&delta);
            if !out.is_empty() {
                sink.emit(TurnEvent::Chunk { text: out });
            }
        }
        ChatEvent::Error(error) if upstream.is_none() => upstream = Some(error),
        _ => {}
    };
    let result = platform.model().stream(request, &mut on_event).await;
    let failure = match (result, upstream) {
        (Err(error), _) => Some(Error::ChatModel(error)),
        (Ok(()), Some(error)) => Some(Error::ChatModel(crate::error::ChatModelError::new(
            crate::error::ChatModelErrorKind::Upstream,
            error.message,
        ))),
        (Ok(()), None) => None,
    };
    if let Some(error) = failure {
        return Err((splitter.streamed.clone(), error));
    }
    let rest = splitter.finish();
    if !rest.is_empty() {
        turn.sink.emit(TurnEvent::Chunk { text: rest });
    }
    let text = splitter.streamed.trim().to_string();
    if text.is_empty() {
        return Err((String::new(), Error::EmptyAnswer));
    }
    Ok((text, core::mem::take(&mut splitter.tail)))
}

/// "Ưu tiên kết quả từ {AGENT} (nguồn {scope}[, cập nhật mới hơn])."
fn default_reasoning(config: &KnowledgeConfig, resolution: &Resolution, now: u64) -> String {
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

fn evidence_json(e: &super::resolve::EvidenceItem) -> Value {
    json!({"url": e.url, "created_at": e.created_at, "source_type": e.source_type,
           "scope": e.scope, "relevance_score": e.relevance_score,
           "document_id": e.document_id, "title": e.title})
}

#[allow(clippy::too_many_arguments)]
fn execution_metadata<P: Platform>(
    config: &KnowledgeConfig,
    access: &Access,
    plan: &Plan,
    execution: &Execution,
    resolution: &Resolution,
    exec: &Exec<'_, P>,
    total_ms: u64,
    resolver_ms: u64,
    repaired: bool,
) -> Value {
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
    let calls = exec.calls.get();
    let ratio = if calls == 0 {
        0.0
    } else {
        super::resolve::round2(exec.hits.get() as f64 / calls as f64)
    };
    json!({
        "total_duration_ms": total_ms,
        "agents_invoked": agents,
        "tools_executed": tools,
        "total_queries": execution.done.iter().filter(|(t, _)| t.tool.is_retrieval()).count(),
        "total_tasks": plan.len(),
        "conflict_resolution_applied": resolution.resolved_conflicts > 0,
        "department_permission_filtering": access.restricted,
        "accessible_departments": access.accessible_in_order(&config.permissions),
        "plan_repaired": repaired,
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
fn reply_metadata(output: &Value, resolution: &Resolution, route: &str) -> Metadata {
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
fn emit_output(turn: &mut Turn<'_>, resolution: &Resolution, follow_ups: &[String], output: Value) {
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

/// A repeated question: the stored answer, no model call.
async fn serve_cached<P: Platform>(
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
async fn partial<P: Platform>(
    config: &KnowledgeConfig,
    platform: &P,
    turn: &mut Turn<'_>,
    plan: &Plan,
    execution: &Execution,
    resolution: &Resolution,
    syntheses: &[AgentAnswer],
) -> Result<Answer, Error> {
    let language: Language = turn.language;
    let Some((failed_task, failure)) = execution.failed.first() else {
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
    for (task, failure) in &execution.failed {
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
            .map(|(t, _)| format!("{} ({})", t.purpose, t.node_id))
            .collect();
        let request = prompt::final_answer(plan, resolution, syntheses, &failed, config, language);
        match stream_final(platform, turn, &request).await {
            Ok((text, _)) => text,
            Err((streamed, _)) if !streamed.trim().is_empty() => streamed.trim().to_string(),
            Err(_) => {
                let text = sentence(language, "partial_fallback").to_string();
                turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
                text
            }
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
                              "error_type": failure.error_type()},
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
