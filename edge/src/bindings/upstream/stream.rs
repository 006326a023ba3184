//! The chat model over an upstream: one attempt's request and stream loop with its
//! deadlines, the retry before the first token, and the provider's request body.

use std::time::Duration;

use concierge_core::boundary::{
    ChatModel, ChatRequest, ChatSink, Constraint, ModelCall, tool_call_schema,
};
use concierge_core::chat::ChatEvent;
use concierge_core::error::{ChatModelError, ChatModelErrorKind};
use concierge_core::stream::ChatStreamDecoder;
use concierge_core::stream::{ollama, openai};
use futures_util::future::{Either, select};
use futures_util::pin_mut;
use worker::web_sys::ReadableStream;
use worker::{AbortController, Delay, ResponseBody};

use super::super::js_stream::ChunkReader;
use super::super::workers_ai::{self, WorkersAiStreamDecoder};
use super::gather::Gather;
use super::{Provider, Upstream, unreachable, within};

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
        let opened = self.open(model, body, &mut controller, sink).await;
        let (body, mut decoder) = match opened.map_err(|e| fail(e, false))? {
            Some(opened) => opened,
            // Answered whole, and its events delivered.
            None => return Ok(()),
        };
        let mut reader = ChunkReader::gathering(&body);
        let mut rate = Gather::default();
        let mut next_min = 1;
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
            reader.set_min(next_min);
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
                if delivered {
                    next_min = rate.next_min(bytes.len());
                } else {
                    rate.restart();
                }
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
    /// The upstream's answer as a stream and the decoder for its format; `None` when it
    /// answered whole (Workers AI without streaming), its events already delivered.
    async fn open(
        &self,
        model: &str,
        body: &str,
        controller: &mut AbortOnDrop,
        sink: &mut dyn ChatSink,
    ) -> Result<Option<(ReadableStream, Box<dyn ChatStreamDecoder>)>, ChatModelError> {
        if self.provider == Provider::WorkersAi {
            let stream = self.open_workers_ai(model, body, sink).await?;
            return Ok(stream.map(|s| (s, Box::new(WorkersAiStreamDecoder::new()) as Box<_>)));
        }
        let body = self.open_http(body, controller, sink).await?;
        let decoder: Box<dyn ChatStreamDecoder> = match self.provider {
            Provider::Ollama => Box::new(ollama::OllamaStreamDecoder::new()),
            _ => Box::new(openai::OpenAiStreamDecoder::new()),
        };
        Ok(Some((body, decoder)))
    }

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
