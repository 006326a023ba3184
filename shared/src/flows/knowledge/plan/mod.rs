//! The reflection router's output (seed 003 §2.1, §9.1): parsed, repaired, sanitised and
//! laid out into stages (TEMPLATES.md §3.1–3.2).
//!
//! - Both `tasks` layouts are accepted (one object with every stage key, or one object
//!   per stage); stage keys are sorted numerically.
//! - Tasks are dropped when the agent is not configured or not readable by the visitor,
//!   when the tool is not the agent's, or for `log_tool` when the site has no logs;
//!   `orchestrator` tasks are realised by the resolver and formatter, not run. The
//!   model's `permission.user_access` is ignored.
//! - Queries beyond `max_queries_per_agent` are dropped; an explicit `query_index` wins,
//!   else the k-th `rag_tool` task of an agent takes its query k; extra `rag_tool` tasks
//!   use `refined_query`.
//! - A query left without a `rag_tool` task feeds one of the same agent's
//!   `summary_tool`/`math_tool` tasks as extra context (TEMPLATES.md §3.2, amended): the
//!   one whose tool the agent's `tools` list names at the query's position (seed §9.1:
//!   `queries` 1, 2 beside `tools` `rag_tool`, `math_tool`), else the agent's next such
//!   task in execution order. Only an agent with no such task gets its leftover queries
//!   as `rag_tool` tasks (in the plan's first stage).
//! - Within a stage, retrieval tasks (`rag_tool`, `log_tool`) run first, then
//!   `summary_tool`/`math_tool`, which depend on every earlier retrieval task of the same
//!   agent.
//!
//! Reading the model's JSON (repaired) into raw tasks is in `raw`.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::access::Access;
use super::config::{KnowledgeConfig, ToolName};

mod raw;

pub use raw::extract_json;
use raw::{queries_of, raw_tasks, text};

/// One task of the plan, as it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTask {
    /// Its `step_number` (1-based, in execution order).
    pub step: usize,
    /// Its stage key.
    pub stage: u32,
    /// The agent.
    pub agent: String,
    /// The tool.
    pub tool: ToolName,
    /// What the task does (the plan's `message`).
    pub message: String,
    /// Why (the plan's `purpose`, default `message`).
    pub purpose: String,
    /// The agent's query it answers (1-based), for `rag_tool`.
    pub query_index: Option<usize>,
    /// The text it runs on: a `rag_tool` task's query; a `summary_tool`/`math_tool`
    /// task's `message`, followed by the agent's queries that fed it (one per line).
    pub query: String,
    /// Its trace node id (`hr#rag:1`, `general#rag`, `hr#summary`).
    pub node_id: String,
    /// Trace ids of the tasks it depends on.
    pub depends_on: Vec<String>,
}

/// A plan ready to run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// The visitor's query.
    pub original_query: String,
    /// The planner's refined query (the original when it gave none).
    pub refined_query: String,
    /// The tasks, by stage: retrieval first within each stage.
    pub stages: Vec<Vec<PlannedTask>>,
    /// The plan's `conflict_resolution` text (`plan_hint` in the trace).
    pub hint: Option<String>,
    /// Whether this is the direct plan standing in for the router's (its reply was not
    /// JSON or not a plan, nothing of it survived sanitising, or the call failed).
    pub fallback: bool,
}

impl Plan {
    /// Every task in execution order.
    pub fn tasks(&self) -> impl Iterator<Item = &PlannedTask> {
        self.stages.iter().flatten()
    }

    /// How many tasks there are.
    pub fn len(&self) -> usize {
        self.stages.iter().map(Vec::len).sum()
    }

    /// Whether there is no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the router decided.
#[derive(Debug, Clone, PartialEq)]
pub enum RouterOutput {
    /// Chitchat: this answer, verbatim, and no plan.
    Chitchat(String),
    /// A plan (possibly the direct plan, when nothing of the model's survived).
    Plan(Plan),
}

/// Why a router reply is not a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanError {
    /// No JSON object could be read out of it, even after repair.
    NotJson,
    /// JSON, but neither a plan nor chitchat.
    NotAPlan,
}

