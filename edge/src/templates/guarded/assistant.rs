//! `guarded` on the Worker: the site's settings (`config.guarded`, [`crate::site::guarded`])
//! as a `GuardedConfig`, over the site's web search provider.

use concierge_core::flows::guarded::GuardedAssistant;
use worker::Env;

use crate::bindings::web_search::SiteSearch;
use crate::error::ApiError;
use crate::site::{DEFAULT_MAX_TOKENS, Site};

/// `guarded` with its dependencies.
pub(crate) type Assistant = GuardedAssistant<SiteSearch>;

/// The site's `guarded`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    let max_tokens = site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let config = crate::site::guarded::guarded_config(site, max_tokens);
    Ok(GuardedAssistant::new(
        config,
        SiteSearch::for_site(env, site)?,
    ))
}
