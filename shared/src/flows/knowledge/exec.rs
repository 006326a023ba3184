//! Node 3, Agent Execution: each task of a stage runs its tool (TEMPLATES.md §3.2
//! "Tools"), with the task cache in front of it.
//!
//! - `rag_tool`: the visitor's slice of the site's documents (site ∧ scope ∈ effective
//!   scopes ∧ department ∈ the agent's readable departments, in the vector filter), then
//!   one model call answering from the passages; evidence below `min_relevance_score` is
//!   dropped; nothing found → the product string `no_passages`, no model call.
//! - `log_tool`: keyword search over the site's uploaded logs (no model call).
//! - `summary_tool`: one model call over the agent's answers so far.
//! - `math_tool`: the model writes an expression, [`evaluate`] computes it.
//!
//! Cached results are keyed on agent, tool, query, inputs, sorted scopes and departments
//! and the knowledge-base version, so a result is never served across permissions or
//! after the knowledge changed.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;
use core::fmt::Write as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::access::Access;
use super::config::{KnowledgeConfig, ToolName, sentence};
use super::deps::KnowledgePorts;
use super::math::{evaluate, expression_in};
use super::plan::PlannedTask;
use super::prompt;
use super::resolve::{AgentAnswer, EvidenceItem, round2};
use crate::boundary::{
    CacheKey, ChatRequest, Embedder, KnowledgeBase, KvCache, LogQuery, MetadataFilter, ModelCall,
    VectorIndex, VectorQuery,
};
use crate::conversation::Language;
use crate::engine::{self, Platform};

/// How a task attempt failed (seed §6 `error_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFailure {
    /// The model or a service failed.
    Upstream,
    /// The model's output could not be used (e.g. not an expression).
    InvalidOutput,
}

impl TaskFailure {
    /// `upstream_error` / `invalid_output`.
    pub fn error_type(self) -> &'static str {
        match self {
            Self::Upstream => "upstream_error",
            Self::InvalidOutput => "invalid_output",
        }
    }
}

/// What a task works on.
#[derive(Debug, Clone)]
pub struct TaskInput {
    /// The task.
    pub task: PlannedTask,
    /// The answers it builds on (`summary_tool`, `math_tool`).
    pub inputs: Vec<AgentAnswer>,
}

/// A finished task.
#[derive(Debug, Clone)]
pub struct TaskDone {
    /// Its answer.
    pub answer: AgentAnswer,
    /// Wall time, ms.
    pub duration_ms: u64,
    /// SHA-256 hex of its canonical input.
    pub input_hash: String,
    /// SHA-256 hex of its canonical output.
    pub output_hash: String,
    /// Whether it came from the cache.
    pub cached: bool,
    /// Its place in completion order (1-based, over the whole plan).
    pub finished: usize,
    /// Attempts it took (1 + retries; set by the stage that ran it).
    pub attempts: u32,
}

