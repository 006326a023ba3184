//! The registry: the assistant a site runs, one line per template.
//!
//! The engine runs any [`Assistant`]; [`SiteAssistant`] is the Worker's set of built
//! templates, each with the site's settings and its own dependencies (built for the
//! site's template only), so a route or the turn queue dispatches on the site's template
//! once, here. A template that is not built yet is refused
//! ([`ApiError::TemplateUnavailable`]), never answered by another.

use concierge_core::conversation::{Language, StoredMessage};
use concierge_core::engine::{Answer, Assistant, Platform, Refusal, Turn, TurnConfig};
use concierge_core::error::Error;
use concierge_core::template::Template;
use concierge_core::turn::{ReplyEnvelope, TurnInput};
use worker::Env;

use crate::bindings::kv_cache::WorkerKvCache;
use crate::bindings::services::{Services, SiteAssistants};
use crate::error::ApiError;
use crate::site::{Site, scripted};

/// The site's assistant and the engine's platform for one turn — built together, once.
pub(crate) fn turn_context(env: &Env, site: &Site) -> Result<(SiteAssistant, Services), ApiError> {
    Ok((
        SiteAssistant::for_site(env, site)?,
        Services::new(env, site)?,
    ))
}

/// The registry as the turn queue's consumer sees it ([`SiteAssistants`]).
#[derive(Debug)]
pub(crate) struct SiteTemplates;

impl SiteAssistants for SiteTemplates {
    type Assistant = SiteAssistant;
    fn for_site(env: &Env, site: &Site) -> Result<SiteAssistant, ApiError> {
        SiteAssistant::for_site(env, site)
    }
}

impl SiteAssistant {
    /// This assistant, playing staged test scripts first when the Worker's debug routes
    /// are on (never in production).
    pub(crate) fn with_debug_scripts(self, env: &worker::Env) -> Self {
        if !crate::runtime::var_on(env, scripted::FLAG) {
            return self;
        }
        match WorkerKvCache::from_env(env) {
            Ok(cache) => Self::Scripted(Box::new(self), cache),
            Err(_) => self,
        }
    }
}

/// The registry's enum and its dispatch, from one list of `Variant => module` lines.
macro_rules! registry {
    ($($variant:ident => $module:ident),* $(,)?) => {
        /// The assistant a site runs.
        #[derive(Debug)]
        pub(crate) enum SiteAssistant {
            $(
                #[doc = concat!("`", stringify!($module), "`.")]
                $variant(Box<super::$module::assistant::Assistant>),
            )*
            /// The site's assistant, except that a conversation's staged test script plays
            /// first ([`scripted`]; only while `DEBUG_ROUTES` is on).
            Scripted(Box<SiteAssistant>, WorkerKvCache),
        }

        impl SiteAssistant {
            /// The site's template with the site's settings and its dependencies.
            pub(crate) fn for_site(env: &Env, site: &Site) -> Result<Self, ApiError> {
                match site.template {
                    $(Template::$variant => Ok(Self::$variant(Box::new(
                        super::$module::assistant::build(env, site)?,
                    ))),)*
                }
            }
        }

        impl Assistant for SiteAssistant {
            fn config(&self) -> &TurnConfig {
                match self {
                    $(Self::$variant(a) => Assistant::config(a.as_ref()),)*
                    Self::Scripted(inner, _) => inner.config(),
                }
            }

            fn greeting(&self, language: Language) -> &str {
                match self {
                    $(Self::$variant(a) => Assistant::greeting(a.as_ref(), language),)*
                    Self::Scripted(inner, _) => inner.greeting(language),
                }
            }

            fn stored_intent(
                &self,
                reply: &StoredMessage,
            ) -> (Option<&'static str>, Option<f32>) {
                match self {
                    $(Self::$variant(a) => a.stored_intent(reply),)*
                    Self::Scripted(inner, _) => inner.stored_intent(reply),
                }
            }

            fn stores_greeting(&self) -> bool {
                match self {
                    $(Self::$variant(a) => a.stores_greeting(),)*
                    Self::Scripted(inner, _) => inner.stores_greeting(),
                }
            }

            fn reply_envelope(&self, reply: &StoredMessage) -> Option<ReplyEnvelope> {
                match self {
                    $(Self::$variant(a) => a.reply_envelope(reply),)*
                    Self::Scripted(inner, _) => inner.reply_envelope(reply),
                }
            }

            async fn screen<P: Platform>(
                &self,
                platform: &P,
                input: &TurnInput,
                text: &str,
            ) -> Result<Option<Refusal>, Error> {
                match self {
                    $(Self::$variant(a) => a.screen(platform, input, text).await,)*
                    Self::Scripted(inner, _) => Box::pin(inner.screen(platform, input, text)).await,
                }
            }

            async fn answer<P: Platform>(
                &self,
                platform: &P,
                turn: &mut Turn<'_>,
            ) -> Result<Answer, Error> {
                match self {
                    $(Self::$variant(a) => Box::pin(a.answer(platform, turn)).await,)*
                    Self::Scripted(inner, cache) => match scripted::take(cache, turn).await {
                        Some(script) => scripted::play(platform, turn, script).await,
                        None => Box::pin(inner.answer(platform, turn)).await,
                    },
                }
            }
        }
    };
}

registry! {
    Shop => shop,
    Analyst => analyst,
    Rental => rental,
    Knowledge => knowledge,
    Guarded => guarded,
}
