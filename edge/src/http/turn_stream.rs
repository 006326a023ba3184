//! A turn streamed to the client in any wire format (native SSE, OpenAI chunks, AI SDK UI
//! message stream): the engine's events through one [`TurnEncoder`] into the response body.
//!
//! The response starts once the turn has started (the visitor's message is stored): a turn
//! that fails before that (unknown conversation, refused message) is answered with an HTTP
//! error instead of a stream. The turn then runs to completion even if the client goes
//! away: its answer is stored. The stream always ends with exactly one terminal event: the
//! engine's, or — should it ever not come — the encoder's own failure on close.

use concierge_core::conversation::Scope;
use concierge_core::engine::{self, Assistant, RegenerateInput, StatelessInput, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::stream::TurnEncoder;
use concierge_core::stream::ai_sdk::{AiSdkEncoder, HEADER_NAME, HEADER_VALUE};
use concierge_core::turn::{Started, TurnEvent, TurnInput, TurnSink};
use futures_channel::oneshot;
use worker::{Context, Response, ResponseBody};

use crate::auth::Admission;
use crate::bindings::js_stream::{BodyWriter, Coalescing};
use crate::bindings::services::Services;
use crate::error::ApiError;

/// The turn to run: on a stored conversation, or on the caller's history.
#[derive(Debug)]
pub(crate) enum TurnRun {
    /// A stored conversation's turn.
    Stored(TurnInput),
    /// A stored conversation's turn behind the caller's rate limits, checked while the
    /// turn reads the conversation.
    Admitted(TurnInput, Admission),
    /// A stateless turn (the caller sent the whole history).
    Stateless(StatelessInput),
    /// A stored conversation's last answer, answered again (`POST …/regenerate`).
    Regenerate(RegenerateInput),
}

impl TurnRun {
    pub(crate) fn site_id(&self) -> &str {
        match self {
            Self::Stored(input) | Self::Admitted(input, _) => &input.site_id,
            Self::Stateless(input) => &input.site_id,
            Self::Regenerate(input) => &input.site_id,
        }
    }

    pub(crate) fn conversation_id(&self) -> &str {
        match self {
            Self::Stored(input) | Self::Admitted(input, _) => &input.conversation_id,
            Self::Regenerate(input) => &input.conversation_id,
            Self::Stateless(_) => "",
        }
    }

    /// Where a rate limit's refusal is left, for a turn behind one.
    pub(crate) fn refusal(&self) -> Option<std::rc::Rc<std::cell::RefCell<Option<ApiError>>>> {
        match self {
            Self::Admitted(_, admission) => Some(admission.refusal()),
            _ => None,
        }
    }

    /// Runs the turn on the engine, its events into `sink`.
    pub(crate) async fn run<A: Assistant>(
        self,
        services: &Services,
        assistant: &A,
        sink: &mut dyn TurnSink,
    ) -> Result<TurnOutcome, Error> {
        match self {
            Self::Stored(input) => engine::run_turn(services, assistant, &input, sink).await,
            Self::Admitted(input, admission) => {
                let admission = admission.for_turn();
                engine::run_admitted_turn(services, assistant, &input, admission, sink).await
            }
            Self::Stateless(input) => engine::run_stateless(services, assistant, input, sink).await,
            Self::Regenerate(input) => {
                let open = engine::Admission::open();
                engine::regenerate(services, assistant, &input, open, sink).await
            }
        }
    }
}

/// Streams `run` encoded by `encoder` as `text/event-stream`.
pub(crate) async fn respond<A: Assistant + 'static, E: TurnEncoder + 'static>(
    ctx: &Context,
    services: Services,
    assistant: A,
    run: TurnRun,
    mut encoder: E,
    request_id: &str,
) -> Result<Response, ApiError> {
    // Frames go straight into the response body.
    let (writer, body) = BodyWriter::new()?;
    // Text chunks are grouped into fewer writes; every other event is written at once.
    let writer = Coalescing::new(writer);
    let (started_tx, started_rx) = oneshot::channel::<Result<(), ApiError>>();
    let refusal = run.refusal();
    let request_id = request_id.to_string();
    let turn = async move {
        let (site_id, conversation_id) =
            (run.site_id().to_string(), run.conversation_id().to_string());
        let mut sink = BodySink {
            encoder: &mut encoder,
            writer: &writer,
            out: String::new(),
            started: Some(started_tx),
        };
        let result = run.run(&services, &assistant, &mut sink).await;
        let began = sink.started.is_none();
        if let Some(tx) = sink.started.take() {
            // The engine never said the turn started: it failed before anything was
            // stored, and its error is the HTTP answer.
            let refused = refusal.and_then(|r| r.borrow_mut().take());
            let early = match &result {
                Err(_) if refused.is_some() => refused.unwrap_or(ApiError::RateLimited),
                Err(error) => ApiError::from(error.clone()),
                Ok(_) => ApiError::Internal(worker::Error::RustError("turn never started".into())),
            };
            let _ = tx.send(Err(early));
        }
        let mut tail = String::new();
        if encoder.close(&mut tail) {
            writer.write_now(tail.as_bytes());
        }
        writer.close();
        let ended = Ended {
            site_id: &site_id,
            conversation_id: &conversation_id,
            began,
            request_id: &request_id,
        };
        ended.settle(&services, &assistant, &result).await;
    };
    ctx.wait_until(turn);

    started_rx
        .await
        .map_err(|_| ApiError::Internal(worker::Error::RustError("turn ended early".into())))??;
    sse(body)
}

/// A `text/event-stream` response of `body` (never cached or buffered on the way).
pub(crate) fn sse(body: worker::web_sys::ReadableStream) -> Result<Response, ApiError> {
    let mut response = Response::from_body(ResponseBody::Stream(body))?;
    let headers = response.headers_mut();
    headers.set("content-type", "text/event-stream; charset=utf-8")?;
    headers.set("cache-control", "no-cache, no-transform")?;
    headers.set("x-accel-buffering", "no")?;
    Ok(response)
}

/// A turn that has run, for what follows it whatever the wire format.
pub(crate) struct Ended<'a> {
    pub site_id: &'a str,
    pub conversation_id: &'a str,
    /// Whether it started (the visitor's message is stored).
    pub began: bool,
    pub request_id: &'a str,
}

