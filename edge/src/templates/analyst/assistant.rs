//! `analyst` on the Worker: the site's settings (`config.analyst`) as an
//! [`AnalystConfig`], over the merchant's data sets in the site's object.

use concierge_core::flows::analyst::{AnalystAssistant, AnalystConfig};
use worker::Env;

use crate::error::ApiError;
use crate::site::Site;
use crate::site_object::data::SiteData;

/// `analyst` with its dependencies.
pub(crate) type Assistant = AnalystAssistant<SiteData>;

/// The site's `analyst`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    Ok(AnalystAssistant::new(
        config(site),
        SiteData::new(env, &site.id),
    ))
}

/// `analyst`'s settings: the template's defaults; `config.analyst.formatter_llm` (default
/// true), `config.analyst.max_rows` (default 50 000) and `config.analyst.json_tool_calls`
/// (default false) when the site sets them.
fn config(site: &Site) -> AnalystConfig {
    let mut config: AnalystConfig = crate::templates::default_config();
    if let Some(tokens) = site.config.llm.max_tokens {
        config.turn.max_tokens = Some(tokens);
    }
    if let Some(settings) = super::settings::of(site) {
        if let Some(on) = settings.formatter_llm {
            config.formatter_llm = on;
        }
        if let Some(rows) = settings.max_rows {
            config.max_rows = (rows as usize).clamp(1, 50_000);
        }
        if let Some(on) = settings.json_tool_calls {
            config.react.tool_json_fallback = on;
        }
    }
    config
}

impl crate::templates::TemplateHooks for Assistant {}
