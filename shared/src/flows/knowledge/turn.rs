//! One `knowledge` turn, one function per seed node (see the module docs for the graph):
//! [`orchestrator`] (Node 1), [`reflection_router`] (Node 2, with [`chitchat`] as its
//! early exit), [`agent_execution`] (Node 3), [`conflict_resolution`] (Node 4) and
//! [`final_response`] (Node 5). [`answer`] only wires them together.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;
use serde_json::{Value, json};

use super::access::Access;
use super::answer::{CachedAnswer, ROUTE, answered};
use super::config::{AgentConfig, KnowledgeConfig};
use super::deps::KnowledgePorts;
use super::exec::Exec;
use super::fallback::{partial, serve_cached};
use super::output::{parse_tail, router_entry};
use super::plan::{Plan, PlanError, RouterOutput, direct_plan, parse_router};
use super::prompt;
use super::resolve::{AgentAnswer, Resolution, iso_of_ms, resolve};
use super::respond::{
    RunFacts, Times, default_reasoning, emit_output, evidence_json, execution_metadata,
    flow_action, reply_metadata, stream_final,
};
use super::run::{Execution, execute};
use crate::boundary::{CacheKey, KnowledgeBase, KnowledgeState, KvCache, LogRecord, ModelCall};
use crate::conversation::{MessageKind, Metadata, StoredMessage};
use crate::engine::{self, Answer, Platform, Turn, fail_answer, store_reply};
use crate::error::Error;
use crate::payload::Payload;
use crate::turn::TurnEvent;

/// A `knowledge` turn: the seed's graph, node after node.
pub(super) async fn answer<P: Platform, D: KnowledgePorts>(
    config: &KnowledgeConfig,
    deps: &D,
    platform: &P,
    turn: &mut Turn<'_>,
) -> Result<Answer, Error> {
    let history = core::mem::take(&mut turn.history);
    let node1 = match orchestrator(config, deps, platform, turn, &history).await {
        Orchestration::Cached(cached) => return serve_cached(platform, turn, cached).await,
        Orchestration::Planned(node1) => node1,
    };
    let (output, routed) = reflection_router(config, platform, &node1, &history).await;
    let plan = match output {
        RouterOutput::Chitchat(text) => {
            return chitchat(config, platform, turn, &node1, &routed, text).await;
        }
        RouterOutput::Plan(plan) => plan,
    };
    announce(turn, &plan);
    let (execution, counted) = agent_execution(config, deps, platform, turn, &node1, &plan).await;
    let resolved = conflict_resolution(config, platform, &execution);
    if !execution.failed.is_empty() {
        return partial(
            config,
            platform,
            turn,
            &plan,
            &execution,
            &resolved.resolution,
            &resolved.syntheses,
        )
        .await;
    }
    let ran = Ran {
        plan: &plan,
        execution: &execution,
        resolved: &resolved,
        facts: RunFacts {
            repaired: routed.repaired,
            fallback: plan.fallback,
            ..counted
        },
    };
    final_response(config, deps, platform, turn, &node1, &routed, ran).await
}

/// What the orchestrator settles before any model call.
enum Orchestration {
    /// The whole answer is in the answer cache.
    Cached(CachedAnswer),
    /// The turn goes on to the router (or the direct plan).
    Planned(Node1),
}

/// The orchestrator's findings, which every later node reads.
struct Node1 {
    /// The visitor's question.
    query: String,
    site_id: String,
    /// When the turn started, Unix ms.
    started: u64,
    /// The verified identity's scopes and departments.
    access: Access,
    /// When the permission check ran (ISO 8601, for the trace).
    permission_at: String,
    kb: KnowledgeState,
    /// Whether `log_tool` tasks may run (the site has logs and the caller may read them).
    logs_usable: bool,
    answer_key: CacheKey,
    /// Whether the answer is cached (a conversation's first question only).
    caching: bool,
}