/// SHA-256 hex of a JSON value's text.
pub fn hash_json(value: &Value) -> String {
    let digest = Sha256::digest(value.to_string().as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// One turn's task runner.
pub struct Exec<'a, P, D> {
    /// The platform.
    pub platform: &'a P,
    /// The template's own dependencies (cache, logs).
    pub deps: &'a D,
    /// The site's settings.
    pub config: &'a KnowledgeConfig,
    /// The visitor's access.
    pub access: &'a Access,
    /// The site.
    pub site_id: &'a str,
    /// The knowledge-base version (cache keys).
    pub kb_version: &'a str,
    /// The answer language.
    pub language: Language,
    /// Tool calls so far.
    pub calls: Cell<usize>,
    /// Of which served from the cache.
    pub hits: Cell<usize>,
    /// Tasks finished so far (completion order).
    pub finished: Cell<usize>,
}

impl<P: Platform, D: KnowledgePorts> Exec<'_, P, D> {
    fn cache_key(&self, input: &TaskInput, departments: &[String]) -> CacheKey {
        let task = &input.task;
        let inputs: Vec<&str> = input.inputs.iter().map(|a| a.answer.as_str()).collect();
        let joined_inputs = inputs.join("\u{1f}");
        let scopes = self.access.scopes.join(",");
        let departments = departments.join(",");
        CacheKey::for_site(
            self.site_id,
            &[
                "knowledge-task",
                &task.agent,
                task.tool.as_str(),
                &task.query,
                &task.message,
                &joined_inputs,
                &scopes,
                &departments,
                self.kb_version,
                self.language.as_str(),
            ],
        )
    }

    fn departments(&self, agent: &str) -> Vec<String> {
        self.config
            .agent(agent)
            .map(|a| self.access.agent_departments(a))
            .unwrap_or_default()
    }

    /// Runs one task attempt.
    pub async fn run(&self, input: &TaskInput) -> Result<TaskDone, TaskFailure> {
        let clock = self.platform.clock();
        let started = clock.now_ms();
        let task = &input.task;
        let departments = self.departments(&task.agent);
        let caching = self.config.workflow.enable_caching;
        let key = self.cache_key(input, &departments);
        self.calls.set(self.calls.get() + 1);
        let mut cached = None;
        if caching && let Ok(Some(text)) = self.deps.cache().get(&key).await {
            cached = serde_json::from_str::<AgentAnswer>(&text).ok();
        }
        let from_cache = cached.is_some();
        let answer = match cached {
            Some(mut answer) => {
                self.hits.set(self.hits.get() + 1);
                answer.node_id = task.node_id.clone();
                answer
            }
            None => {
                let (answer_text, context, evidence) = match task.tool {
                    ToolName::RagTool => self.rag(task, &departments).await?,
                    ToolName::LogTool => self.logs(task).await?,
                    ToolName::SummaryTool => {
                        let request = prompt::summary(task, &input.inputs, self.language);
                        let text = self.model(&request).await?;
                        (text, String::from("summary_tool"), Vec::new())
                    }
                    ToolName::MathTool => {
                        let request = prompt::math(task, &input.inputs, &task.query);
                        let reply = self.model(&request).await?;
                        let expression = expression_in(&reply).to_string();
                        let value =
                            evaluate(&expression).map_err(|_| TaskFailure::InvalidOutput)?;
                        (
                            format!("{expression} = {}", format_number(value)),
                            String::from("math_tool"),
                            Vec::new(),
                        )
                    }
                };
                let answer = AgentAnswer {
                    agent: task.agent.clone(),
                    tool: task.tool.as_str().into(),
                    node_id: task.node_id.clone(),
                    index: task.query_index,
                    query: task.query.clone(),
                    context,
                    answer: answer_text,
                    evidence,
                };
                if caching && let Ok(text) = serde_json::to_string(&answer) {
                    let ttl = self.config.workflow.cache_ttl_seconds;
                    let _ = self.deps.cache().put(&key, &text, ttl).await;
                }
                answer
            }
        };
        let input_json = json!({
            "agent": task.agent, "tool": task.tool.as_str(), "query": task.query,
            "inputs": input.inputs.iter().map(|a| a.answer.as_str()).collect::<Vec<_>>(),
        });
        let output_json = json!({"answer": answer.answer, "evidence": answer.evidence});
        let finished = self.finished.get() + 1;
        self.finished.set(finished);
        Ok(TaskDone {
            input_hash: hash_json(&input_json),
            output_hash: hash_json(&output_json),
            answer,
            duration_ms: clock.now_ms().saturating_sub(started),
            cached: from_cache,
            finished,
            attempts: 1,
        })
    }

    async fn model(&self, request: &ChatRequest) -> Result<String, TaskFailure> {
        let text = engine::complete(self.platform.model(), &ModelCall::new(request))
            .await
            .map_err(|_| TaskFailure::Upstream)?;
        if text.trim().is_empty() {
            return Err(TaskFailure::InvalidOutput);
        }
        Ok(text.trim().to_string())
    }

    async fn rag(
        &self,
        task: &PlannedTask,
        departments: &[String],
    ) -> Result<(String, String, Vec<EvidenceItem>), TaskFailure> {
        let vector = self
            .platform
            .embedder()
            .embed(&[task.query.as_str()])
            .await
            .map_err(|_| TaskFailure::Upstream)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let strings = |list: &[String]| list.iter().map(|s| Value::String(s.clone())).collect();
        let query = VectorQuery {
            vector,
            top_k: self.config.turn.retrieval.candidates,
            filter: MetadataFilter::new()
                .eq("site_id", self.site_id)
                .eq("source", "knowledge")
                .any_of("scope", strings(&self.access.scopes))
                .any_of("department", strings(departments)),
        };
        let matches = self
            .platform
            .index()
            .query(&query)
            .await
            .map_err(|_| TaskFailure::Upstream)?;
        let min = self.config.workflow.min_relevance_score;
        let mut evidence: Vec<EvidenceItem> = Vec::new();
        let mut passages: Vec<(String, String)> = Vec::new();
        for m in matches {
            let text = |key: &str| {
                m.metadata
                    .get(key)
                    .and_then(Value::as_str)
                    .map(String::from)
            };
            let relevance = round2(f64::from(m.score).clamp(0.0, 1.0));
            let Some(document_id) = text("document_id") else {
                continue;
            };
            if relevance < min || passages.len() >= self.config.turn.retrieval.top_k {
                continue;
            }
            let title = text("title").unwrap_or_else(|| document_id.clone());
            passages.push((title.clone(), text("text").unwrap_or_default()));
            if evidence.iter().any(|e| e.document_id == document_id) {
                continue;
            }
            evidence.push(EvidenceItem {
                url: text("url").unwrap_or_else(|| format!("kb://{document_id}")),
                created_at: text("created_at"),
                source_type: text("source_type").unwrap_or_else(|| "rag".into()),
                scope: text("scope").unwrap_or_else(|| "public".into()),
                relevance_score: relevance,
                document_id,
                department: text("department"),
                title: Some(title),
            });
        }
        if passages.is_empty() {
            let none = sentence(self.language, "no_passages").to_string();
            return Ok((none, String::new(), Vec::new()));
        }
        let titles: Vec<&str> = evidence.iter().filter_map(|e| e.title.as_deref()).collect();
        let context = format!("Trích xuất từ: {}", titles.join("; "));
        let request = prompt::rag(task, &passages, self.language);
        let answer = self.model(&request).await?;
        Ok((answer, context, evidence))
    }

    async fn logs(
        &self,
        task: &PlannedTask,
    ) -> Result<(String, String, Vec<EvidenceItem>), TaskFailure> {
        let query = LogQuery {
            keywords: task.query.clone(),
            since: None,
            until: None,
            limit: 20,
        };
        let entries = self
            .deps
            .base()
            .search_logs(self.site_id, &query)
            .await
            .map_err(|_| TaskFailure::Upstream)?;
        let mut answer = format!("{} log:", entries.len());
        let mut evidence = Vec::new();
        for entry in entries.iter().take(10) {
            let _ = write!(
                answer,
                "\n{} {} {}: {}",
                entry.ts, entry.level, entry.source, entry.message
            );
            evidence.push(EvidenceItem {
                url: format!("log://{}", entry.id),
                created_at: Some(entry.ts.clone()),
                source_type: "log".into(),
                scope: "internal".into(),
                relevance_score: 1.0,
                document_id: entry.id.clone(),
                department: Some("it".into()),
                title: Some(entry.source.clone()),
            });
        }
        Ok((answer, String::from("kb_logs"), evidence))
    }
}

/// A number as people write it: integers without decimals, others to 2 decimals.
pub fn format_number(value: f64) -> String {
    let rounded = round2(value);
    if rounded == (rounded as i64) as f64 {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded:.2}")
    }
}
