//! `guarded` on the Worker: the site's settings (`config.guarded`, [`super::settings`])
//! as a `GuardedConfig`, over the site's web search provider.

use concierge_core::flows::guarded::GuardedAssistant;
use worker::Env;

use super::web_search::SiteSearch;
use crate::error::ApiError;
use crate::site::{DEFAULT_MAX_TOKENS, Site};

/// `guarded` with its dependencies.
pub(crate) type Assistant = GuardedAssistant<SiteSearch>;

/// The site's `guarded`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    let max_tokens = site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let config = super::settings::guarded_config(site, max_tokens);
    Ok(GuardedAssistant::new(
        config,
        SiteSearch::for_site(env, site)?,
    ))
}

impl crate::templates::TemplateHooks for Assistant {
    /// `guarded.assistant_id` when the site sets one (the seed's `dental-duckduckgo`).
    fn openai_model_id(site: &Site) -> Option<String> {
        super::settings::of(site).and_then(|settings| settings.assistant_id.clone())
    }

    /// The seed's frontend always names its conversation (`chat_id`, or `X-Chat-Id`).
    const OPENAI_NAMED_CHATS: bool = true;

    /// The seed's user config, `ollama_model` and `ollama_guardrail_model`: accepted only
    /// from the site's `guarded.allowed_models`, otherwise 400 (a visitor must not pick a
    /// costly model).
    fn openai_request(&mut self, site: &Site, raw: &serde_json::Value) -> Result<(), ApiError> {
        let allowed = super::settings::get(site).allowed_models;
        let config = &mut self.config;
        for (field, slot) in [
            ("ollama_model", &mut config.chat_model),
            ("ollama_guardrail_model", &mut config.guardrail_model),
        ] {
            let Some(value) = raw.get(field).filter(|v| !v.is_null()) else {
                continue;
            };
            match value.as_str() {
                Some(model) if allowed.iter().any(|m| m == model) => {
                    *slot = Some(model.to_string());
                }
                _ => {
                    return Err(ApiError::BadField(
                        field,
                        format!("`{field}` must be one of the site's allowed models."),
                    ));
                }
            }
        }
        Ok(())
    }
}