/// Node 1, orchestrator: the permission check (from the verified identity only), the
/// knowledge base's state, the answer cache, the path.
async fn orchestrator<P: Platform, D: KnowledgePorts>(
    config: &KnowledgeConfig,
    deps: &D,
    platform: &P,
    turn: &Turn<'_>,
    history: &[StoredMessage],
) -> Orchestration {
    let clock = platform.clock();
    let started = clock.now_ms();
    let query = history
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let site_id = turn.conversation.site_id.clone();
    let access = Access::of(turn.identity(), &config.permissions);
    let permission_at = iso_of_ms(clock.now_ms());
    let kb = deps
        .base()
        .knowledge_state(&site_id)
        .await
        .unwrap_or_default();
    let logs_usable = kb.has_logs && access.scopes.iter().any(|s| s != "public");
    let scopes = access.scopes.join(",");
    let departments = access.departments.join(",");
    let answer_key = CacheKey::for_site(
        &site_id,
        &[
            "knowledge-answer",
            turn.language.as_str(),
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
        && let Ok(Some(text)) = deps.cache().get(&answer_key).await
        && let Ok(cached) = serde_json::from_str::<CachedAnswer>(&text)
    {
        return Orchestration::Cached(cached);
    }
    Orchestration::Planned(Node1 {
        query,
        site_id,
        started,
        access,
        permission_at,
        kb,
        logs_usable,
        answer_key,
        caching,
    })
}

/// How the reflection router ran (its output goes apart).
struct Routed {
    /// `reflection_needed` or `direct_execution` (the seed's path names).
    decision: &'static str,
    /// The plan came only when asked again.
    repaired: bool,
    started: String,
    ended: String,
}

/// Node 2, reflection router: one planning model call, asked again once when its reply is
/// not a plan; without a usable reply (or without reflection) the direct plan.
async fn reflection_router<P: Platform>(
    config: &KnowledgeConfig,
    platform: &P,
    node1: &Node1,
    history: &[StoredMessage],
) -> (RouterOutput, Routed) {
    let clock = platform.clock();
    let started = iso_of_ms(clock.now_ms());
    let (query, access) = (&node1.query, &node1.access);
    let mut repaired = false;
    let (decision, output) = if config.workflow.enable_reflection {
        let agents: Vec<&AgentConfig> =
            config.agents.iter().filter(|a| access.may_use(a)).collect();
        let mut error: Option<&str> = None;
        let mut routed = None;
        for attempt in 0..2 {
            let request = prompt::router(config, &agents, history, query, error);
            let Ok(reply) = engine::complete(platform.model(), &ModelCall::new(&request)).await
            else {
                break;
            };
            match parse_router(&reply, query, config, access, node1.logs_usable) {
                Ok(output) => {
                    repaired = attempt > 0;
                    routed = Some(output);
                    break;
                }
                Err(PlanError::NotJson) => error = Some("không phải JSON"),
                Err(PlanError::NotAPlan) => error = Some("JSON không phải kế hoạch"),
            }
        }
        // No usable reply (not JSON or not a plan, asked twice; or the call failed): the
        // direct plan stands in, flagged `plan_fallback` on the Router entry.
        let routed = routed.unwrap_or_else(|| {
            let mut plan = direct_plan(query, config, access);
            plan.fallback = true;
            RouterOutput::Plan(plan)
        });
        ("reflection_needed", routed)
    } else {
        let plan = direct_plan(query, config, access);
        ("direct_execution", RouterOutput::Plan(plan))
    };
    let routed = Routed {
        decision,
        repaired,
        started,
        ended: iso_of_ms(clock.now_ms()),
    };
    (output, routed)
}

/// The router's early exit: its chitchat reply verbatim, with the seed's
/// `execution_metadata` over no plan (no queries, agents or tools).
async fn chitchat<P: Platform>(
    config: &KnowledgeConfig,
    platform: &P,
    turn: &mut Turn<'_>,
    node1: &Node1,
    routed: &Routed,
    text: String,
) -> Result<Answer, Error> {
    turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
    let facts = RunFacts {
        total_ms: platform.clock().now_ms().saturating_sub(node1.started),
        repaired: routed.repaired,
        ..RunFacts::default()
    };
    let none = Plan::default();
    let metadata_json = execution_metadata(
        config,
        &node1.access,
        &none,
        &Execution::default(),
        0,
        facts,
    );
    let trace = alloc::vec![router_entry(
        &routed.started,
        &routed.ended,
        "chitchat",
        false
    )];
    let mut metadata = Metadata::new();
    metadata.insert("route".into(), "chitchat".into());
    metadata.insert("flow_action".into(), Value::Array(trace.clone()));
    metadata.insert("execution_metadata".into(), metadata_json.clone());
    turn.payload(Payload::Final(json!({
        "type": "final", "is_chitchat": true, "flow_action": trace,
        "execution_metadata": metadata_json,
    })));
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        text,
        metadata,
        Vec::new(),
    )
    .await?;
    Ok(answered(
        reply,
        None,
        alloc::vec!["orchestrator", "reflection_router", "final_response"],
    ))
}

/// The plan's summary, as the seed's `plan_ready` progress and payload (§9.2).
fn announce(turn: &mut Turn<'_>, plan: &Plan) {
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
}

/// Node 3, agent execution: the plan's stages in order (see [`execute`]); answers what
/// ran and the tool calls counted.
async fn agent_execution<P: Platform, D: KnowledgePorts>(
    config: &KnowledgeConfig,
    deps: &D,
    platform: &P,
    turn: &mut Turn<'_>,
    node1: &Node1,
    plan: &Plan,
) -> (Execution, RunFacts) {
    let exec = Exec {
        platform,
        deps,
        config,
        access: &node1.access,
        site_id: &node1.site_id,
        kb_version: &node1.kb.version,
        language: turn.language,
        calls: Cell::new(0),
        hits: Cell::new(0),
        finished: Cell::new(0),
    };
    let execution = execute(&exec, plan, &config.workflow.stage(), &mut *turn.sink).await;
    turn.sink.emit(progress(
        "All tasks completed, proceeding to final response",
        95.0,
        "ready_for_resolution",
    ));
    (execution, RunFacts::of(&exec))
}

/// What conflict resolution made of the execution.
struct Resolved {
    resolution: Resolution,
    /// Summary and math answers, given to the final prompt as they are.
    syntheses: Vec<AgentAnswer>,
    resolver_ms: u64,
    /// The time the resolution was made at (its recency weights), Unix ms.
    now: u64,
}

/// Node 4, conflict resolution: the retrieval answers ranked by the seed's weighted
/// scoring (resolve.rs).
fn conflict_resolution<P: Platform>(
    config: &KnowledgeConfig,
    platform: &P,
    execution: &Execution,
) -> Resolved {
    let clock = platform.clock();
    let resolver_started = clock.now_ms();
    let (retrieved, syntheses) = answers_of(execution);
    let now = clock.now_ms();
    let resolution = resolve(
        &retrieved,
        &config.rules,
        config.workflow.conflict_resolution_threshold,
        now,
    );
    Resolved {
        resolution,
        syntheses,
        resolver_ms: clock.now_ms().saturating_sub(resolver_started),
        now,
    }
}

/// What the final response is made from.
struct Ran<'a> {
    plan: &'a Plan,
    execution: &'a Execution,
    resolved: &'a Resolved,
    facts: RunFacts,
}

