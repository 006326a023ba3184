//! What `knowledge` needs besides the engine's platform: a key-value cache (answers and
//! agent results) and the site's knowledge base (uploaded logs, its version).

use crate::boundary::{KnowledgeBase, KvCache};

/// `knowledge`'s dependencies.
#[derive(Debug, Clone)]
pub struct KnowledgeDeps<C, K> {
    /// The answer and agent-result cache, keyed per site.
    pub cache: C,
    /// The site's uploaded logs and knowledge-base state.
    pub base: K,
}

/// The dependencies as the flow reads them (one type parameter for the flow's steps).
pub trait KnowledgePorts {
    /// The cache.
    type Cache: KvCache;
    /// The knowledge base.
    type Base: KnowledgeBase;
    /// The cache.
    fn cache(&self) -> &Self::Cache;
    /// The knowledge base.
    fn base(&self) -> &Self::Base;
}

impl<C: KvCache, K: KnowledgeBase> KnowledgePorts for KnowledgeDeps<C, K> {
    type Cache = C;
    type Base = K;
    fn cache(&self) -> &C {
        &self.cache
    }
    fn base(&self) -> &K {
        &self.base
    }
}
