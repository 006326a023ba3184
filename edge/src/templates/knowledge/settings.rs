//! `knowledge`'s settings in a site's config (`config.knowledge`: agents, workflow,
//! conflict rules, permissions; defaults are seed 003's), replaced whole by a site body's
//! `knowledge`.

pub(crate) use concierge_core::flows::knowledge::KnowledgeSettings;
use worker::Env;

use crate::error::ApiError;
use crate::site::Site;
use crate::templates::Settings;

/// The settings' key in a site's config and body.
const KEY: &str = "knowledge";

impl Settings for KnowledgeSettings {
    type Patch = Self;

    fn apply(
        patch: &Self,
        _env: &Env,
        _site_id: &str,
        _old: Option<Self>,
    ) -> Result<Self, ApiError> {
        Ok(patch.clone())
    }
}

/// The site's `knowledge` settings, if it set any.
pub(crate) fn of(site: &Site) -> Option<KnowledgeSettings> {
    site.config.templates.get(KEY)
}
