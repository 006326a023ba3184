//! Sites (merchants): their configuration and keys. Their storage (D1 rows, the KV and
//! isolate caches, compare-and-swap writes) is `bindings::d1_sites`.
//!
//! A site row holds SHA-256 digests of its public and secret keys, never the keys. The
//! configuration (persona, LLM settings, allowed origins, starter prompts) is JSON; a site's
//! own LLM key in it is sealed ([`sealed`]).

use concierge_core::template::Template;
use serde::{Deserialize, Serialize};
use worker::Env;

use crate::error::ApiError;

pub(crate) mod endpoint;
pub(crate) mod guarded;
pub(crate) mod scripted;
pub(crate) mod sealed;

pub(crate) use concierge_core::flows::knowledge::KnowledgeSettings;

/// Answers are capped at this many tokens unless the site says otherwise: a chat widget
/// wants short answers, and a runaway model must not stream forever.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 1024;

/// LLM settings of a site; unset fields fall back to the Worker's vars.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct LlmSettings {
    /// `openai` (any OpenAI-compatible API) or `ollama`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Chat model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A site's own upstream key stored in the clear before keys were sealed. Still used
    /// (for the site's own endpoints only) and sealed on the site's next update. Never
    /// returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The site's own upstream key, sealed ([`sealed`]); sent only to the site's own
    /// endpoints. Never returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_sealed: Option<String>,
    /// Embeddings endpoint, when it differs from `base_url` (same protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_base_url: Option<String>,
    /// Embedding model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_model: Option<String>,
    /// Cap on answer length in tokens (default [`DEFAULT_MAX_TOKENS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// How long to wait for the first token before giving up (default: the Worker's
    /// `LLM_FIRST_TOKEN_TIMEOUT_MS`, 20 s); slow self-hosted models may need more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_timeout_ms: Option<u32>,
    /// Embedding dimensions (default 1024, bge-m3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_dimensions: Option<u32>,
}

/// A site's configuration, as merchants set it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct SiteConfig {
    /// Persona text (markdown; its `Greeting:` line is the greeting). Default: the template's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// Default language for greetings: `vi` or `en`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Upstream LLM settings.
    #[serde(default)]
    pub llm: LlmSettings,
    /// Origins (scheme://host[:port]) whose pages may use the public key.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Suggested first questions shown by the widget.
    #[serde(default)]
    pub starter_prompts: Vec<String>,
    /// Title shown in the widget header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The site's public key in the clear (it is in every page that embeds the widget),
    /// for the console's embed snippet; set when the site is created and when its keys
    /// are rotated. Absent for sites created before the console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// The secret the site's user tokens are signed with, sealed ([`sealed`]); set only by
    /// `POST /admin/site/user-token-secret`. Never returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_token_secret_sealed: Option<String>,
    /// The `guarded` template's settings ([`guarded`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarded: Option<guarded::GuardedSettings>,
    /// The `rental` template's settings (its listings schema, role labels, row cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rental: Option<RentalSettings>,
    /// `knowledge`'s settings (agents, workflow, conflict rules, permissions); defaults
    /// are seed 003's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge: Option<KnowledgeSettings>,
    /// `analyst`'s settings (formatter LLM on/off, rows loaded per data set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analyst: Option<AnalystSettings>,
    /// Handoff to a person: off unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<HandoffSettings>,
}

/// Handoff to a person. On, the widget offers "talk to a person", which today sends the
/// visitor's request as a message in the conversation (the merchant sees it in the
/// console's conversations); routing it to a person is the durable-conversations work.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffSettings {
    /// Whether the widget offers "talk to a person".
    pub enabled: bool,
}

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

/// `rental`'s settings in a site's config; unset fields keep the template's defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct RentalSettings {
    /// The logical listings schema (entities, paths, columns); default: rooms, posts,
    /// room-seeking posts (TEMPLATES.md §2.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<concierge_core::flows::rental::schema::RentalSchema>,
    /// Role labels at the start of answers (default on, as the seed says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show_role_label: Option<bool>,
    /// Rows one query may return (default 100, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_cap: Option<u32>,
}