impl Ended<'_> {
    /// Flushes the queued work (embeddings) and, for a stored conversation's turn that
    /// started, reads the conversation as the turn left it unless the turn's reply left it
    /// remembered, so its next turn in this isolate starts without reading it (the engine
    /// checks that memory when it writes); logs a failure.
    pub(crate) async fn settle<A: Assistant>(
        &self,
        services: &Services,
        assistant: &A,
        result: &Result<TurnOutcome, Error>,
    ) {
        let flushed = services.queue_flush();
        if self.began && !self.conversation_id.is_empty() {
            let scope = Scope::new(self.site_id, self.conversation_id);
            let window = assistant.config().history_window;
            futures_util::future::join(flushed, services.store.refresh(scope, window)).await;
        } else {
            flushed.await;
        }
        if let Err(error) = result {
            let line = serde_json::json!({
                "level": "warn", "msg": "turn failed", "request_id": self.request_id,
                "site": self.site_id, "conversation_id": self.conversation_id,
                "code": error.code(), "detail": error.to_string(),
            });
            worker::console_warn!("{line}");
        }
    }
}

/// The response body as the engine's sink: nothing is written until the engine says the
/// turn started ([`TurnSink::started`]), which also lets the response start; a turn that
/// fails before that is answered with an HTTP error instead of a stream.
struct BodySink<'a, E> {
    encoder: &'a mut E,
    writer: &'a Coalescing,
    out: String,
    /// `Some` until the turn starts.
    started: Option<oneshot::Sender<Result<(), ApiError>>>,
}

impl<E: TurnEncoder> TurnSink for BodySink<'_, E> {
    fn started(&mut self, _started: &Started) {
        if let Some(tx) = self.started.take() {
            let _ = tx.send(Ok(()));
        }
    }

    fn emit(&mut self, event: TurnEvent) {
        if self.started.is_some() {
            // Before the turn started only its failure can come, answered as an HTTP error.
            return;
        }
        self.out.clear();
        let _ = self.encoder.encode(&event, &mut self.out);
        if self.out.is_empty() {
            return;
        }
        match event {
            TurnEvent::Chunk { .. } => self.writer.write_soon(self.out.as_bytes()),
            _ => self.writer.write_now(self.out.as_bytes()),
        }
    }
}

/// Streams `run` as the AI SDK's UI message stream v1 (with its protocol header).
pub(crate) async fn respond_ai_sdk<A: Assistant + 'static>(
    ctx: &Context,
    services: Services,
    assistant: A,
    run: TurnRun,
    request_id: &str,
) -> Result<Response, ApiError> {
    let encoder = AiSdkEncoder::new();
    let mut response = respond(ctx, services, assistant, run, encoder, request_id).await?;
    response.headers_mut().set(HEADER_NAME, HEADER_VALUE)?;
    Ok(response)
}
