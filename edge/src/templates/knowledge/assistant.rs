//! `knowledge` on the Worker: the site's settings (`config.knowledge`) as a
//! [`KnowledgeConfig`], over the answer cache in KV and the site's knowledge base in D1.

use concierge_core::boundary::{KnowledgeBase, KnowledgeState, LogEntry, LogQuery};
use concierge_core::error::ServiceError;
use concierge_core::flows::knowledge::{KnowledgeAssistant, KnowledgeConfig};
use worker::{D1Database, Env};

use crate::bindings::kv_cache::WorkerKvCache;
use crate::error::ApiError;
use crate::site::{DEFAULT_MAX_TOKENS, Site};

/// `knowledge` with its dependencies.
pub(crate) type Assistant = KnowledgeAssistant<WorkerKvCache, D1KnowledgeBase>;

/// The site's `knowledge`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    // A draft's answers are cached apart from the live configuration's, under its whole
    // configuration: a visitor is never served an answer the draft computed.
    let digested = if site.drafted {
        format!(
            "draft:{}",
            serde_json::to_string(&site.config).unwrap_or_default()
        )
    } else {
        serde_json::to_string(&super::settings::of(site)).unwrap_or_default()
    };
    let base = D1KnowledgeBase {
        db: env.d1("DB")?,
        env: env.clone(),
        settings: crate::runtime::sha256_hex(&digested)[..16].to_string(),
    };
    Ok(KnowledgeAssistant::new(
        config(site),
        WorkerKvCache::from_env(env)?,
        base,
    ))
}

/// The site's uploaded logs and knowledge-base version in D1.
#[derive(Debug)]
pub(crate) struct D1KnowledgeBase {
    db: D1Database,
    /// For the site's object, which holds its logs.
    env: Env,
    /// A digest of the site's knowledge settings, part of the knowledge version in every
    /// knowledge cache key: an answer computed under other settings is never served.
    settings: String,
}

impl KnowledgeBase for D1KnowledgeBase {
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        crate::site_object::logs::search_logs(&self.env, site_id, query)
            .await
            .map_err(|e| {
                ServiceError::new(
                    concierge_core::error::ServiceErrorKind::Unavailable,
                    e.to_string(),
                )
            })
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        let mut state = crate::bindings::kb::state(&self.db, site_id).await?;
        state.version = format!("{}.{}", state.version, self.settings);
        Ok(state)
    }
}

/// `knowledge`'s settings: the seed's defaults with the site's own parts.
fn config(site: &Site) -> KnowledgeConfig {
    let mut config: KnowledgeConfig = crate::templates::default_config();
    let max_tokens = site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    config.turn.max_tokens = Some(max_tokens);
    if let Some(settings) = super::settings::of(site) {
        settings.apply(&mut config);
    }
    config
}

impl crate::templates::TemplateHooks for Assistant {}
