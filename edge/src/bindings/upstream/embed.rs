//! The embedder over an upstream: OpenAI-compatible, Ollama or Workers AI embeddings.

use concierge_core::boundary::Embedder;
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::stream::{ollama, openai};
use worker::AbortController;

use super::super::workers_ai;
use super::{Provider, Upstream, within};

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