/// Reads the router's reply: chitchat, a sanitised plan, or why it is neither.
pub fn parse_router(
    reply: &str,
    original_query: &str,
    config: &KnowledgeConfig,
    access: &Access,
    has_logs: bool,
) -> Result<RouterOutput, PlanError> {
    let value = extract_json(reply).ok_or(PlanError::NotJson)?;
    if value.get("is_chitchat").and_then(Value::as_bool) == Some(true) {
        let answer = text(&value, "chitchat_response")
            .unwrap_or_else(|| super::config::CHITCHAT_RESPONSE.into());
        return Ok(RouterOutput::Chitchat(answer));
    }
    let agents = value.get("agents").and_then(Value::as_object);
    let flow = value.get("execution_flow");
    let planning = flow.and_then(|f| f.get("planning"));
    if agents.is_none() && planning.is_none() {
        return Err(PlanError::NotAPlan);
    }
    let refined = text(&value, "refined_query").unwrap_or_else(|| original_query.to_string());
    let usable = |agent: &str, tool: ToolName| {
        config
            .agent(agent)
            .is_some_and(|a| access.may_use(a) && a.has_tool(tool))
            && (tool != ToolName::LogTool || has_logs)
    };
    let max_queries = config.workflow.max_queries_per_agent;
    let mut queries: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    let mut listed_tools: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (agent, spec) in agents.into_iter().flatten() {
        if !usable(agent, ToolName::RagTool) {
            continue;
        }
        let mut list = queries_of(spec.get("queries"));
        list.truncate(max_queries);
        queries.insert(agent.clone(), list);
        let tools = spec.get("tools").and_then(Value::as_array);
        let names = tools.into_iter().flatten().filter_map(Value::as_str);
        listed_tools.insert(agent.clone(), names.map(String::from).collect());
    }
    let query_of = |agent: &str, index: usize| {
        queries
            .get(agent)
            .and_then(|list| list.iter().find(|(i, _)| *i == index))
            .map(|(_, q)| q.clone())
    };
    let mut tasks: Vec<Task> = Vec::new();
    let mut rag_seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut used: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for raw in raw_tasks(planning) {
        let Some(tool) = ToolName::parse(&raw.tool) else {
            continue;
        };
        if !usable(&raw.agent, tool) {
            continue;
        }
        let purpose = raw.purpose.clone().unwrap_or_else(|| raw.message.clone());
        let mut index = None;
        let mut fed = Vec::new();
        if tool == ToolName::RagTool {
            let k = rag_seen.entry(raw.agent.clone()).or_default();
            *k += 1;
            let wanted = raw.query_index.unwrap_or(*k);
            if query_of(&raw.agent, wanted).is_some() {
                index = Some(wanted);
                used.entry(raw.agent.clone()).or_default().push(wanted);
            } else if raw.query_index.is_none() && *k > max_queries {
                continue;
            }
        } else if !tool.is_retrieval()
            && let Some(wanted) = raw.query_index
            && let Some(query) = query_of(&raw.agent, wanted)
        {
            // An explicit `query_index` on a summary/math task: that query feeds it.
            fed.push(query);
            used.entry(raw.agent.clone()).or_default().push(wanted);
        }
        tasks.push(Task {
            stage: raw.stage,
            agent: raw.agent,
            tool,
            message: raw.message,
            purpose,
            index,
            fed,
        });
    }
    // Queries left without a task feed a summary/math task of the same agent; an agent
    // without one gets them as rag_tool tasks in the plan's first stage.
    let first_stage = tasks.iter().map(|t| t.stage).min().unwrap_or(1);
    for (agent, list) in &queries {
        for (index, query) in list {
            if used.get(agent).is_some_and(|u| u.contains(index)) {
                continue;
            }
            let listed = listed_tools.get(agent).map(Vec::as_slice).unwrap_or(&[]);
            match fed_task(&tasks, agent, *index, listed) {
                Some(at) => tasks[at].fed.push(query.clone()),
                None => tasks.push(Task {
                    stage: first_stage,
                    agent: agent.clone(),
                    tool: ToolName::RagTool,
                    message: query.clone(),
                    purpose: query.clone(),
                    index: Some(*index),
                    fed: Vec::new(),
                }),
            }
        }
    }
    let hint = flow.and_then(|f| text(f, "conflict_resolution"));
    let plan = layout(original_query, &refined, &queries, tasks, hint);
    if plan.is_empty() {
        let mut direct = direct_plan(original_query, config, access);
        direct.fallback = true;
        return Ok(RouterOutput::Plan(direct));
    }
    Ok(RouterOutput::Plan(plan))
}

