//! `analyst`'s settings in a site's config (`config.analyst`), replaced whole by a site
//! body's `analyst`.

use serde::{Deserialize, Serialize};
use worker::Env;

use crate::error::ApiError;
use crate::site::Site;
use crate::templates::Settings;

/// The settings' key in a site's config and body.
const KEY: &str = "analyst";

/// `analyst`'s settings in a site's config; unset fields keep the template's defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnalystSettings {
    /// Whether the data path's answer goes through the formatter LLM (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formatter_llm: Option<bool>,
    /// Rows a tool loads per data set at most (default and maximum 50 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<u32>,
    /// When the model answers a data question in prose instead of calling a tool, ask
    /// once more for the call as a JSON object (default false): for small self-hosted
    /// models whose server does not enforce `tool_choice`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_tool_calls: Option<bool>,
}

impl Settings for AnalystSettings {
    type Patch = Self;

    fn apply(
        patch: &Self,
        _env: &Env,
        _site_id: &str,
        _old: Option<Self>,
    ) -> Result<Self, ApiError> {
        if patch.max_rows.is_some_and(|n| n == 0 || n > 50_000) {
            return Err(ApiError::bad_request(
                "`analyst.max_rows` must be 1 to 50000.",
            ));
        }
        Ok(patch.clone())
    }
}

/// The site's `analyst` settings, if it set any.
pub(crate) fn of(site: &Site) -> Option<AnalystSettings> {
    site.config.templates.get(KEY)
}
