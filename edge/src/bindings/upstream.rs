//! The core's chat model and embedder over `fetch`: an OpenAI-compatible endpoint (OpenAI,
//! Groq, vLLM, llama.cpp, …) or Ollama's native API; or over the `AI` binding, Workers AI
//! ([`super::workers_ai`]), read by the same stream loop.
//!
//! The chat stream is decoded with the core's push decoders as bytes arrive. Before the
//! first token there is a deadline ([`Upstream::first_token_timeout`]) and one retry; after
//! it, a stall longer than [`Upstream::idle_timeout`] or a broken stream is an error — the
//! engine then ends the turn with one `failed` event.

use std::time::Duration;

use concierge_core::boundary::{
    ChatModel, ChatRequest, ChatSink, Constraint, Embedder, ModelCall, tool_call_schema,
};
use concierge_core::chat::ChatEvent;
use concierge_core::error::{ChatModelError, ChatModelErrorKind, ServiceError, ServiceErrorKind};
use concierge_core::stream::ChatStreamDecoder;
use concierge_core::stream::{ollama, openai};
use futures_util::future::{Either, select};
use futures_util::pin_mut;
use worker::web_sys::ReadableStream;
use worker::{
    AbortController, Delay, Env, Fetch, Headers, Method, Request, RequestInit, ResponseBody,
};

use super::js_stream::ChunkReader;
use super::workers_ai::{self, WorkersAi, WorkersAiStreamDecoder};

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

    /// A POST to `url` with `key` (the key of that endpoint) as bearer token.
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
            .with_body(Some(body.into()));
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

/// An upstream request's abort controller that aborts when dropped (after a complete
/// response, a no-op).
struct AbortOnDrop(Option<AbortController>);

impl AbortOnDrop {
    fn signal(&self) -> worker::AbortSignal {
        self.0
            .as_ref()
            .map(AbortController::signal)
            .unwrap_or_else(worker::AbortSignal::abort)
    }

