//! The core's chat model and embedder over `fetch`: an OpenAI-compatible endpoint (OpenAI,
//! Groq, vLLM, llama.cpp, …) or Ollama's native API; or over the `AI` binding, Workers AI
//! ([`super::workers_ai`]), read by the same stream loop.
//!
//! The chat stream is decoded with the core's push decoders as bytes arrive. Before the
//! first token there is a deadline ([`Upstream::first_token_timeout`]) and one retry; after
//! it, a stall longer than [`Upstream::idle_timeout`] or a broken stream is an error — the
//! engine then ends the turn with one `failed` event.
//!
//! [`stream`] holds the chat stream (attempts, retry, request bodies), [`embed`] the
//! embedder; this file resolves a site's upstream and builds its requests.

use std::time::Duration;

use concierge_core::error::{ChatModelError, ChatModelErrorKind};
use futures_util::future::{Either, select};
use futures_util::pin_mut;
use worker::{Delay, Env, Fetch, Headers, Method, Request, RequestInit, RequestRedirect};

use super::workers_ai::{self, WorkersAi};

use crate::site::{Site, endpoint};

/// Which wire protocol the upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    OpenAi,
    Ollama,
    /// The `AI` binding: no URL, no key.
    WorkersAi,
}

/// A configured upstream: per-site settings over the Worker's defaults.
///
/// Keys follow endpoints: the operator's `LLM_API_KEY` goes only to the operator's
/// endpoints (`LLM_BASE_URL`, `EMBED_BASE_URL`), a site's own key only to the site's own
/// (`llm.base_url`, `llm.embed_base_url`); a site endpoint without a site key is called
/// without `Authorization`.
#[derive(Debug, Clone)]
pub(crate) struct Upstream {
    pub provider: Provider,
    /// Without a trailing slash. OpenAI-style URLs include `/v1`.
    pub base_url: String,
    pub model: String,
    /// The key for `base_url`.
    pub api_key: Option<String>,
    /// Without a trailing slash; defaults to `base_url`.
    pub embed_base_url: String,
    /// The key for `embed_base_url`.
    pub embed_api_key: Option<String>,
    pub embed_model: String,
    pub embed_dimensions: Option<u32>,
    pub first_token_timeout: Duration,
    pub idle_timeout: Duration,
    /// The `AI` binding (for [`Provider::WorkersAi`]), when the Worker has one.
    pub ai: Option<WorkersAi>,
}

