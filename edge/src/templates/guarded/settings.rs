//! `guarded`'s site settings (`config.guarded`): the domain, the texts a merchant may
//! replace, the models (with the per-request allow-list), the OpenAI-compatible model id,
//! and the web search provider (its key write-only, sealed).

use concierge_core::conversation::Language;
use concierge_core::flows::guarded::GuardedConfig;
use serde::{Deserialize, Serialize};
use worker::Env;

use crate::error::ApiError;
use crate::site::{Site, endpoint, sealed};
use crate::templates::Settings;

/// The settings' key in a site's config and body.
const KEY: &str = "guarded";

/// The search providers a site can choose.
pub(crate) const SEARCH_PROVIDERS: [&str; 4] = ["local", "searxng", "brave", "tavily"];

/// Where a `guarded` site searches the web.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct SearchSettings {
    /// `local` (default: the site's own pages, `PUT /admin/search-pages`), `searxng`,
    /// `brave` or `tavily`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The SearXNG instance (`searxng`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The provider's API key (`brave`, `tavily`), sealed. Never returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_sealed: Option<String>,
    /// How long to wait for results (default 5000 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u32>,
}

/// `config.guarded`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct GuardedSettings {
    /// The domain in Vietnamese, as the guardrail prompt names it (default `NHA KHOA`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_vi: Option<String>,
    /// The domain in English (default `DENTISTRY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_en: Option<String>,
    /// The refusal in Vietnamese (default: the product string with the domain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_vi: Option<String>,
    /// The refusal in English.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_en: Option<String>,
    /// The answer model (default: `llm.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_model: Option<String>,
    /// The guardrail's model (default: `llm.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardrail_model: Option<String>,
    /// Models a request may pick (`ollama_model`, `ollama_guardrail_model`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_models: Vec<String>,
    /// The model id of `/v1/chat/completions` (default `concierge-<site id>`; the demo
    /// uses the seed's `dental-duckduckgo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant_id: Option<String>,
    /// After each summary update, compress old messages once a conversation holds more
    /// than `SUMMARIZE_THRESHOLD` (10) messages (default off, as the seed's chat flow).
    #[serde(default)]
    pub auto_compress: bool,
    /// Compression deletes old messages instead of flagging them (default off: full
    /// history stays for display).
    #[serde(default)]
    pub compression_deletes: bool,
    /// Log prompts and responses (they hold visitor text; default off).
    #[serde(default)]
    pub debug_log: bool,
    /// The guardrail also sees the conversation's summary, so a follow-up ("Còn trẻ em
    /// thì sao?") is judged in context (default off: the seed's guardrail sees only the
    /// current message).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guardrail_with_context: bool,
    /// The web search provider.
    #[serde(default)]
    pub search: SearchSettings,
}

/// `guarded` in a site body: replaces the settings; `search.api_key` is write-only and
/// sealed (left out: the stored key is kept while the provider stays the same; `""`
/// removes it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GuardedPatch {
    domain_vi: Option<String>,
    domain_en: Option<String>,
    refusal_vi: Option<String>,
    refusal_en: Option<String>,
    chat_model: Option<String>,
    guardrail_model: Option<String>,
    #[serde(default)]
    allowed_models: Vec<String>,
    assistant_id: Option<String>,
    #[serde(default)]
    auto_compress: bool,
    #[serde(default)]
    compression_deletes: bool,
    #[serde(default)]
    debug_log: bool,
    #[serde(default)]
    guardrail_with_context: bool,
    search: Option<SearchPatch>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchPatch {
    provider: Option<String>,
    url: Option<String>,
    api_key: Option<String>,
    timeout_ms: Option<u32>,
}

fn text(field: &str, value: &Option<String>, max: usize) -> Result<Option<String>, ApiError> {
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) if v.chars().count() <= max && !v.chars().any(char::is_control) => {
            Ok(Some(v.to_string()))
        }
        Some(_) => Err(ApiError::bad_request(format!(
            "`guarded.{field}` must be at most {max} characters, no control characters."
        ))),
    }
}

fn model_name(field: &str, value: &str) -> Result<String, ApiError> {
    let ok = !value.is_empty() && value.len() <= 128 && value.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(value.to_string())
    } else {
        Err(ApiError::bad_request(format!(
            "`guarded.{field}` must be model names of 1 to 128 visible ASCII characters."
        )))
    }
}

impl GuardedPatch {
    /// Validate (sealing a new search key for `site_id`) into the settings that replace
    /// `old`.
    pub(crate) fn check(
        &self,
        env: &Env,
        site_id: &str,
        old: Option<&GuardedSettings>,
    ) -> Result<GuardedSettings, ApiError> {
        let chat_model = self
            .chat_model
            .as_deref()
            .map(|m| model_name("chat_model", m));
        let guardrail = self.guardrail_model.as_deref();
        let guardrail_model = guardrail.map(|m| model_name("guardrail_model", m));
        if self.allowed_models.len() > 20 {
            return Err(ApiError::bad_request(
                "`guarded.allowed_models`: at most 20 models.",
            ));
        }
        let allowed_models = self
            .allowed_models
            .iter()
            .map(|m| model_name("allowed_models", m))
            .collect::<Result<Vec<_>, _>>()?;
        let assistant_id = match self.assistant_id.as_deref() {
            None => None,
            Some(id) if valid_assistant_id(id) => Some(id.to_string()),
            Some(_) => {
                return Err(ApiError::bad_request(
                    "`guarded.assistant_id` must be 1 to 64 letters, digits, `-`, `_`, `.` or `:`.",
                ));
            }
        };
        let search = match &self.search {
            None => old.map(|o| o.search.clone()).unwrap_or_default(),
            Some(patch) => patch.check(env, site_id, old.map(|o| &o.search))?,
        };
        Ok(GuardedSettings {
            domain_vi: text("domain_vi", &self.domain_vi, 100)?,
            domain_en: text("domain_en", &self.domain_en, 100)?,
            refusal_vi: text("refusal_vi", &self.refusal_vi, 500)?,
            refusal_en: text("refusal_en", &self.refusal_en, 500)?,
            chat_model: chat_model.transpose()?,
            guardrail_model: guardrail_model.transpose()?,
            allowed_models,
            assistant_id,
            auto_compress: self.auto_compress,
            compression_deletes: self.compression_deletes,
            debug_log: self.debug_log,
            guardrail_with_context: self.guardrail_with_context,
            search,
        })
    }
}