/// The summary/math task of `agent` that its leftover query `index` feeds: the one whose
/// tool `listed` (the agent's `tools` in the plan) names at the query's position, else
/// the agent's first such task in execution order (`tasks` is in stage order).
fn fed_task(tasks: &[Task], agent: &str, index: usize, listed: &[String]) -> Option<usize> {
    let candidates = || {
        tasks
            .iter()
            .enumerate()
            .filter(move |(_, t)| t.agent == agent && !t.tool.is_retrieval())
    };
    let named = index
        .checked_sub(1)
        .and_then(|i| listed.get(i))
        .and_then(|name| ToolName::parse(name));
    named
        .and_then(|tool| candidates().find(|(_, t)| t.tool == tool))
        .or_else(|| candidates().next())
        .map(|(at, _)| at)
}

/// A task while the plan is read: its stage, agent, tool, `message`, `purpose`, query
/// index (`rag_tool`) and the queries that feed it (`summary_tool`/`math_tool`).
struct Task {
    stage: u32,
    agent: String,
    tool: ToolName,
    message: String,
    purpose: String,
    index: Option<usize>,
    fed: Vec<String>,
}

/// Orders tasks into stages (retrieval first), numbers them, names their trace ids and
/// dependencies.
fn layout(
    original: &str,
    refined: &str,
    queries: &BTreeMap<String, Vec<(usize, String)>>,
    mut tasks: Vec<Task>,
    hint: Option<String>,
) -> Plan {
    tasks.sort_by_key(|t| (t.stage, !t.tool.is_retrieval()));
    // How many tasks each agent has per tool: `:{i}` only when more than one.
    let mut per_tool: BTreeMap<(String, ToolName), usize> = BTreeMap::new();
    for t in &tasks {
        *per_tool.entry((t.agent.clone(), t.tool)).or_default() += 1;
    }
    let mut ordinal: BTreeMap<(String, ToolName), usize> = BTreeMap::new();
    let mut stages: Vec<Vec<PlannedTask>> = Vec::new();
    let mut retrieval_ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<u32> = None;
    for (position, task) in tasks.into_iter().enumerate() {
        let Task {
            stage,
            agent,
            tool,
            message,
            purpose,
            index,
            fed,
        } = task;
        let step = position + 1;
        if current != Some(stage) {
            stages.push(Vec::new());
            current = Some(stage);
        }
        let key = (agent.clone(), tool);
        let n = ordinal.entry(key.clone()).or_default();
        *n += 1;
        let suffix = index.unwrap_or(*n);
        let node_id = if per_tool.get(&key).copied().unwrap_or(0) > 1 {
            format!("{agent}#{}:{suffix}", tool.short())
        } else {
            format!("{agent}#{}", tool.short())
        };
        let query = match (tool, index) {
            (ToolName::RagTool, Some(i)) => queries
                .get(&agent)
                .and_then(|list| list.iter().find(|(j, _)| *j == i))
                .map_or_else(|| refined.to_string(), |(_, q)| q.clone()),
            (ToolName::RagTool, None) => refined.to_string(),
            (ToolName::LogTool, _) => format!("{message} {refined}"),
            _ if fed.is_empty() => message.clone(),
            _ => format!("{message}\n{}", fed.join("\n")),
        };
        let depends_on = if tool.is_retrieval() {
            retrieval_ids
                .entry(agent.clone())
                .or_default()
                .push(node_id.clone());
            Vec::new()
        } else {
            retrieval_ids.get(&agent).cloned().unwrap_or_default()
        };
        if let Some(list) = stages.last_mut() {
            list.push(PlannedTask {
                step,
                stage,
                agent,
                tool,
                message,
                purpose,
                query_index: index,
                query,
                node_id,
                depends_on,
            });
        }
    }
    Plan {
        original_query: original.into(),
        refined_query: refined.into(),
        stages,
        hint,
        fallback: false,
    }
}

/// The direct plan (TEMPLATES.md §3.1): `general` + `rag_tool` on the raw query — or the
/// first agent with `rag_tool` the visitor may use when there is no usable `general`.
pub fn direct_plan(query: &str, config: &KnowledgeConfig, access: &Access) -> Plan {
    let usable =
        |a: &&super::config::AgentConfig| access.may_use(a) && a.has_tool(ToolName::RagTool);
    let agent = config
        .agent("general")
        .filter(usable)
        .or_else(|| config.agents.iter().find(usable));
    let tasks = agent
        .map(|a| {
            alloc::vec![Task {
                stage: 1,
                agent: a.id.clone(),
                tool: ToolName::RagTool,
                message: query.to_string(),
                purpose: query.to_string(),
                index: None,
                fed: Vec::new(),
            }]
        })
        .unwrap_or_default();
    layout(query, query, &BTreeMap::new(), tasks, None)
}