impl Upstream {
    /// The site's settings first, then the `LLM_*` vars and the `LLM_API_KEY` secret.
    pub(crate) fn resolve(site: &Site, env: &Env) -> Self {
        let settings = &site.config.llm;
        let var = |name: &str| {
            env.var(name)
                .map(|v| v.to_string())
                .ok()
                .filter(|v| !v.is_empty())
        };
        let operator_provider = var("LLM_PROVIDER");
        let provider = match settings.provider.clone() {
            Some(provider) => Some(provider),
            // A site's own endpoint speaks HTTP, whatever the operator's default.
            None if settings.base_url.is_some()
                && operator_provider.as_deref() == Some(workers_ai::PROVIDER) =>
            {
                None
            }
            None => operator_provider,
        };
        let provider = match provider.as_deref() {
            Some("ollama") => Provider::Ollama,
            Some(workers_ai::PROVIDER) => Provider::WorkersAi,
            _ => Provider::OpenAi,
        };
        // The site's own endpoints, checked again at use: a value stored before the rule
        // (or in breach of it) is not called.
        let development = endpoint::development(env);
        let own = |url: &Option<String>| {
            let url = url.as_deref()?;
            Some(endpoint::check(url, development).unwrap_or_else(|why| {
                let line = serde_json::json!({"level": "warn", "msg": "site LLM endpoint refused",
                    "site": site.id, "reason": why});
                worker::console_warn!("{line}");
                String::new()
            }))
        };
        let own_chat = own(&settings.base_url);
        let own_embed = own(&settings.embed_base_url).or_else(|| own_chat.clone());
        let site_key = if own_chat.is_some() || own_embed.is_some() {
            site.llm_key(env)
        } else {
            None
        };
        let operator_key = || {
            env.secret("LLM_API_KEY")
                .ok()
                .map(|s| s.to_string())
                .filter(|k| !k.is_empty())
        };
        let operator_url = var("LLM_BASE_URL").unwrap_or_default();
        let (base_url, api_key) = match own_chat {
            Some(url) => (url, site_key.clone()),
            None => (operator_url.clone(), operator_key()),
        };
        let (embed_base_url, embed_api_key) = match own_embed {
            Some(url) => (url, site_key),
            None => (
                var("EMBED_BASE_URL").unwrap_or(operator_url),
                operator_key(),
            ),
        };
        let millis =
            |name: &str, default: u64| var(name).and_then(|v| v.parse().ok()).unwrap_or(default);
        let mut model = settings
            .model
            .clone()
            .or_else(|| var("LLM_MODEL"))
            .unwrap_or_else(|| "default".into());
        let mut embed_model = settings
            .embed_model
            .clone()
            .or_else(|| var("EMBED_MODEL"))
            .unwrap_or_else(|| "bge-m3".into());
        let mut embed_dimensions = settings.embed_dimensions;
        let ai = if provider == Provider::WorkersAi {
            // The operator's defaults name the HTTP endpoint's models unless they name
            // Workers AI models (`@cf/…`).
            if !workers_ai::is_model_name(&model) {
                model = workers_ai::DEFAULT_CHAT_MODEL.into();
            }
            if !workers_ai::is_model_name(&embed_model) {
                embed_model = workers_ai::DEFAULT_EMBED_MODEL.into();
            }
            if embed_dimensions.is_none() && embed_model == workers_ai::DEFAULT_EMBED_MODEL {
                embed_dimensions = u32::try_from(workers_ai::BGE_M3_DIMENSIONS).ok();
            }
            WorkersAi::from_env(env)
        } else {
            None
        };
        Self {
            provider,
            embed_base_url: embed_base_url.trim_end_matches('/').to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            model,
            api_key,
            embed_api_key,
            embed_model,
            embed_dimensions,
            first_token_timeout: Duration::from_millis(
                settings
                    .first_token_timeout_ms
                    .map(u64::from)
                    .unwrap_or_else(|| millis("LLM_FIRST_TOKEN_TIMEOUT_MS", 20_000)),
            ),
            idle_timeout: Duration::from_millis(millis("LLM_IDLE_TIMEOUT_MS", 30_000)),
            ai,
        }
    }

    fn url(&self, path_openai: &str, path_ollama: &str) -> String {
        Self::join(&self.base_url, self.provider, path_openai, path_ollama)
    }

    fn embed_url(&self, path_openai: &str, path_ollama: &str) -> String {
        Self::join(
            &self.embed_base_url,
            self.provider,
            path_openai,
            path_ollama,
        )
    }

    fn join(base: &str, provider: Provider, path_openai: &str, path_ollama: &str) -> String {
        match provider {
            Provider::OpenAi | Provider::WorkersAi => format!("{base}{path_openai}"),
            Provider::Ollama => format!("{base}{path_ollama}"),
        }
    }

    /// A POST to `url` with `key` (the key of that endpoint) as bearer token. Redirects are
    /// not followed (a 3xx is the endpoint's answer, an error): `url` passed the outbound
    /// rule, a `Location` it names has not, and the key must go nowhere else.
    fn post(url: &str, key: Option<&str>, body: String, accept: &str) -> worker::Result<Fetch> {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        headers.set("accept", accept)?;
        if let Some(key) = key {
            headers.set("authorization", &format!("Bearer {key}"))?;
        }
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body.into()))
            .with_redirect(RequestRedirect::Manual);
        Ok(Fetch::Request(Request::new_with_init(url, &init)?))
    }
}

fn unreachable(detail: impl Into<String>) -> ChatModelError {
    ChatModelError::new(ChatModelErrorKind::Unreachable, detail)
}

/// Wait for `future` at most `limit`; `None` on timeout.
pub(crate) async fn within<F: std::future::Future>(
    limit: Duration,
    future: F,
) -> Option<F::Output> {
    let delay = Delay::from(limit);
    pin_mut!(future);
    match select(future, delay).await {
        Either::Left((output, _)) => Some(output),
        Either::Right(_) => None,
    }
}

mod embed;
mod gather;
mod stream;
