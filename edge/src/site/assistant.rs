//! A site's assistant: the template it names, with its settings from the site's config.
//!
//! The engine runs any [`Assistant`]; this enum is the Worker's set of built templates, so
//! a route or the turn queue dispatches on the site's template once, here. A template that
//! is not built yet is refused ([`ApiError::TemplateUnavailable`]), never answered by
//! another.

use concierge_core::conversation::{Language, StoredMessage};
use concierge_core::engine::{Answer, Assistant, Platform, Refusal, Turn, TurnConfig};
use concierge_core::error::Error;
use concierge_core::flows::analyst::AnalystConfig;
use concierge_core::flows::guarded::GuardedConfig;
use concierge_core::flows::knowledge::{
    AgentConfig, ConflictRules, KnowledgeConfig, PermissionConfig, WorkflowConfig,
};
use concierge_core::flows::rental::RentalConfig;
use concierge_core::flows::shop::ShopConfig;
use concierge_core::prompt::Persona;
use concierge_core::template::Template;
use concierge_core::turn::TurnInput;
use serde::{Deserialize, Serialize};

use super::{DEFAULT_MAX_TOKENS, Site};
use crate::error::ApiError;

/// The assistant a site runs.
#[derive(Debug, Clone)]
pub(crate) enum SiteAssistant {
    /// Seed 000's store assistant.
    Shop(ShopConfig),
    /// Seed 004's domain-restricted advisor.
    Guarded(GuardedConfig),
    /// Seed 002's rental marketplace assistant.
    Rental(Box<RentalConfig>),
    /// Seed 003's internal-knowledge assistant.
    Knowledge(Box<KnowledgeConfig>),
    /// Seed 001.
    Analyst(Box<AnalystConfig>),
    /// The site's assistant, except that a conversation's staged test script plays first
    /// ([`super::scripted`]; only while `DEBUG_ROUTES` is on).
    Scripted(Box<SiteAssistant>),
}

impl SiteAssistant {
    /// The site's template with the site's settings, or the 400 for an unbuilt one.
    pub(crate) fn for_site(site: &Site) -> Result<Self, ApiError> {
        match site.template {
            Template::Shop => Ok(Self::Shop(shop_config(site))),
            Template::Guarded => {
                let max_tokens = site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
                Ok(Self::Guarded(super::guarded::guarded_config(
                    site, max_tokens,
                )))
            }
            Template::Rental => Ok(Self::Rental(Box::new(rental_config(site)))),
            Template::Knowledge => Ok(Self::Knowledge(Box::new(knowledge_config(site)))),
            Template::Analyst => Ok(Self::Analyst(Box::new(analyst_config(site)))),
        }
    }

    /// This assistant, playing staged test scripts first when the Worker's debug routes
    /// are on (never in production).
    pub(crate) fn with_debug_scripts(self, env: &worker::Env) -> Self {
        if crate::runtime::var_on(env, super::scripted::FLAG) {
            Self::Scripted(Box::new(self))
        } else {
            self
        }
    }
}

