//! The registry's machinery: [`registry!`] expands the list of templates (one line each,
//! in `templates/mod.rs`) into the assistant a site runs ([`SiteAssistant`]), the
//! templates' settings in a site's config and body ([`Settings`]), their route tables and
//! the dispatch of every per-template hook ([`TemplateHooks`]); nothing here names a
//! template.
//!
//! The engine runs any [`concierge_core::engine::Assistant`]; [`SiteAssistant`] is the
//! Worker's set of built templates, each with the site's settings and its own dependencies
//! (built for the site's template only), so a route or the turn queue dispatches on the
//! site's template once, here. A template that is not built yet is refused
//! ([`ApiError::TemplateUnavailable`]), never answered by another.

use worker::Env;

use crate::bindings::kv_cache::WorkerKvCache;
use crate::bindings::services::{Services, SiteAssistants};
use crate::error::ApiError;
use crate::site::{Site, scripted};

use super::SiteAssistant;

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

/// What a template's edge code may add to the Worker's shared paths, each with a default
/// (nothing); implemented by each template's `assistant::Assistant`.
pub(crate) trait TemplateHooks {
    /// The Cron Trigger's work for this template: a log line's fields when it did some.
    async fn scheduled(_env: &Env) -> Option<serde_json::Value> {
        None
    }

    /// The id `/v1/…` names `site`'s assistant by, when the template sets its own.
    fn openai_model_id(_site: &Site) -> Option<String> {
        None
    }

    /// Whether `/v1/chat/completions` always runs in a named stored conversation (a body
    /// without `chat_id` takes `X-Chat-Id` or opens a new one; an unknown id opens a new
    /// one under a minted id) instead of the API's default (stateless without a
    /// `chat_id`, 404 for an unknown one).
    const OPENAI_NAMED_CHATS: bool = false;

    /// Per-request settings a `/v1/chat/completions` body (`raw`) may carry.
    fn openai_request(&mut self, _site: &Site, _raw: &serde_json::Value) -> Result<(), ApiError> {
        Ok(())
    }
}

/// A template's own settings in a site's config (`templates/<t>/settings.rs`), under the
/// template's name, and how a site body (`POST /admin/sites`, `PATCH /admin/site`) sets
/// them.
pub(crate) trait Settings: serde::Serialize + serde::de::DeserializeOwned {
    /// What a site body takes under the template's name.
    type Patch: serde::de::DeserializeOwned;

    /// Check `patch` and make the settings that replace `old` (site `site_id`'s).
    fn apply(
        patch: &Self::Patch,
        env: &Env,
        site_id: &str,
        old: Option<Self>,
    ) -> Result<Self, ApiError>;

    /// Remove write-only secrets from the admin API's view of the settings; the view's
    /// flags about them (present whether or not the site has settings).
    fn redact(_settings: Option<&mut Self>) -> Vec<(&'static str, serde_json::Value)> {
        Vec::new()
    }
}

/// The id `/v1/…` names `site`'s assistant by: its template's, else
/// [`concierge_core::openai_api::assistant_id`].
pub(crate) fn openai_model_id(site: &Site) -> String {
    super::openai_model_id_of(site)
        .unwrap_or_else(|| concierge_core::openai_api::assistant_id(&site.id))
}

