//! Uploaded logs and knowledge-base versions in memory (`knowledge`'s `log_tool` and
//! answer cache).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::boundary::{KnowledgeState, LogEntry, LogQuery};
use crate::normalize::for_each_word;

/// The folded words of `text`.
fn folded_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for_each_word(text, |w| words.push(String::from(w.folded)));
    words
}

/// Each site's logs and knowledge-base version.
#[derive(Debug, Default)]
pub struct MemoryKnowledgeBase {
    logs: RefCell<Vec<(String, LogEntry)>>,
    versions: RefCell<BTreeMap<String, u64>>,
}

impl MemoryKnowledgeBase {
    /// No logs; every site at version 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds log entries to `site_id` (and bumps its version).
    pub fn add_logs(&self, site_id: &str, entries: Vec<LogEntry>) {
        self.logs
            .borrow_mut()
            .extend(entries.into_iter().map(|e| (String::from(site_id), e)));
        self.bump(site_id);
    }

    /// Records a change to `site_id`'s knowledge (a document written or deleted).
    pub fn bump(&self, site_id: &str) {
        *self
            .versions
            .borrow_mut()
            .entry(site_id.into())
            .or_default() += 1;
    }

    /// The site's state.
    pub fn state(&self, site_id: &str) -> KnowledgeState {
        let version = self.versions.borrow().get(site_id).copied().unwrap_or(0);
        KnowledgeState {
            version: format!("{version}"),
            has_logs: self.logs.borrow().iter().any(|(s, _)| s == site_id),
        }
    }

    /// Entries of `site_id` containing any keyword (case- and accent-insensitive) within
    /// the time window, most matching words first, then newest.
    pub fn search(&self, site_id: &str, query: &LogQuery) -> Vec<LogEntry> {
        let mut words = folded_words(&query.keywords);
        words.retain(|w| w.chars().count() >= 2);
        let mut hits: Vec<(usize, LogEntry)> = self
            .logs
            .borrow()
            .iter()
            .filter(|(s, _)| s == site_id)
            .filter(|(_, e)| query.since.as_ref().is_none_or(|t| e.ts >= *t))
            .filter(|(_, e)| query.until.as_ref().is_none_or(|t| e.ts <= *t))
            .filter_map(|(_, e)| {
                let text = folded_words(&format!("{} {} {}", e.level, e.source, e.message));
                let count = words.iter().filter(|w| text.contains(w)).count();
                (count > 0).then(|| (count, e.clone()))
            })
            .collect();
        hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.ts.cmp(&a.1.ts)));
        hits.into_iter().take(query.limit).map(|(_, e)| e).collect()
    }
}

impl crate::boundary::KnowledgeBase for MemoryKnowledgeBase {
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, crate::error::ServiceError> {
        Ok(self.search(site_id, query))
    }
    async fn knowledge_state(
        &self,
        site_id: &str,
    ) -> Result<KnowledgeState, crate::error::ServiceError> {
        Ok(self.state(site_id))
    }
}