/// `shop`'s settings: the template's defaults, the site's answer token cap, and the site's
/// persona in the site's default language.
fn shop_config(site: &Site) -> ShopConfig {
    let mut config = ShopConfig::default();
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

/// `rental`'s settings: the template's defaults with the site's schema, labels, row cap
/// and answer token cap.
/// `analyst`'s settings: the template's defaults; `config.analyst.formatter_llm` (default
/// true), `config.analyst.max_rows` (default 50 000) and `config.analyst.json_tool_calls`
/// (default false) when the site sets them.
fn analyst_config(site: &Site) -> AnalystConfig {
    let mut config = AnalystConfig::default();
    if let Some(tokens) = site.config.llm.max_tokens {
        config.turn.max_tokens = Some(tokens);
    }
    if let Some(settings) = &site.config.analyst {
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

fn rental_config(site: &Site) -> RentalConfig {
    let mut config = RentalConfig::default();
    config.turn.max_tokens = Some(site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
    config.schema = super::RentalSettings::schema_of(&site.config);
    if let Some(settings) = &site.config.rental {
        config.show_role_label = settings.show_role_label.unwrap_or(true);
        if let Some(cap) = settings.row_cap {
            config.row_cap = cap as usize;
        }
    }
    config
}

/// `knowledge`'s site settings (`PATCH /admin/site` `{"knowledge": {…}}`); each part left
/// out keeps seed 003's defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct KnowledgeSettings {
    /// The agents (default: the seed's `hr`, `it`, `general`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<AgentConfig>>,
    /// Seed §8 workflow and agent configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowConfig>,
    /// Seed §4.1 conflict-resolution rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<ConflictRules>,
    /// Scopes, anonymous scopes, departments and the department map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionConfig>,
}

/// `knowledge`'s settings: the seed's defaults with the site's own parts.
fn knowledge_config(site: &Site) -> KnowledgeConfig {
    let mut config = KnowledgeConfig::default();
    let max_tokens = site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    config.turn.max_tokens = Some(max_tokens);
    if let Some(settings) = &site.config.knowledge {
        if let Some(agents) = &settings.agents {
            config.agents = agents.clone();
        }
        if let Some(workflow) = &settings.workflow {
            config.workflow = workflow.clone();
        }
        if let Some(rules) = &settings.rules {
            config.rules = rules.clone();
        }
        if let Some(permissions) = &settings.permissions {
            config.permissions = permissions.clone();
        }
    }
    config
}

impl Assistant for SiteAssistant {
    fn template(&self) -> Template {
        match self {
            Self::Shop(shop) => shop.template(),
            Self::Guarded(guarded) => guarded.template(),
            Self::Rental(rental) => rental.template(),
            Self::Knowledge(knowledge) => knowledge.template(),
            Self::Analyst(analyst) => analyst.template(),
            Self::Scripted(inner) => inner.template(),
        }
    }

    fn config(&self) -> &TurnConfig {
        match self {
            Self::Shop(shop) => shop.config(),
            Self::Guarded(guarded) => guarded.config(),
            Self::Rental(rental) => rental.config(),
            Self::Knowledge(knowledge) => Assistant::config(knowledge.as_ref()),
            Self::Analyst(analyst) => Assistant::config(analyst.as_ref()),
            Self::Scripted(inner) => inner.config(),
        }
    }

    fn greeting(&self, language: Language) -> &str {
        match self {
            Self::Shop(shop) => Assistant::greeting(shop, language),
            Self::Guarded(guarded) => guarded.greeting(language),
            Self::Rental(rental) => Assistant::greeting(rental.as_ref(), language),
            Self::Knowledge(knowledge) => Assistant::greeting(knowledge.as_ref(), language),
            Self::Analyst(analyst) => Assistant::greeting(analyst.as_ref(), language),
            Self::Scripted(inner) => inner.greeting(language),
        }
    }

    fn stored_intent(&self, reply: &StoredMessage) -> (Option<&'static str>, Option<f32>) {
        match self {
            Self::Shop(shop) => shop.stored_intent(reply),
            Self::Guarded(guarded) => guarded.stored_intent(reply),
            Self::Rental(rental) => rental.stored_intent(reply),
            Self::Knowledge(knowledge) => knowledge.stored_intent(reply),
            Self::Analyst(analyst) => analyst.stored_intent(reply),
            Self::Scripted(inner) => inner.stored_intent(reply),
        }
    }

    async fn screen<P: Platform>(
        &self,
        platform: &P,
        input: &TurnInput,
        text: &str,
    ) -> Result<Option<Refusal>, Error> {
        match self {
            Self::Shop(shop) => shop.screen(platform, input, text).await,
            Self::Guarded(guarded) => guarded.screen(platform, input, text).await,
            Self::Rental(rental) => rental.screen(platform, input, text).await,
            Self::Knowledge(knowledge) => knowledge.screen(platform, input, text).await,
            Self::Analyst(analyst) => analyst.screen(platform, input, text).await,
            Self::Scripted(inner) => Box::pin(inner.screen(platform, input, text)).await,
        }
    }

    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        match self {
            Self::Shop(shop) => shop.answer(platform, turn).await,
            Self::Guarded(guarded) => guarded.answer(platform, turn).await,
            Self::Rental(rental) => Box::pin(rental.answer(platform, turn)).await,
            Self::Knowledge(knowledge) => Box::pin(knowledge.answer(platform, turn)).await,
            Self::Analyst(analyst) => Box::pin(analyst.answer(platform, turn)).await,
            Self::Scripted(inner) => match super::scripted::take(platform, turn).await {
                Some(script) => super::scripted::play(platform, turn, script).await,
                None => Box::pin(inner.answer(platform, turn)).await,
            },
        }
    }
}
