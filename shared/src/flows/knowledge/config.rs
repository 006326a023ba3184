//! `knowledge`'s settings: seed 003 §8 (workflow and agent configuration), §1.1 (the
//! agents), §4.1 (conflict-resolution rules), and the permission settings of TEMPLATES.md
//! §3.3. Every value is a site setting with the seed's default.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::agent::StageConfig;
use crate::conversation::Language;
use crate::engine::TurnConfig;

/// The product strings (`prompts/knowledge_fixed_vi.md`).
pub const SENTENCES_VI: &str = include_str!("../../../../prompts/knowledge_fixed_vi.md");
/// The product strings (`prompts/knowledge_fixed_en.md`).
pub const SENTENCES_EN: &str = include_str!("../../../../prompts/knowledge_fixed_en.md");

/// Seed 003 §2.1: the chitchat answer, verbatim.
pub const CHITCHAT_RESPONSE: &str = "Xin chào! Tôi có thể giúp gì cho bạn?";

/// The four tools of seed 003 §1.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// Retrieval over the site's documents, answered by the model.
    RagTool,
    /// The model's synthesis of the agent's answers so far.
    SummaryTool,
    /// An arithmetic expression written by the model, computed in Rust.
    MathTool,
    /// Keyword search over the site's uploaded logs.
    LogTool,
}

impl ToolName {
    /// The seed's name (`rag_tool`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RagTool => "rag_tool",
            Self::SummaryTool => "summary_tool",
            Self::MathTool => "math_tool",
            Self::LogTool => "log_tool",
        }
    }

    /// The tool named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::RagTool,
            Self::SummaryTool,
            Self::MathTool,
            Self::LogTool,
        ]
        .into_iter()
        .find(|t| t.as_str() == name)
    }

    /// The name without `_tool` (trace node ids: `hr#rag`).
    pub fn short(self) -> &'static str {
        self.as_str().trim_end_matches("_tool")
    }

    /// Retrieval-type tools run first within a stage (TEMPLATES.md §3.1).
    pub fn is_retrieval(self) -> bool {
        matches!(self, Self::RagTool | Self::LogTool)
    }
}

/// One tool of an agent, with its description for the planner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentTool {
    /// The tool.
    pub name: ToolName,
    /// What the tool does, for the planner.
    pub description: String,
}

/// One specialised agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// Its id (`hr`, `it`, `general`).
    pub id: String,
    /// Its display name in error messages (default: the id upper-cased when it has at most
    /// 3 letters, else capitalised).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    /// What it specialises in, for the planner.
    pub desc: String,
    /// Its tools.
    pub tools: Vec<AgentTool>,
    /// The document departments it retrieves from (empty: every department — the
    /// `general` agent).
    #[serde(default)]
    pub departments: Vec<String>,
}

impl AgentConfig {
    /// `HR`, `IT`, `General`.
    pub fn display_name(&self) -> String {
        if let Some(display) = &self.display {
            return display.clone();
        }
        if self.id.chars().count() <= 3 {
            return self.id.to_uppercase();
        }
        let mut chars = self.id.chars();
        chars.next().map_or_else(String::new, |first| {
            first.to_uppercase().chain(chars).collect()
        })
    }

    /// Whether the agent has `tool`.
    pub fn has_tool(&self, tool: ToolName) -> bool {
        self.tools.iter().any(|t| t.name == tool)
    }
}

fn tool(name: ToolName, description: &str) -> AgentTool {
    AgentTool {
        name,
        description: description.into(),
    }
}

/// Seed 003 §1.1's three agents.
pub fn seed_agents() -> Vec<AgentConfig> {
    use ToolName::*;
    vec![
        AgentConfig {
            id: "hr".into(),
            display: None,
            desc: "chuyên lĩnh vực chấm công, đi muộn, tiền lương,...".into(),
            tools: vec![
                tool(RagTool, "tìm kiếm thông tin, truy xuất"),
                tool(SummaryTool, "tổng hợp thông tin"),
                tool(MathTool, "tính toán thông tin"),
            ],
            departments: vec!["hr".into()],
        },
        AgentConfig {
            id: "it".into(),
            display: None,
            desc: "chuyên lĩnh vực xử lý lỗi, sự cố bảo mật,...".into(),
            tools: vec![
                tool(RagTool, "tìm kiếm thông tin, truy xuất"),
                tool(LogTool, "tổng hợp thông tin log của công ty"),
                tool(MathTool, "tính toán thông tin"),
            ],
            departments: vec!["it".into()],
        },
        AgentConfig {
            id: "general".into(),
            display: None,
            desc: "tổng quát, xử lý các câu hỏi không thuộc domain cụ thể".into(),
            tools: vec![tool(RagTool, "tìm kiếm thông tin chung")],
            departments: Vec::new(),
        },
    ]
}

/// Seed 003 §8.1 and §8.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkflowConfig {
    /// Tasks in flight at once (5).
    pub max_concurrent_agents: usize,
    /// One task attempt's bound, ms (30 000).
    pub timeout_per_agent_ms: u64,
    /// Further attempts after a failed one (3).
    pub max_retries: u32,
    /// Whether task results and answers are cached (true).
    pub enable_caching: bool,
    /// Cache lifetime, seconds (3600).
    pub cache_ttl_seconds: u32,
    /// Answers closer than this are "too close to call" (0.1).
    pub conflict_resolution_threshold: f64,
    /// Evidence below this relevance is dropped (0.7).
    pub min_relevance_score: f64,
    /// Whether the answer offers follow-up questions (true).
    pub enable_follow_up_questions: bool,
    /// At most this many follow-ups (5).
    pub max_follow_up_questions: usize,
    /// At most this many queries per agent (10).
    pub max_queries_per_agent: usize,
    /// false → one task at a time (true).
    pub enable_parallel_execution: bool,
    /// false → the orchestrator skips the planner and runs the direct plan (true).
    pub enable_reflection: bool,
}

