//! One `knowledge` turn, node by node (see the module docs for the graph).

use alloc::string::ToString;
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
use super::resolve::{AgentAnswer, iso_of_ms, resolve};
use super::respond::{
    RunFacts, Times, default_reasoning, emit_output, evidence_json, execution_metadata,
    flow_action, reply_metadata, stream_final,
};
use super::run::{Execution, execute};
use crate::boundary::{CacheKey, KnowledgeBase, KvCache, LogRecord, ModelCall};
use crate::conversation::{MessageKind, Metadata};
use crate::engine::{self, Answer, Platform, Turn, fail_answer, store_reply};
use crate::error::Error;
use crate::payload::Payload;
use crate::turn::TurnEvent;

pub(super) async fn answer<P: Platform, D: KnowledgePorts>(
    config: &KnowledgeConfig,
    deps: &D,
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
        && let Ok(Some(text)) = deps.cache().get(&answer_key).await
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
            let Ok(reply) = engine::complete(platform.model(), &ModelCall::new(&request)).await
            else {
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
        // No usable reply (not JSON or not a plan, asked twice; or the call failed): the
        // direct plan stands in, flagged `plan_fallback` on the Router entry.
        let routed = routed.unwrap_or_else(|| {
            let mut plan = direct_plan(&query, config, &access);
            plan.fallback = true;
            RouterOutput::Plan(plan)
        });
        ("reflection_needed", routed)
    } else {
        let plan = direct_plan(&query, config, &access);
        ("direct_execution", RouterOutput::Plan(plan))
    };
    let router_ended = iso_of_ms(clock.now_ms());
    let plan = match routed {
        RouterOutput::Chitchat(text) => {
            turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
            // The seed's execution_metadata over no plan: no queries, agents or tools.
            let facts = RunFacts {
                total_ms: clock.now_ms().saturating_sub(started),
                repaired,
                ..RunFacts::default()
            };
            let none = Plan::default();
            let metadata_json =
                execution_metadata(config, &access, &none, &Execution::default(), 0, facts);
            let trace = alloc::vec![router_entry(
                &router_started,
                &router_ended,
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
        deps,
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
    let (mut streamed, tail) = stream_final(platform, turn, &request).await;
    if let Some(error) = streamed.failure_or_empty() {
        let (shown, finish, none) = (streamed.shown, streamed.finish, Metadata::new());
        return Err(fail_answer(platform, turn, shown, none, Vec::new(), finish, error).await);
    }
    let text = streamed.shown.trim().to_string();
    let (reasoning, follow_ups) = parse_tail(&tail);
    let reasoning = reasoning.unwrap_or_else(|| default_reasoning(config, &resolution, now));
    let mut follow_ups = if config.workflow.enable_follow_up_questions {
        follow_ups.unwrap_or_default()
    } else {
        Vec::new()
    };
    follow_ups.truncate(config.workflow.max_follow_up_questions);
    let formatter_ms = clock.now_ms().saturating_sub(formatter_started);

    let times = Times {
        router_started: &router_started,
        router_ended: &router_ended,
        permission_at: &permission_at,
        resolver_ms,
        formatter_ms,
    };
    let flow_action = flow_action(
        config,
        &access,
        &plan,
        &execution,
        &resolution,
        decision,
        &times,
    );

    let facts = RunFacts {
        total_ms: clock.now_ms().saturating_sub(started),
        resolver_ms,
        repaired,
        fallback: plan.fallback,
        ..RunFacts::of(&exec)
    };
    let metadata_json = execution_metadata(
        config,
        &access,
        &plan,
        &execution,
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
            let _ = deps
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
