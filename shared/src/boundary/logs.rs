//! The merchant's uploaded logs, searched by `knowledge`'s `log_tool` (seed 003), and the
//! state of a site's knowledge base (its version, bumped on every change, and whether it
//! has logs).
//!
//! `knowledge` reaches them through its own dependency, a [`KnowledgeBase`]; the engine's
//! [`Platform`](crate::engine::Platform) knows nothing of them.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::ServiceError;
use serde::{Deserialize, Serialize};

/// A keyword search over a site's logs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogQuery {
    /// Words to look for (any of them; full-text search, not a pattern language).
    pub keywords: String,
    /// Only entries at or after this ISO-8601 time, when set.
    pub since: Option<String>,
    /// Only entries at or before this ISO-8601 time, when set.
    pub until: Option<String>,
    /// At most this many entries, best matches first.
    pub limit: usize,
}

/// One log entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// The entry's id (unique per site).
    pub id: String,
    /// When it happened (ISO-8601).
    pub ts: String,
    /// Its level (`INFO`, `WARN`, `ERROR`, …).
    pub level: String,
    /// What wrote it (a service, a host).
    pub source: String,
    /// The line itself.
    pub message: String,
}

/// A site's knowledge base as the answer cache sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KnowledgeState {
    /// Changes whenever a document or log of the site is written or deleted (part of
    /// every cache key, so no cached answer outlives the knowledge it came from).
    pub version: String,
    /// Whether the site has uploaded logs (`log_tool` tasks are dropped otherwise).
    pub has_logs: bool,
}

/// Words of `keywords` as an FTS5 query matching any of them: each word quoted (quotes
/// doubled), so no FTS5 syntax in a visitor's or model's text is ever interpreted.
/// Empty when there is no word.
pub fn fts_any_of(keywords: &str) -> String {
    let mut query = String::new();
    for word in keywords
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-' && c != '.')
        .filter(|w| w.chars().count() >= 2)
        .take(16)
    {
        if !query.is_empty() {
            query.push_str(" OR ");
        }
        query.push('"');
        query.push_str(&word.replace('"', "\"\""));
        query.push('"');
    }
    query
}

/// A site's uploaded logs and knowledge-base state: what `knowledge`'s `log_tool` searches
/// and what its answer cache keys on.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait KnowledgeBase {
    /// At most `query.limit` of the site's log entries matching `query`, best first.
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError>;

    /// The site's knowledge-base version and whether it has logs.
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError>;
}

impl<T: KnowledgeBase + ?Sized> KnowledgeBase for &T {
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        (**self).search_logs(site_id, query).await
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        (**self).knowledge_state(site_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_queries_quote_every_word() {
        assert_eq!(
            fts_any_of("login failed; NEAR(x) \"db\""),
            "\"login\" OR \"failed\" OR \"NEAR\" OR \"db\""
        );
        assert_eq!(fts_any_of("a ! ?"), "");
    }
}