impl Default for WorkflowConfig {
    fn default() -> Self {
        Self {
            max_concurrent_agents: 5,
            timeout_per_agent_ms: 30_000,
            max_retries: 3,
            enable_caching: true,
            cache_ttl_seconds: 3600,
            conflict_resolution_threshold: 0.1,
            min_relevance_score: 0.7,
            enable_follow_up_questions: true,
            max_follow_up_questions: 5,
            max_queries_per_agent: 10,
            enable_parallel_execution: true,
            enable_reflection: true,
        }
    }
}

impl WorkflowConfig {
    /// The engine's stage bounds for these settings.
    pub fn stage(&self) -> StageConfig {
        StageConfig {
            max_concurrent: if self.enable_parallel_execution {
                self.max_concurrent_agents.max(1)
            } else {
                1
            },
            timeout_ms: self.timeout_per_agent_ms,
            retries: self.max_retries,
        }
    }
}

/// Seed 003 §4.1, verbatim defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConflictRules {
    /// Domain → priority agent (`hr_policies` → `hr_agent`).
    pub priority_by_domain: BTreeMap<String, String>,
    /// Scope weights: private 0.9, internal 0.7, public 0.5.
    pub priority_by_scope: BTreeMap<String, f64>,
    /// Recency weights: within 30 days 0.9, within 90 days 0.7, older 0.5.
    pub priority_by_recency: RecencyWeights,
    /// `weighted_scoring`.
    pub resolution_strategy: String,
    /// Document department → domain (`hr` → `hr_policies`).
    pub department_domains: BTreeMap<String, String>,
}

/// Seed 003 §4.1 `priority_by_recency`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecencyWeights {
    /// ≤ 30 days.
    pub within_30_days: f64,
    /// ≤ 90 days.
    pub within_90_days: f64,
    /// Older or unknown.
    pub older: f64,
}

impl Default for ConflictRules {
    fn default() -> Self {
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        Self {
            priority_by_domain: [
                pair("hr_policies", "hr_agent"),
                pair("it_security", "it_agent"),
                pair("general_knowledge", "general_agent"),
            ]
            .into_iter()
            .collect(),
            priority_by_scope: [
                ("private".to_string(), 0.9),
                ("internal".to_string(), 0.7),
                ("public".to_string(), 0.5),
            ]
            .into_iter()
            .collect(),
            priority_by_recency: RecencyWeights {
                within_30_days: 0.9,
                within_90_days: 0.7,
                older: 0.5,
            },
            resolution_strategy: "weighted_scoring".into(),
            department_domains: [
                pair("hr", "hr_policies"),
                pair("it", "it_security"),
                pair("general", "general_knowledge"),
            ]
            .into_iter()
            .collect(),
        }
    }
}

/// Who may read what (TEMPLATES.md §3.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PermissionConfig {
    /// The scopes this site uses (`public`, `internal`, `private`): a claimed scope
    /// outside this list is ignored.
    pub allowed_scopes: Vec<String>,
    /// What an anonymous visitor reads (default `["public"]`; a site may add
    /// `internal`).
    pub anonymous_scopes: Vec<String>,
    /// The document departments (`accessible_departments` when unrestricted).
    pub departments: Vec<String>,
    /// User department → the departments it may read; a department not listed reads
    /// every department (permissive by default, as in the seed).
    pub department_map: BTreeMap<String, Vec<String>>,
}

impl Default for PermissionConfig {
    fn default() -> Self {
        Self {
            allowed_scopes: vec!["public".into(), "internal".into(), "private".into()],
            anonymous_scopes: vec!["public".into()],
            departments: vec!["hr".into(), "it".into(), "general".into()],
            department_map: BTreeMap::new(),
        }
    }
}

/// The `knowledge` template's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct KnowledgeConfig {
    /// The settings every template shares.
    pub turn: TurnConfig,
    /// The site's agents (default: the seed's `hr`, `it`, `general`).
    pub agents: Vec<AgentConfig>,
    /// Seed §8.
    pub workflow: WorkflowConfig,
    /// Seed §4.1.
    pub rules: ConflictRules,
    /// Scopes and departments.
    pub permissions: PermissionConfig,
    /// The greeting (default: the seed's chitchat answer).
    pub greeting: Option<String>,
}

impl Default for KnowledgeConfig {
    fn default() -> Self {
        Self {
            turn: TurnConfig::default(),
            agents: seed_agents(),
            workflow: WorkflowConfig::default(),
            rules: ConflictRules::default(),
            permissions: PermissionConfig::default(),
            greeting: None,
        }
    }
}

impl KnowledgeConfig {
    /// The agent `id`.
    pub fn agent(&self, id: &str) -> Option<&AgentConfig> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// A product string by key (`partial_fallback`, `all_failed`).
    pub fn sentence(&self, language: Language, key: &str) -> &'static str {
        sentence(language, key)
    }
}

/// A product string from `prompts/knowledge_fixed_{vi,en}.md` (`key: text` lines).
pub fn sentence(language: Language, key: &str) -> &'static str {
    let text = match language {
        Language::Vi => SENTENCES_VI,
        Language::En => SENTENCES_EN,
    };
    text.lines()
        .find_map(|line| {
            line.strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(": "))
        })
        .map_or("", str::trim)
}
