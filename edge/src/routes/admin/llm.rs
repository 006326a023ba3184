//! A site body's `llm`: checked against the operator's endpoints, its key sealed.

use serde::Deserialize;
use worker::Env;

use crate::bindings::workers_ai;
use crate::error::ApiError;
use crate::site::{LlmSettings, endpoint, sealed};

/// `llm` in a site body: replaces the site's LLM settings. `api_key` is write-only and
/// sealed before it is stored; left out, the stored key is kept only while both endpoints
/// stay the same (a key given for one endpoint never follows the site to another); `""`
/// removes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LlmPatch {
    provider: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    api_key: Option<String>,
    embed_base_url: Option<String>,
    embed_model: Option<String>,
    max_tokens: Option<u32>,
    first_token_timeout_ms: Option<u32>,
    embed_dimensions: Option<u32>,
}

/// What a body does to the site's own LLM key.
#[derive(Debug)]
pub(super) enum KeyChange {
    Keep,
    Clear,
    /// The new key, sealed.
    Set(String),
}

/// A checked `llm`: the new settings (without a key) and what happens to the key.
#[derive(Debug)]
pub(super) struct LlmChange {
    pub(super) settings: LlmSettings,
    pub(super) key: KeyChange,
}

impl LlmPatch {
    /// Validate, and seal a new key for site `site_id` (refused when sealing is not
    /// configured: a key is never stored in the clear).
    pub(super) fn check(&self, env: &Env, site_id: &str) -> Result<LlmChange, ApiError> {
        if let Some(provider) = &self.provider
            && !matches!(
                provider.as_str(),
                "openai" | "ollama" | workers_ai::PROVIDER
            )
        {
            return Err(ApiError::bad_request(
                "`llm.provider` must be \"openai\", \"ollama\" or \"workers-ai\".",
            ));
        }
        if self.provider.as_deref() == Some(workers_ai::PROVIDER) {
            // The `AI` binding has no URL and no key; its models are named `@cf/…`.
            for (field, set) in [
                ("base_url", self.base_url.is_some()),
                ("embed_base_url", self.embed_base_url.is_some()),
                (
                    "api_key",
                    self.api_key.as_deref().is_some_and(|k| !k.is_empty()),
                ),
            ] {
                if set {
                    return Err(ApiError::bad_request(format!(
                        "`llm.{field}` is not used with \"workers-ai\" (the Worker's AI binding)."
                    )));
                }
            }
            for (field, name) in [("model", &self.model), ("embed_model", &self.embed_model)] {
                if name
                    .as_deref()
                    .is_some_and(|n| !workers_ai::is_model_name(n))
                {
                    return Err(ApiError::bad_request(format!(
                        "`llm.{field}` must be a Workers AI model name (\"@cf/…\") with \"workers-ai\"."
                    )));
                }
            }
        }
        let development = endpoint::development(env);
        let checked = |field: &str, url: &Option<String>| {
            url.as_deref()
                .map(|url| {
                    endpoint::check(url, development)
                        .map_err(|why| ApiError::bad_request(format!("`llm.{field}` {why}.")))
                })
                .transpose()
        };
        let base_url = checked("base_url", &self.base_url)?;
        let embed_base_url = checked("embed_base_url", &self.embed_base_url)?;
        if self
            .first_token_timeout_ms
            .is_some_and(|ms| !(1_000..=120_000).contains(&ms))
        {
            return Err(ApiError::bad_request(
                "`llm.first_token_timeout_ms` must be 1000 to 120000.",
            ));
        }
        // Vectorize holds vectors of 1 to 1536 dimensions (bindings/vectors.rs).
        let most = crate::bindings::vectors::MAX_DIMENSIONS as u32;
        if self
            .embed_dimensions
            .is_some_and(|d| !(1..=most).contains(&d))
        {
            return Err(ApiError::bad_request(format!(
                "`llm.embed_dimensions` must be 1 to {most} (Vectorize's most)."
            )));
        }
        if self.max_tokens.is_some_and(|n| !(16..=32_768).contains(&n)) {
            return Err(ApiError::bad_request(
                "`llm.max_tokens` must be 16 to 32768.",
            ));
        }
        let key = match self.api_key.as_deref() {
            None => KeyChange::Keep,
            Some("") => KeyChange::Clear,
            Some(key) => {
                if key.len() > 1024 || !key.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err(ApiError::bad_request(
                        "`llm.api_key` must be at most 1024 printable ASCII characters, no spaces.",
                    ));
                }
                if base_url.is_none() && embed_base_url.is_none() {
                    return Err(ApiError::bad_request(
                        "`llm.api_key` is sent only to the site's own endpoint: set `llm.base_url` \
                         or `llm.embed_base_url` with it (the service's endpoint uses the service's key).",
                    ));
                }
                KeyChange::Set(sealed::seal(env, site_id, key)?)
            }
        };
        Ok(LlmChange {
            settings: LlmSettings {
                provider: self.provider.clone(),
                base_url,
                model: self.model.clone(),
                api_key: None,
                api_key_sealed: None,
                embed_base_url,
                embed_model: self.embed_model.clone(),
                max_tokens: self.max_tokens,
                first_token_timeout_ms: self.first_token_timeout_ms,
                embed_dimensions: self.embed_dimensions,
            },
            key,
        })
    }
}