/// Node 5, final response: the streamed answer, then evidence, reasoning, confidence,
/// follow-ups, `flow_action` and `execution_metadata`, stored with the reply (and cached
/// when the orchestrator said so).
async fn final_response<P: Platform, D: KnowledgePorts>(
    config: &KnowledgeConfig,
    deps: &D,
    platform: &P,
    turn: &mut Turn<'_>,
    node1: &Node1,
    routed: &Routed,
    ran: Ran<'_>,
) -> Result<Answer, Error> {
    let clock = platform.clock();
    let Ran {
        plan,
        execution,
        resolved,
        facts,
    } = ran;
    let resolution = &resolved.resolution;
    let formatter_started = clock.now_ms();
    let request = prompt::final_answer(
        plan,
        resolution,
        &resolved.syntheses,
        &[],
        config,
        turn.language,
    );
    let (mut streamed, tail) = stream_final(platform, turn, &request).await;
    if let Some(error) = streamed.failure_or_empty() {
        let (shown, finish, none) = (streamed.shown, streamed.finish, Metadata::new());
        return Err(fail_answer(platform, turn, shown, none, Vec::new(), finish, error).await);
    }
    let text = streamed.shown.trim().to_string();
    let (reasoning, follow_ups) = parse_tail(&tail);
    let reasoning =
        reasoning.unwrap_or_else(|| default_reasoning(config, resolution, resolved.now));
    let mut follow_ups = if config.workflow.enable_follow_up_questions {
        follow_ups.unwrap_or_default()
    } else {
        Vec::new()
    };
    follow_ups.truncate(config.workflow.max_follow_up_questions);
    let times = Times {
        router_started: &routed.started,
        router_ended: &routed.ended,
        permission_at: &node1.permission_at,
        resolver_ms: resolved.resolver_ms,
        formatter_ms: clock.now_ms().saturating_sub(formatter_started),
    };
    let access = &node1.access;
    let flow_action = flow_action(
        config,
        access,
        plan,
        execution,
        resolution,
        routed.decision,
        &times,
    );
    let facts = RunFacts {
        total_ms: clock.now_ms().saturating_sub(node1.started),
        resolver_ms: resolved.resolver_ms,
        ..facts
    };
    let metadata_json = execution_metadata(
        config,
        access,
        plan,
        execution,
        resolution.resolved_conflicts,
        facts,
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
    let metadata = reply_metadata(&output, resolution, routed.decision);
    emit_output(turn, resolution, &follow_ups, output.clone());
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        text.clone(),
        metadata.clone(),
        Vec::new(),
    )
    .await?;
    if node1.caching {
        let cached = CachedAnswer {
            answer: text,
            output,
            metadata,
        };
        keep(config, deps, &node1.answer_key, &cached).await;
    }
    Ok(answered(
        reply,
        Some(resolution.confidence_score),
        ROUTE.to_vec(),
    ))
}

/// Keeps a first question's answer in the answer cache (a failed write only costs the
/// next visitor a model call).
async fn keep<D: KnowledgePorts>(
    config: &KnowledgeConfig,
    deps: &D,
    key: &CacheKey,
    cached: &CachedAnswer,
) {
    if let Ok(value) = serde_json::to_string(cached) {
        let ttl = config.workflow.cache_ttl_seconds;
        let _ = deps.cache().put(key, &value, ttl).await;
    }
}

fn progress(message: &str, percentage: f32, stage: &str) -> TurnEvent {
    TurnEvent::Progress {
        message: message.into(),
        percentage: Some(percentage),
        stage: Some(stage.into()),
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
