//! Conflict resolution (seed 003 §4, "weighted_scoring"), made computable (TEMPLATES.md
//! §3.2):
//!
//! - each piece of evidence scores `(domain + scope + recency + relevance) / 4`: domain
//!   1.0 when the answering agent is the priority agent of the document's domain (a `hr`
//!   document → `hr_policies` → `hr_agent`), else 0.5; scope and recency by the rules'
//!   tables (unknown → 0.5); relevance as retrieved;
//! - an answer scores its best evidence (0 without evidence); answers are ranked by score,
//!   ties broken by agent, trace id and text, so the outcome never depends on the order
//!   the agents finished in;
//! - a **conflict** is a pair of answers from different agents: each is resolved by rank
//!   (the final prompt tells the model to prefer the higher-ranked answer where they
//!   contradict), and `resolved_conflicts` counts them; when the top two answers of
//!   different agents are closer than the threshold, the answer presents both views;
//! - `confidence_score` is the mean answer score, to 2 decimals.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::config::ConflictRules;

/// One piece of evidence (seed 003 §3), with the document it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceItem {
    /// Where the document is.
    pub url: String,
    /// The document's source date (ISO-8601), when known.
    #[serde(default)]
    pub created_at: Option<String>,
    /// `rag` or `log`.
    pub source_type: String,
    /// `public`, `internal` or `private`.
    pub scope: String,
    /// Retrieval relevance, 0 to 1.
    pub relevance_score: f64,
    /// The document (or log entry) id.
    pub document_id: String,
    /// The document's department.
    #[serde(default)]
    pub department: Option<String>,
    /// The document's title.
    #[serde(default)]
    pub title: Option<String>,
}

/// One agent's answer to one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentAnswer {
    /// The agent.
    pub agent: String,
    /// The tool that produced it.
    pub tool: String,
    /// The trace id of the task.
    pub node_id: String,
    /// The query index, for `rag_tool`.
    #[serde(default)]
    pub index: Option<usize>,
    /// The query.
    pub query: String,
    /// Where the passages came from.
    pub context: String,
    /// The answer.
    pub answer: String,
    /// Its evidence.
    pub evidence: Vec<EvidenceItem>,
}

/// The resolved result.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// The answers with their scores, best first.
    pub ranked: Vec<(AgentAnswer, f64)>,
    /// Pairs of answers from different agents.
    pub resolved_conflicts: usize,
    /// Whether the two best answers of different agents are within the threshold.
    pub too_close: bool,
    /// The mean answer score, to 2 decimals.
    pub confidence_score: f64,
    /// Every kept piece of evidence, deduplicated by URL (best score kept), best first.
    pub evidence: Vec<(EvidenceItem, f64)>,
}

const DAY_MS: f64 = 86_400_000.0;

/// Unix milliseconds of an ISO-8601 UTC time (`2025-08-20T03:12:45Z`, or a date).
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |r: core::ops::Range<usize>| -> Option<i64> {
        core::str::from_utf8(b.get(r)?).ok()?.parse().ok()
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&month) {
        return None;
    }
    let (hour, minute, second) = if b.len() >= 19 {
        (num(11..13)?, num(14..16)?, num(17..19)?)
    } else {
        (0, 0, 0)
    };
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000)
}

pub use crate::boundary::iso_of_ms;

impl ConflictRules {
    /// The scope weight (unknown → 0.5).
    pub fn scope_weight(&self, scope: &str) -> f64 {
        self.priority_by_scope.get(scope).copied().unwrap_or(0.5)
    }

    /// The recency weight of a document dated `created_at` at `now_ms`.
    pub fn recency_weight(&self, created_at: Option<&str>, now_ms: u64) -> f64 {
        let weights = &self.priority_by_recency;
        match created_at.and_then(parse_iso_ms) {
            Some(at) => {
                let age = (now_ms as i64 - at) as f64 / DAY_MS;
                if age <= 30.0 {
                    weights.within_30_days
                } else if age <= 90.0 {
                    weights.within_90_days
                } else {
                    weights.older
                }
            }
            None => weights.older,
        }
    }