    fn abort(mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

/// The outcome of one attempt: whether any event reached the sink.
struct AttemptError {
    error: ChatModelError,
    delivered: bool,
}

impl Upstream {
    /// One request on `model` with the provider's request body `body`.
    async fn attempt(
        &self,
        model: &str,
        body: &str,
        sink: &mut dyn ChatSink,
    ) -> Result<(), AttemptError> {
        let fail = |error, delivered| AttemptError { error, delivered };
        // Aborted however the attempt ends: one dropped unfinished (its turn ended early)
        // does not leave the upstream generating for nobody.
        let mut controller = AbortOnDrop(Some(AbortController::default()));
        let started = worker::Date::now().as_millis();
        let (body, mut decoder): (ReadableStream, Box<dyn ChatStreamDecoder>) = match self.provider
        {
            Provider::WorkersAi => match self.open_workers_ai(model, body, sink).await {
                Ok(Some(stream)) => (stream, Box::new(WorkersAiStreamDecoder::new())),
                // Answered whole, and its events delivered.
                Ok(None) => return Ok(()),
                Err(error) => return Err(fail(error, false)),
            },
            Provider::OpenAi | Provider::Ollama => {
                let body = self
                    .open_http(body, &mut controller, sink)
                    .await
                    .map_err(|e| fail(e, false))?;
                let decoder: Box<dyn ChatStreamDecoder> = match self.provider {
                    Provider::Ollama => Box::new(ollama::OllamaStreamDecoder::new()),
                    _ => Box::new(openai::OpenAiStreamDecoder::new()),
                };
                (body, decoder)
            }
        };
        let mut reader = ChunkReader::new(&body);
        let mut delivered = false;
        let mut finished = false;
        // One timer, re-armed only when it fires early (not one per chunk): before the first
        // event the first-token deadline applies, then the idle limit after the last event.
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let mut deadline = started.saturating_add(millis(self.first_token_timeout));
        let now = worker::Date::now().as_millis();
        let mut timer = Box::pin(Delay::from(Duration::from_millis(
            deadline.saturating_sub(now).max(1),
        )));
        loop {
            let read = reader.next();
            pin_mut!(read);
            let next = match select(read, timer.as_mut()).await {
                Either::Left((item, _)) => Some(item),
                Either::Right(((), _)) => {
                    let now = worker::Date::now().as_millis();
                    if now < deadline {
                        timer = Box::pin(Delay::from(Duration::from_millis(deadline - now)));
                        continue;
                    }
                    None
                }
            };
            let bytes = match next {
                None => {
                    controller.abort();
                    let what = if delivered {
                        "upstream stalled mid-stream"
                    } else {
                        "timed out waiting for the first token"
                    };
                    return Err(fail(unreachable(what), delivered));
                }
                Some(None) => {
                    decoder.finish();
                    None
                }
                Some(Some(Err(err))) => return Err(fail(unreachable(err), delivered)),
                Some(Some(Ok(bytes))) => Some(bytes),
            };
            if let Some(bytes) = &bytes {
                decoder.feed(bytes);
            }
            while let Some(event) = decoder.next_event() {
                match event {
                    Ok(ChatEvent::Error(error)) => {
                        let detail = format!("upstream error: {}", error.message);
                        sink.event(ChatEvent::Error(error));
                        return Err(fail(
                            ChatModelError::new(ChatModelErrorKind::Upstream, detail),
                            true,
                        ));
                    }
                    Ok(event) => {
                        finished |= matches!(event, ChatEvent::Finish { .. });
                        delivered = true;
                        sink.event(event);
                        deadline = worker::Date::now()
                            .as_millis()
                            .saturating_add(millis(self.idle_timeout));
                    }
                    Err(err) => {
                        controller.abort();
                        return Err(fail(
                            ChatModelError::new(ChatModelErrorKind::Decode, format!("{err}")),
                            delivered,
                        ));
                    }
                }
            }
            if bytes.is_none() {
                return if finished {
                    Ok(())
                } else {
                    Err(fail(
                        unreachable("upstream closed the stream before finishing"),
                        delivered,
                    ))
                };
            }
        }
    }
}

impl Upstream {
    /// POST `body` to the chat endpoint: the response's body stream once it answers 2xx.
    async fn open_http(
        &self,
        body: &str,
        controller: &mut AbortOnDrop,
        sink: &mut dyn ChatSink,
    ) -> Result<ReadableStream, ChatModelError> {
        let (url, accept) = match self.provider {
            Provider::Ollama => (self.url("", "/api/chat"), "application/x-ndjson"),
            _ => (self.url("/chat/completions", ""), "text/event-stream"),
        };
        let fetch = Self::post(&url, self.api_key.as_deref(), body.to_string(), accept)
            .map_err(|e| unreachable(e.to_string()))?;
        let signal = controller.signal();
        let response = match within(self.first_token_timeout, fetch.send_with_signal(&signal)).await
        {
            Some(Ok(response)) => response,
            Some(Err(err)) => return Err(unreachable(err.to_string())),
            None => {
                if let Some(c) = controller.0.take() {
                    c.abort();
                }
                return Err(unreachable("timed out waiting for the upstream to answer"));
            }
        };
        let status = response.status_code();
        if !(200..300).contains(&status) {
            return Err(ChatModelError::new(
                ChatModelErrorKind::Status(status),
                format!("upstream answered {status}"),
            ));
        }
        // The model has the request: work kept out of its way may go.
        sink.answering();
        let ResponseBody::Stream(body) = response.body() else {
            return Err(unreachable("the upstream answered without a body"));
        };
        Ok(body.clone())
    }

    /// `env.AI.run(model, inputs)`: its stream, or `None` once a whole reply (tools,
    /// structured output) was delivered to `sink`.
    async fn open_workers_ai(
        &self,
        model: &str,
        inputs: &str,
        sink: &mut dyn ChatSink,
    ) -> Result<Option<ReadableStream>, ChatModelError> {
        let Some(ai) = &self.ai else {
            return Err(unreachable(
                "the Worker has no AI binding (wrangler.toml [ai] binding = \"AI\")",
            ));
        };
        let resolved = match within(self.first_token_timeout, ai.run(model, inputs)).await {
            Some(Ok(resolved)) => resolved,
            Some(Err(message)) => return Err(workers_ai::call_error(&message)),
            None => return Err(unreachable("timed out waiting for Workers AI to answer")),
        };
        sink.answering();
        if let Some(stream) = workers_ai::as_stream(&resolved) {
            return Ok(Some(stream));
        }
        let events = workers_ai::to_json(&resolved)
            .and_then(workers_ai::reply_events)
            .map_err(|e| ChatModelError::new(ChatModelErrorKind::Decode, e))?;
        for event in events {
            sink.event(event);
        }
        Ok(None)
    }
}

impl ChatModel for Upstream {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let (model, request, constraint) = (
            call.model.unwrap_or(&self.model),
            call.request,
            &call.constraint,
        );
        match self.stream_on(model, request, constraint, sink).await {
            // A provider without structured output or `tool_choice` refuses the request:
            // ask plainly (the caller checks the reply either way).
            Err(error)
                if *constraint != Constraint::default()
                    && matches!(error.kind, ChatModelErrorKind::Status(400 | 422)) =>
            {
                let plain = Constraint::default();
                self.stream_on(model, request, &plain, sink).await
            }
            other => other,
        }
    }
}

impl Upstream {
    /// The provider's request body for `request` on `model` under `constraint`
    /// (structured output for labels; OpenAI's `tool_choice` for a required call — Ollama
    /// has no such field).
    fn chat_body(&self, model: &str, request: &ChatRequest, constraint: &Constraint<'_>) -> String {
        match self.provider {
            Provider::OpenAi => {
                let mut builder =
                    openai::ChatRequestBuilder::new(model, &request.messages).stream(true);
                let as_json = constraint.tool_as_json && !request.tools.is_empty();
                if !request.tools.is_empty() && !as_json {
                    builder = builder.tools(&request.tools);
                }
                if let Some(t) = request.temperature {
                    builder = builder.temperature(t);
                }
                if let Some(n) = request.max_tokens {
                    builder = builder.max_tokens(n);
                }
                if !constraint.one_of.is_empty() {
                    builder = builder.one_of(constraint.one_of);
                }
                if as_json {
                    builder = builder.json_schema("tool_call", tool_call_schema(&request.tools));
                } else if constraint.call_tool && !request.tools.is_empty() {
                    builder = builder.tool_choice(openai::ToolChoice::Required);
                }
                builder.build().to_json()
            }
            Provider::WorkersAi => workers_ai::chat_inputs(request, constraint).to_string(),
            Provider::Ollama => {
                let mut builder =
                    ollama::OllamaChatRequest::new(model, &request.messages).stream(true);
                let as_json = constraint.tool_as_json && !request.tools.is_empty();
                if !request.tools.is_empty() && !as_json {
                    builder = builder.tools(&request.tools);
                }
                if let Some(t) = request.temperature {
                    builder = builder.temperature(t);
                }
                if let Some(n) = request.max_tokens {
                    builder = builder.max_tokens(n);
                }
                if !constraint.one_of.is_empty() {
                    builder = builder.one_of(constraint.one_of);
                }
                if as_json {
                    builder = builder.json_schema(tool_call_schema(&request.tools));
                }
                builder.to_json()
            }
        }
    }