impl RentalSettings {
    /// Checks merchant-supplied settings.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(schema) = &self.schema {
            schema.check()?;
        }
        if self.row_cap.is_some_and(|cap| cap == 0 || cap > 500) {
            return Err("`rental.row_cap` must be 1 to 500.".into());
        }
        Ok(())
    }

    /// The site's listings schema.
    pub(crate) fn schema_of(
        config: &SiteConfig,
    ) -> concierge_core::flows::rental::schema::RentalSchema {
        config
            .rental
            .as_ref()
            .and_then(|r| r.schema.clone())
            .unwrap_or_default()
    }
}

/// A site as loaded for a request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Site {
    pub id: String,
    pub name: String,
    /// The template the site runs.
    pub template: Template,
    pub config: SiteConfig,
    pub public_key_hash: String,
    pub secret_key_hash: String,
    /// Creation time, Unix milliseconds (0 in a copy cached before it was recorded).
    #[serde(default)]
    pub created_at: u64,
}

impl Site {
    /// The site as the admin API shows it: no key digests, no upstream key.
    pub(crate) fn public_view(&self) -> serde_json::Value {
        let mut config = self.config.clone();
        let legacy = config.llm.api_key.take().is_some();
        let has_key = config.llm.api_key_sealed.take().is_some() || legacy;
        let has_token_secret = config.user_token_secret_sealed.take().is_some();
        let search_key = config
            .guarded
            .as_mut()
            .map(|g| g.search.api_key_sealed.take());
        let has_search_key = search_key.flatten().is_some();
        serde_json::json!({
            "id": self.id,
            "name": self.name,
            "template": self.template,
            "config": config,
            "llm_api_key_set": has_key,
            "user_token_secret_set": has_token_secret,
            "search_api_key_set": has_search_key,
        })
    }

    /// The site's own upstream key in the clear, if it has one that opens. A key that does
    /// not open (secret missing or changed) is logged and treated as absent: the site's
    /// calls then go without one, never with the operator's.
    pub(crate) fn llm_key(&self, env: &Env) -> Option<String> {
        let llm = &self.config.llm;
        let key = match &llm.api_key_sealed {
            Some(value) => match sealed::open(env, &self.id, value) {
                Ok(key) => Some(key),
                Err(err) => {
                    let line = serde_json::json!({"level": "error", "msg": "site LLM key unusable",
                        "site": self.id, "reason": err.as_str()});
                    worker::console_error!("{line}");
                    None
                }
            },
            None => llm.api_key.clone(),
        };
        key.filter(|k| !k.is_empty())
    }

    /// The secret the site's user tokens are signed with: `Ok(None)` when the site has
    /// none; an error when it has one that does not open (logged).
    pub(crate) fn user_token_secret(&self, env: &Env) -> Result<Option<String>, ApiError> {
        let Some(value) = &self.config.user_token_secret_sealed else {
            return Ok(None);
        };
        sealed::open_bound(env, &user_token_binding(&self.id), value)
            .map(Some)
            .map_err(|err| {
                let line = serde_json::json!({"level": "error", "msg": "user-token secret unusable",
                    "site": self.id, "reason": err.as_str()});
                worker::console_error!("{line}");
                ApiError::Unavailable
            })
    }

    /// Seal a key stored in the clear before keys were sealed (on the site's next update);
    /// left as it is when sealing is not configured.
    pub(crate) fn seal_legacy_key(&mut self, env: &Env) {
        let llm = &mut self.config.llm;
        let Some(plain) = llm.api_key.take() else {
            return;
        };
        if llm.api_key_sealed.is_some() {
            return;
        }
        match sealed::seal(env, &self.id, &plain) {
            Ok(value) => llm.api_key_sealed = Some(value),
            Err(_) => llm.api_key = Some(plain),
        }
    }
}

/// What a site's sealed user-token secret is bound to (so that it opens only as that
/// site's user-token secret, never as its LLM key or another site's).
pub(crate) fn user_token_binding(site_id: &str) -> String {
    format!("{site_id}#user-token-secret")
}

/// Which of a site's keys a digest is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Public,
    Secret,
}

/// Check and normalise an origin: `scheme://host[:port]`, no path.
pub(crate) fn normalize_origin(origin: &str) -> Option<String> {
    let url = worker::Url::parse(origin).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    let serialized = url.origin().ascii_serialization();
    (serialized != "null").then_some(serialized)
}