    /// 1.0 when `agent` is the priority agent of the domain of a document of
    /// `department`, else 0.5.
    pub fn domain_weight(&self, agent: &str, department: Option<&str>) -> f64 {
        let priority = department
            .and_then(|d| self.department_domains.get(d))
            .and_then(|domain| self.priority_by_domain.get(domain));
        match priority {
            Some(priority) if priority.strip_suffix("_agent") == Some(agent) => 1.0,
            _ => 0.5,
        }
    }

    /// The combined score of one piece of evidence for an answer of `agent`.
    pub fn evidence_score(&self, agent: &str, evidence: &EvidenceItem, now_ms: u64) -> f64 {
        (self.domain_weight(agent, evidence.department.as_deref())
            + self.scope_weight(&evidence.scope)
            + self.recency_weight(evidence.created_at.as_deref(), now_ms)
            + evidence.relevance_score)
            / 4.0
    }
}

/// Resolves the agents' answers (in any order) under `rules` at `now_ms`.
pub fn resolve(
    answers: &[AgentAnswer],
    rules: &ConflictRules,
    threshold: f64,
    now_ms: u64,
) -> Resolution {
    let mut ranked: Vec<(AgentAnswer, f64)> = answers
        .iter()
        .map(|a| {
            let score = a
                .evidence
                .iter()
                .map(|e| rules.evidence_score(&a.agent, e, now_ms))
                .fold(0.0, f64::max);
            (a.clone(), score)
        })
        .collect();
    ranked.sort_by(|(a, x), (b, y)| {
        y.total_cmp(x)
            .then_with(|| a.agent.cmp(&b.agent))
            .then_with(|| a.node_id.cmp(&b.node_id))
            .then_with(|| a.answer.cmp(&b.answer))
            .then_with(|| a.query.cmp(&b.query))
    });
    let mut resolved_conflicts = 0;
    for (i, (a, _)) in ranked.iter().enumerate() {
        resolved_conflicts += ranked[i + 1..]
            .iter()
            .filter(|(b, _)| b.agent != a.agent)
            .count();
    }
    let too_close = ranked.first().is_some_and(|(top, top_score)| {
        ranked
            .iter()
            .find(|(other, _)| other.agent != top.agent)
            .is_some_and(|(_, score)| top_score - score < threshold)
    });
    let confidence_score = if ranked.is_empty() {
        0.0
    } else {
        let mean = ranked.iter().map(|(_, s)| s).sum::<f64>() / ranked.len() as f64;
        round2(mean)
    };
    let mut evidence: Vec<(EvidenceItem, f64)> = Vec::new();
    for (answer, _) in &ranked {
        for item in &answer.evidence {
            let score = rules.evidence_score(&answer.agent, item, now_ms);
            match evidence.iter_mut().find(|(e, _)| e.url == item.url) {
                Some(kept)
                    if kept.1 < score
                        || (kept.1 == score && item.document_id < kept.0.document_id) =>
                {
                    *kept = (item.clone(), score);
                }
                Some(_) => {}
                None => evidence.push((item.clone(), score)),
            }
        }
    }
    evidence.sort_by(|(a, x), (b, y)| y.total_cmp(x).then_with(|| a.url.cmp(&b.url)));
    Resolution {
        ranked,
        resolved_conflicts,
        too_close,
        confidence_score,
        evidence,
    }
}

/// `x` rounded to 2 decimals.
pub fn round2(x: f64) -> f64 {
    let scaled = x * 100.0;
    let rounded = if scaled >= 0.0 {
        (scaled + 0.5) as i64
    } else {
        (scaled - 0.5) as i64
    };
    rounded as f64 / 100.0
}