    /// [`ChatModel::stream`] on the provider's model `model` (`constraint`: see
    /// [`ModelCall::constraint`]).
    async fn stream_on(
        &self,
        model: &str,
        request: &ChatRequest,
        constraint: &Constraint<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        if self.base_url.is_empty() && self.provider != Provider::WorkersAi {
            return Err(unreachable(
                "no LLM endpoint is configured (LLM_BASE_URL or the site's llm.base_url)",
            ));
        }
        let body = self.chat_body(model, request, constraint);
        match self.attempt(model, &body, sink).await {
            Ok(()) => Ok(()),
            // One retry, only when nothing reached the visitor and the failure may be transient.
            Err(first) if !first.delivered && retryable(&first.error) => {
                let line = serde_json::json!({
                    "level": "warn",
                    "msg": "upstream attempt failed; retrying once",
                    "detail": first.error.to_string(),
                });
                worker::console_warn!("{line}");
                self.attempt(model, &body, sink)
                    .await
                    .map_err(|second| second.error)
            }
            Err(other) => Err(other.error),
        }
    }
}

fn retryable(error: &ChatModelError) -> bool {
    match error.kind {
        ChatModelErrorKind::Unreachable => true,
        ChatModelErrorKind::Status(status) => status == 429 || status >= 500,
        _ => false,
    }
}

impl Embedder for Upstream {
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ServiceError> {
        let unavailable = |detail: String| ServiceError::new(ServiceErrorKind::Unavailable, detail);
        if self.provider == Provider::WorkersAi {
            return self.embed_workers_ai(texts).await;
        }
        if self.embed_base_url.is_empty() {
            return Err(unavailable("no embedding endpoint is configured".into()));
        }
        // (Workers AI was answered above.)
        let (url, body) = match self.provider {
            Provider::OpenAi | Provider::WorkersAi => {
                let mut request =
                    openai::EmbeddingsRequest::new(&self.embed_model, texts.iter().copied());
                if let Some(d) = self.embed_dimensions {
                    request = request.dimensions(d);
                }
                (self.embed_url("/embeddings", ""), request.to_json())
            }
            Provider::Ollama => {
                let mut request =
                    ollama::EmbedRequest::new(&self.embed_model, texts.iter().copied());
                if let Some(d) = self.embed_dimensions {
                    request = request.dimensions(d);
                }
                (self.embed_url("", "/api/embed"), request.to_json())
            }
        };
        let controller = AbortController::default();
        let fetch = Self::post(
            &url,
            self.embed_api_key.as_deref(),
            body,
            "application/json",
        )
        .map_err(|e| unavailable(e.to_string()))?;
        let signal = controller.signal();
        let mut response = match within(self.idle_timeout, fetch.send_with_signal(&signal)).await {
            Some(result) => result.map_err(|e| unavailable(e.to_string()))?,
            None => {
                controller.abort();
                return Err(unavailable("embedding request timed out".into()));
            }
        };
        let status = response.status_code();
        if !(200..300).contains(&status) {
            return Err(unavailable(format!("embedding upstream answered {status}")));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        let vectors = match self.provider {
            Provider::OpenAi | Provider::WorkersAi => {
                openai::EmbeddingsResponse::from_json(&bytes).map(|r| r.into_vectors())
            }
            Provider::Ollama => ollama::EmbedResponse::from_json(&bytes).map(|r| r.embeddings),
        }
        .map_err(|e| {
            ServiceError::new(ServiceErrorKind::Other, format!("embedding response: {e}"))
        })?;
        if vectors.len() != texts.len() {
            return Err(ServiceError::new(
                ServiceErrorKind::Other,
                "embedding count mismatch",
            ));
        }
        Ok(vectors)
    }
}

impl Upstream {
    /// Embeddings through the `AI` binding: `{text}` in, `{shape, data}` out, checked
    /// (count, size, numbers) before anything is stored.
    async fn embed_workers_ai(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ServiceError> {
        let unavailable = |detail: String| ServiceError::new(ServiceErrorKind::Unavailable, detail);
        let Some(ai) = &self.ai else {
            return Err(unavailable(
                "the Worker has no AI binding (wrangler.toml [ai] binding = \"AI\")".into(),
            ));
        };
        let dimensions = self.embed_dimensions.and_then(|d| usize::try_from(d).ok());
        let mut vectors = Vec::with_capacity(texts.len());
        // The service takes at most MAX_EMBED_TEXTS texts per call.
        for batch in texts.chunks(workers_ai::MAX_EMBED_TEXTS) {
            let inputs = workers_ai::embed_inputs(batch).to_string();
            let resolved = match within(self.idle_timeout, ai.run(&self.embed_model, &inputs)).await
            {
                Some(Ok(resolved)) => resolved,
                Some(Err(message)) => return Err(unavailable(format!("Workers AI: {message}"))),
                None => return Err(unavailable("embedding request timed out".into())),
            };
            let batch = workers_ai::to_json(&resolved)
                .and_then(|reply| workers_ai::vectors(reply, batch.len(), dimensions))
                .map_err(|e| ServiceError::new(ServiceErrorKind::Other, e))?;
            vectors.extend(batch);
        }
        Ok(vectors)
    }
}
