//! `shop` on the Worker: the site's settings as a [`ShopConfig`], over the site's warranty
//! records in its own object.

use concierge_core::conversation::Language;
use concierge_core::flows::shop::{ShopAssistant, ShopConfig};
use concierge_core::prompt::Persona;
use worker::Env;

use crate::error::ApiError;
use crate::site::{DEFAULT_MAX_TOKENS, Site};
use crate::site_object::warranty::SiteWarranty;

/// `shop` with its dependencies.
pub(crate) type Assistant = ShopAssistant<SiteWarranty>;

/// The site's `shop`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    Ok(ShopAssistant::new(config(site), SiteWarranty::new(env)))
}

/// `shop`'s settings: the template's defaults, the site's answer token cap, the site's
/// persona in the site's default language, and its catalog vocabulary for the classifier.
fn config(site: &Site) -> ShopConfig {
    let mut config: ShopConfig = crate::templates::default_config();
    config
        .classifier
        .add_catalog(site.catalog.iter().map(String::as_str));
    let max_tokens = site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    config.turn.max_tokens = Some(max_tokens);
    if let Some(persona) = &site.config.persona {
        let parsed = Persona::parse(persona);
        let language = site.config.language.as_deref().and_then(Language::parse);
        match language.unwrap_or_default() {
            Language::Vi => config.vi.persona = parsed,
            Language::En => config.en.persona = parsed,
        }
    }
    config
}

impl crate::templates::TemplateHooks for Assistant {}
