//! The streamed model step every template shares: the model's text, through the
//! template's [`TextFilter`], as the visitor's chunks ([`stream_text`]); and the one
//! policy for what a failed answer leaves behind ([`fail_answer`]).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::contract::{Platform, Turn, TurnMode};
use super::steps::store_reply;
use crate::boundary::{ChatModel, ModelCall};
use crate::chat::{ChatEvent, FinishReason, UpstreamError, Usage};
use crate::conversation::{MessageKind, Metadata, ToolStep};
use crate::error::{ChatModelError, ChatModelErrorKind, Error};
use crate::turn::{TurnEvent, TurnSink};

/// What a template does to the model's text on its way to the visitor (the analyst's
/// number normaliser, guarded's sources cut, knowledge's `---END` splitter, rental's
/// gates). A filter may hold text back: what it still holds is asked for with
/// [`finish`](TextFilter::finish) when the model has finished, and with
/// [`abandon`](TextFilter::abandon) when it failed part-way.
pub trait TextFilter {
    /// What to show now, given the model's next piece of text.
    fn push(&mut self, delta: &str) -> String;
    /// What is left to show once the model has finished.
    fn finish(&mut self) -> String;
    /// What is left to show when the model failed part-way: only text the filter held
    /// for its form, not for its meaning (a normaliser's digits), so nothing by default.
    fn abandon(&mut self) -> String {
        String::new()
    }
}

/// Shows the model's text as it comes.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsItComes;

impl TextFilter for AsItComes {
    fn push(&mut self, delta: &str) -> String {
        delta.into()
    }

    fn finish(&mut self) -> String {
        String::new()
    }
}

/// Drops the whitespace the model starts with, then shows what `F` shows.
#[derive(Debug, Clone, Default)]
pub struct TrimStart<F> {
    started: bool,
    inner: F,
}

impl<F> TrimStart<F> {
    /// `inner`, without the leading whitespace.
    pub fn new(inner: F) -> Self {
        Self {
            started: false,
            inner,
        }
    }
}

impl<F: TextFilter> TextFilter for TrimStart<F> {
    fn push(&mut self, delta: &str) -> String {
        if self.started {
            return self.inner.push(delta);
        }
        let delta = delta.trim_start();
        if delta.is_empty() {
            return String::new();
        }
        self.started = true;
        self.inner.push(delta)
    }

    fn finish(&mut self) -> String {
        self.inner.finish()
    }

    fn abandon(&mut self) -> String {
        self.inner.abandon()
    }
}

/// What a streamed model call did.
#[derive(Debug, Default)]
pub struct Streamed {
    /// Everything the visitor was shown (the filter's output).
    pub shown: String,
    /// Why the model stopped, when it said.
    pub finish: Option<FinishReason>,
    /// Tokens the model used, when it reported them.
    pub usage: Option<Usage>,
    /// The model failed: a transport error, an HTTP status or an in-band error event
    /// (the first one). Nothing after it is shown.
    pub failure: Option<Error>,
}

impl Streamed {
    /// The failure, or [`Error::EmptyAnswer`] when the model succeeded but the visitor
    /// was shown nothing but whitespace.
    pub fn failure_or_empty(&mut self) -> Option<Error> {
        match self.failure.take() {
            Some(error) => Some(error),
            None if self.shown.trim().is_empty() => Some(Error::EmptyAnswer),
            None => None,
        }
    }
}

/// Runs `call`, streaming its text through `filter` into `sink` as chunks (empty pieces
/// are not sent); at the end, what the filter still holds and gives up
/// ([`TextFilter::finish`], or [`TextFilter::abandon`] after a failure).
pub async fn stream_text<P: Platform, F: TextFilter + ?Sized>(
    platform: &P,
    sink: &mut dyn TurnSink,
    call: &ModelCall<'_>,
    filter: &mut F,
) -> Streamed {
    let mut out = Streamed::default();
    let mut upstream: Option<UpstreamError> = None;
    let result = {
        let out = &mut out;
        let sink = &mut *sink;
        let filter = &mut *filter;
        let upstream = &mut upstream;
        let mut on_event = |event: ChatEvent| match event {
            ChatEvent::TextDelta(delta) if upstream.is_none() => {
                show(filter.push(&delta), &mut out.shown, sink);
            }
            ChatEvent::Finish { reason, usage } => {
                out.finish = Some(reason);
                out.usage = usage;
            }
            ChatEvent::Error(error) if upstream.is_none() => *upstream = Some(error),
            _ => {}
        };
        platform.model().stream(call, &mut on_event).await
    };
    out.failure = match (result, upstream) {
        (Err(error), _) => Some(Error::ChatModel(error)),
        (Ok(()), Some(error)) => Some(upstream_error(&error)),
        (Ok(()), None) => None,
    };
    let rest = match out.failure {
        None => filter.finish(),
        Some(_) => filter.abandon(),
    };
    show(rest, &mut out.shown, sink);
    out
}

fn show(text: String, shown: &mut String, sink: &mut dyn TurnSink) {
    if !text.is_empty() {
        shown.push_str(&text);
        sink.emit(TurnEvent::Chunk { text });
    }
}

/// The one policy for a failed answer: in a streamed turn, the text the visitor saw (and
/// the tool rounds that ran), unless it is only whitespace, is stored as the reply, marked `incomplete` with the error's
/// code (left out of later prompts, not embedded); a background or stateless turn keeps
/// nothing. Best effort: the turn fails with `error` whatever happens here.
pub async fn fail_answer<P: Platform>(
    platform: &P,
    turn: &Turn<'_>,
    shown: String,
    mut metadata: Metadata,
    steps: Vec<ToolStep>,
    finish: Option<FinishReason>,
    error: Error,
) -> Error {
    if (!shown.trim().is_empty() || !steps.is_empty()) && turn.mode == TurnMode::Streamed {
        note_finish(&mut metadata, finish);
        metadata.insert("incomplete".into(), true.into());
        metadata.insert("error".into(), error.code().into());
        let kind = MessageKind::Answer;
        let _ = store_reply(platform, turn, kind, shown, metadata, steps).await;
    }
    error
}

/// Notes in `metadata` why the model stopped, when it was not the end of its answer
/// (e.g. `length`: the answer was cut by the token limit).
pub fn note_finish(metadata: &mut Metadata, finish: Option<FinishReason>) {
    if let Some(reason) = finish.filter(|reason| *reason != FinishReason::Stop) {
        let reason = serde_json::to_value(reason).unwrap_or_default();
        metadata.insert("finish_reason".into(), reason);
    }
}

/// An in-band error event as the turn's error.
fn upstream_error(error: &UpstreamError) -> Error {
    let message = match error.code.as_deref() {
        Some(code) => format!("{code}: {}", error.message),
        None => error.message.clone(),
    };
    Error::ChatModel(ChatModelError::new(ChatModelErrorKind::Upstream, message))
}