fn valid_assistant_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

impl SearchPatch {
    fn check(
        &self,
        env: &Env,
        site_id: &str,
        old: Option<&SearchSettings>,
    ) -> Result<SearchSettings, ApiError> {
        let provider = self.provider.clone().unwrap_or_else(|| "local".into());
        if !SEARCH_PROVIDERS.contains(&provider.as_str()) {
            return Err(ApiError::bad_request(
                "`guarded.search.provider` must be \"local\", \"searxng\", \"brave\" or \"tavily\".",
            ));
        }
        let url = match (&self.url, provider.as_str()) {
            (Some(url), "searxng") => Some(
                endpoint::check(url, endpoint::development(env))
                    .map_err(|why| ApiError::bad_request(format!("`guarded.search.url` {why}.")))?,
            ),
            (None, "searxng") => {
                return Err(ApiError::bad_request(
                    "`guarded.search.url` (the SearXNG instance) is required for \"searxng\".",
                ));
            }
            _ => None,
        };
        if self
            .timeout_ms
            .is_some_and(|ms| !(500..=30_000).contains(&ms))
        {
            return Err(ApiError::bad_request(
                "`guarded.search.timeout_ms` must be 500 to 30000.",
            ));
        }
        let same_provider = old.and_then(|o| o.provider.as_deref()) == Some(provider.as_str());
        let api_key_sealed = match self.api_key.as_deref() {
            None if same_provider => old.and_then(|o| o.api_key_sealed.clone()),
            None | Some("") => None,
            Some(key) if key.len() <= 512 && key.bytes().all(|b| b.is_ascii_graphic()) => {
                Some(sealed::seal(env, site_id, key)?)
            }
            Some(_) => {
                return Err(ApiError::bad_request(
                    "`guarded.search.api_key` must be at most 512 printable ASCII characters.",
                ));
            }
        };
        if matches!(provider.as_str(), "brave" | "tavily") && api_key_sealed.is_none() {
            return Err(ApiError::bad_request(format!(
                "`guarded.search.api_key` is required for \"{provider}\"."
            )));
        }
        Ok(SearchSettings {
            provider: Some(provider),
            url,
            api_key_sealed,
            timeout_ms: self.timeout_ms,
        })
    }
}

impl Settings for GuardedSettings {
    type Patch = GuardedPatch;

    fn apply(
        patch: &GuardedPatch,
        env: &Env,
        site_id: &str,
        old: Option<Self>,
    ) -> Result<Self, ApiError> {
        patch.check(env, site_id, old.as_ref())
    }

    /// The search provider's key never leaves: the view says whether one is set.
    fn redact(settings: Option<&mut Self>) -> Vec<(&'static str, serde_json::Value)> {
        let key = settings.and_then(|s| s.search.api_key_sealed.take());
        vec![("search_api_key_set", key.is_some().into())]
    }
}

/// The site's own `guarded` settings, if it set any.
pub(crate) fn of(site: &Site) -> Option<GuardedSettings> {
    site.config.templates.get(KEY)
}

/// The site's `guarded` settings (defaults when it has none).
pub(crate) fn get(site: &Site) -> GuardedSettings {
    of(site).unwrap_or_default()
}

/// The search provider's key in the clear, if the site has one that opens.
pub(crate) fn search_key(site: &Site, env: &Env) -> Option<String> {
    let sealed_key = of(site)?.search.api_key_sealed?;
    match sealed::open(env, &site.id, &sealed_key) {
        Ok(key) => Some(key),
        Err(err) => {
            let line = serde_json::json!({"level": "error", "msg": "site search key unusable",
                "site": site.id, "reason": err.as_str()});
            worker::console_error!("{line}");
            None
        }
    }
}

/// `guarded`'s template settings for `site`.
pub(crate) fn guarded_config(site: &Site, max_tokens: u32) -> GuardedConfig {
    let settings = get(site);
    let domain_vi = settings.domain_vi.as_deref().unwrap_or("NHA KHOA");
    let domain_en = settings.domain_en.as_deref().unwrap_or("DENTISTRY");
    let mut config = GuardedConfig::with_domain(domain_vi, domain_en);
    if let Some(refusal) = settings.refusal_vi {
        config.texts_mut(Language::Vi).refusal = refusal;
    }
    if let Some(refusal) = settings.refusal_en {
        config.texts_mut(Language::En).refusal = refusal;
    }
    config.chat_model = settings.chat_model;
    config.guardrail_model = settings.guardrail_model;
    config.provider = site
        .config
        .llm
        .provider
        .clone()
        .unwrap_or_else(|| "openai".into());
    config.auto_compress = settings.auto_compress;
    config.compression_deletes = settings.compression_deletes;
    config.debug_log = settings.debug_log;
    config.guardrail_with_context = settings.guardrail_with_context;
    config.turn.max_tokens = Some(max_tokens);
    config
}