/// The registry's enum and its dispatch, from one list of `Variant => module` lines.
macro_rules! registry {
    ($($variant:ident => $module:ident $({ $settings:ty })?),* $(,)?) => {
        use concierge_core::conversation::{Language, StoredMessage};
        use concierge_core::engine::{Answer, Assistant, Platform, Refusal, Turn, TurnConfig};
        use concierge_core::error::Error;
        use concierge_core::template::Template;
        use concierge_core::turn::{ReplyEnvelope, TurnInput};
        use worker::Env;

        use $crate::bindings::kv_cache::WorkerKvCache;
        use $crate::error::ApiError;
        use $crate::site::{Site, scripted};

        /// The assistant a site runs.
        #[derive(Debug)]
        pub(crate) enum SiteAssistant {
            $(
                #[doc = concat!("`", stringify!($module), "`.")]
                $variant(Box<$module::assistant::Assistant>),
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
                        $module::assistant::build(env, site)?,
                    ))),)*
                }
            }
        }

        impl SiteAssistant {
            /// Whether the site's template runs every `/v1/chat/completions` in a named
            /// conversation ([`TemplateHooks::OPENAI_NAMED_CHATS`]).
            pub(crate) fn openai_named_chats(template: Template) -> bool {
                match template {
                    $(Template::$variant => {
                        <$module::assistant::Assistant as TemplateHooks>::OPENAI_NAMED_CHATS
                    })*
                }
            }

            /// [`TemplateHooks::openai_request`] of the site's template.
            pub(crate) fn openai_request(
                &mut self,
                site: &Site,
                raw: &serde_json::Value,
            ) -> Result<(), ApiError> {
                match self {
                    $(Self::$variant(a) => a.openai_request(site, raw),)*
                    Self::Scripted(inner, _) => inner.openai_request(site, raw),
                }
            }
        }

        /// [`TemplateHooks::openai_model_id`] of `site`'s template.
        fn openai_model_id_of(site: &Site) -> Option<String> {
            match site.template {
                $(Template::$variant => {
                    <$module::assistant::Assistant as TemplateHooks>::openai_model_id(site)
                })*
            }
        }

        /// The templates' keys in a site's config and body (the templates with settings).
        pub(crate) const SETTINGS_KEYS: &[&str] = &[$($({
            let _: core::marker::PhantomData<$settings>;
            stringify!($module)
        },)?)*];

        /// A site body's template settings, each as its template's [`Settings::Patch`].
        #[derive(Debug, Default)]
        #[allow(clippy::option_option)] // set to `null` (no change) is still set (once)
        pub(crate) struct SettingsPatch {
            $($(
                $module: Option<Option<<$settings as Settings>::Patch>>,
            )?)*
        }

        impl SettingsPatch {
            /// Read body field `key`'s value from `map` when `key` is a template's (`true`),
            /// as a derived `Deserialize` would (a second `key` is refused).
            pub(crate) fn read<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                $($(
                    if key == stringify!($module) {
                        let _: core::marker::PhantomData<$settings>;
                        if self.$module.is_some() {
                            return Err(<A::Error as serde::de::Error>::duplicate_field(
                                stringify!($module),
                            ));
                        }
                        self.$module = Some(map.next_value()?);
                        return Ok(true);
                    }
                )?)*
                Ok(false)
            }

            /// Check each template's settings in the body and set them on `site` (whose
            /// config then keeps no key that is no template's, as when it was typed).
            pub(crate) fn apply(&self, env: &Env, site: &mut Site) -> Result<(), ApiError> {
                site.config.templates.retain(SETTINGS_KEYS);
                $($(
                    if let Some(Some(patch)) = &self.$module {
                        let key = stringify!($module);
                        let old = site.config.templates.get::<$settings>(key);
                        let new = <$settings as Settings>::apply(patch, env, &site.id, old)?;
                        site.config.templates.set(key, Some(&new));
                    }
                )?)*
                Ok(())
            }
        }

        /// The templates' settings as the admin API shows them (others' keys left out,
        /// write-only secrets removed); the view's flags about those secrets.
        pub(crate) fn public_settings(
            settings: &mut $crate::site::TemplateSettings,
        ) -> Vec<(&'static str, serde_json::Value)> {
            settings.retain(SETTINGS_KEYS);
            let mut flags = Vec::new();
            $($(
                let key = stringify!($module);
                let mut own = settings.get::<$settings>(key);
                flags.extend(<$settings as Settings>::redact(own.as_mut()));
                settings.set(key, own.as_ref());
            )?)*
            flags
        }

        /// A route of a template's own table (`<t>/routes.rs`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Route {
            $(
                #[doc = concat!("`", stringify!($module), "`'s.")]
                $variant($module::routes::Route),
            )*
        }

        impl Route {
            /// Match a method and a path's segments against each template's table, in
            /// the registry's order.
            pub(crate) fn of(
                method: &worker::Method,
                segments: &[&str],
            ) -> $crate::http::table::Match<Self> {
                use $crate::http::table::Match;
                $(
                    match $module::routes::Route::of(method, segments) {
                        Match::None => {}
                        found => return found.map(Self::$variant),
                    }
                )*
                Match::None
            }

            /// A stable name for logs.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$variant(route) => route.name(),)*
                }
            }

            /// Run the route's handler.
            pub(crate) async fn handle(
                self,
                req: worker::Request,
                rc: &$crate::http::table::RequestContext<'_>,
            ) -> Result<worker::Response, ApiError> {
                match self {
                    $(Self::$variant(route) => route.handle(req, rc).await,)*
                }
            }
        }

        /// The Cron Trigger's work: each template's [`TemplateHooks::scheduled`], logged.
        pub(crate) async fn scheduled(env: &Env) {
            $(
                if let Some(line) =
                    <$module::assistant::Assistant as TemplateHooks>::scheduled(env).await
                {
                    worker::console_log!("{line}");
                }
            )*
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
