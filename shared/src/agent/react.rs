//! The bounded agent ⇄ tools loop (ReAct).
//!
//! Each step calls the model with the tools offered. Its text streams to the turn's sink
//! as chunks (unless [`ReactConfig::stream_text`] is off); its tool calls are assembled by
//! the provider decoders into [`ChatEvent::ToolCall`]s. A reply without calls ends the loop
//! with [`ReactEnd::Answered`]. Otherwise every call of the reply runs in order, between a
//! `tool_start` and a `tool_end` event, under its timeout; its result, or its error text,
//! goes back to the model as a `tool` message answering the call's id, and the loop takes
//! another step.
//!
//! Bounds (seed 001, TEMPLATES.md §1.1):
//! - failed tool results are fed back up to [`ReactConfig::max_tool_errors`] times; the
//!   next failure ends the loop, once that reply's calls are all answered, without calling
//!   the model again ([`ReactEnd::ToolErrorBudget`]);
//! - at most [`ReactConfig::max_model_calls`] model calls; when the last one still asks for
//!   tools, they are not run ([`ReactEnd::StepLimit`]);
//! - a reply's calls beyond [`ReactConfig::max_calls_per_step`] are not run: each is
//!   answered with an error (counted as a failure).
//!
//! The loop never fails: a model failure is [`ReactEnd::ModelFailed`], with whatever was
//! streamed and run before it, so the template can store the partial answer as it does
//! for any streamed answer.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::tool::{ToolError, ToolRegistry};
use super::with_timeout;
use crate::boundary::{ChatModel, ChatRequest, Constraint, ModelCall, Timer, parse_tool_call};
use crate::chat::{ChatEvent, ChatMessage, FinishReason, ToolCall, Usage};
use crate::conversation::{StoredToolCall, ToolStep};
use crate::error::{ChatModelError, ChatModelErrorKind};
use crate::turn::{TurnEvent, TurnSink};

/// The loop's bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactConfig {
    /// At most this many model calls per turn (default 8).
    pub max_model_calls: u32,
    /// Failed tool results fed back to the model before the loop gives up (default 3:
    /// the 4th failure ends it).
    pub max_tool_errors: u32,
    /// At most this many calls run per model reply (default 8).
    pub max_calls_per_step: usize,
    /// A tool call's timeout unless the tool sets its own (default 15 000 ms).
    pub tool_timeout_ms: u64,
    /// Whether model text streams to the sink as chunks (default `true`; off when a
    /// formatter pass produces what the visitor sees).
    pub stream_text: bool,
    /// Whether the first model call must call a tool (default `false`; a template whose
    /// answers must be computed by tools sets it — the model's own knowledge is no
    /// answer): it is asked with `tool_choice: "required"`.
    pub first_call_requires_tool: bool,
    /// With [`first_call_requires_tool`](Self::first_call_requires_tool): a model that
    /// still answers the first call in prose is asked once more for the call as a JSON
    /// object (structured output; one more model call) — for small self-hosted models
    /// whose server cannot enforce `tool_choice`. If that is no valid call either, the
    /// prose stands. Default `false`.
    pub tool_json_fallback: bool,
}

impl Default for ReactConfig {
    fn default() -> Self {
        Self {
            max_model_calls: 8,
            max_tool_errors: 3,
            max_calls_per_step: 8,
            tool_timeout_ms: 15_000,
            stream_text: true,
            first_call_requires_tool: false,
            tool_json_fallback: false,
        }
    }
}

/// The token cap of a call asked as JSON ([`ReactConfig::tool_json_fallback`]) is at
/// least this.
pub const JSON_CALL_MIN_TOKENS: u32 = 512;

/// How the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReactEnd {
    /// The model answered without calling tools; [`ReactOutcome::answer`] is its reply.
    Answered,
    /// More tool failures than [`ReactConfig::max_tool_errors`].
    ToolErrorBudget,
    /// [`ReactConfig::max_model_calls`] reached while the model still asked for tools.
    StepLimit,
    /// The model failed (transport, HTTP status or in-band error).
    ModelFailed(ChatModelError),
}

impl ReactEnd {
    /// A stable code: `answered`, `tool_error_budget`, `step_limit`, `model_failed`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::ToolErrorBudget => "tool_error_budget",
            Self::StepLimit => "step_limit",
            Self::ModelFailed(_) => "model_failed",
        }
    }
}

/// What the loop produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ReactOutcome {
    /// How it ended.
    pub end: ReactEnd,
    /// The text of the last model reply (the answer, when [`ReactEnd::Answered`]; what
    /// was streamed before the failure, when [`ReactEnd::ModelFailed`]).
    pub answer: String,
    /// The tool rounds that ran, to store with the reply
    /// ([`StoredMessage::tool_steps`](crate::conversation::StoredMessage::tool_steps)).
    pub steps: Vec<ToolStep>,
    /// Model calls made.
    pub model_calls: u32,
    /// Failed tool results.
    pub tool_errors: u32,
    /// Why the last model reply stopped, when it said.
    pub finish: Option<FinishReason>,
    /// Tokens used over all model calls, when reported.
    pub usage: Option<Usage>,
}

impl ReactOutcome {
    /// The messages this loop added after the request's, as a following model call (e.g. a
    /// formatter) would see them: each step's calls and results, then the answer.
    pub fn messages(&self) -> Vec<ChatMessage> {
        let mut out = Vec::new();
        for step in &self.steps {
            step.push_chat_messages(&mut out);
        }
        out.push(ChatMessage::assistant(self.answer.clone()));
        out
    }
}

/// One model reply, collected while it streams.
#[derive(Default)]
struct Reply {
    text: String,
    calls: Vec<ToolCall>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    error: Option<ChatModelError>,
}

fn add_usage(total: &mut Option<Usage>, more: Option<Usage>) {
    if let Some(more) = more {
        let sum = total.get_or_insert_with(Usage::default);
        sum.prompt_tokens = sum.prompt_tokens.saturating_add(more.prompt_tokens);
        sum.completion_tokens = sum.completion_tokens.saturating_add(more.completion_tokens);
    }
}

/// Runs the loop from `request` (system prompt, history, the visitor's message; its
/// `tools` are replaced by `tools`), emitting chunks and tool events into `sink`.
pub async fn run_react<M: ChatModel, T: Timer>(
    model: &M,
    timer: &T,
    tools: &ToolRegistry<'_>,
    config: &ReactConfig,
    mut request: ChatRequest,
    sink: &mut dyn TurnSink,
) -> ReactOutcome {
    request.tools = tools.specs();
    let mut outcome = ReactOutcome {
        end: ReactEnd::Answered,
        answer: String::new(),
        steps: Vec::new(),
        model_calls: 0,
        tool_errors: 0,
        finish: None,
        usage: None,
    };
    loop {
        outcome.model_calls += 1;
        let required = config.first_call_requires_tool && outcome.model_calls == 1;
        let constraint = Constraint {
            call_tool: required,
            ..Constraint::default()
        };
        let mut reply = call_model(model, &request, &constraint, config.stream_text, sink).await;
        if required && config.tool_json_fallback && reply.calls.is_empty() && reply.error.is_none()
        {
            // The model ignored the required call: ask once more for the call as JSON
            // (structured output), which models without native tool calling can follow.
            outcome.model_calls += 1;
            let as_json = Constraint {
                tool_as_json: true,
                ..Constraint::default()
            };
            // A call written out as JSON needs room, whatever the answer's token cap.
            let mut ask = request.clone();
            ask.max_tokens = ask.max_tokens.map(|n| n.max(JSON_CALL_MIN_TOKENS));
            let json = call_model(model, &ask, &as_json, false, sink).await;
            add_usage(&mut reply.usage, json.usage);
            let id = format!("call_{}", outcome.model_calls);
            if let Some(call) = json
                .error
                .is_none()
                .then(|| parse_tool_call(&json.text, &request.tools, id))
                .flatten()
            {
                reply.calls.push(call);
            }
        }
        add_usage(&mut outcome.usage, reply.usage);
        outcome.finish = reply.finish;
        outcome.answer = reply.text;
        if let Some(error) = reply.error {
            outcome.end = ReactEnd::ModelFailed(error);
            return outcome;
        }
        if reply.calls.is_empty() {
            outcome.end = ReactEnd::Answered;
            return outcome;
        }
        if outcome.model_calls >= config.max_model_calls {
            outcome.end = ReactEnd::StepLimit;
            return outcome;
        }
        let mut step = ToolStep {
            text: core::mem::take(&mut outcome.answer),
            calls: Vec::with_capacity(reply.calls.len()),
        };
        for (index, call) in reply.calls.into_iter().enumerate() {
            let stored = run_call(timer, tools, config, call, index, sink).await;
            if !stored.ok {
                outcome.tool_errors += 1;
            }
            step.calls.push(stored);
        }
        step.push_chat_messages(&mut request.messages);
        outcome.steps.push(step);
        if outcome.tool_errors > config.max_tool_errors {
            outcome.end = ReactEnd::ToolErrorBudget;
            return outcome;
        }
    }
}

/// One model call, its text streamed as chunks when `stream`.
async fn call_model<M: ChatModel>(
    model: &M,
    request: &ChatRequest,
    constraint: &Constraint<'_>,
    stream: bool,
    sink: &mut dyn TurnSink,
) -> Reply {
    let mut reply = Reply::default();
    let result = {
        let mut on_event = |event: ChatEvent| match event {
            ChatEvent::TextDelta(text) => {
                if text.is_empty() || reply.error.is_some() {
                    return;
                }
                reply.text.push_str(&text);
                if stream {
                    sink.emit(TurnEvent::Chunk { text });
                }
            }
            ChatEvent::ToolCall(call) => reply.calls.push(call),
            ChatEvent::Finish { reason, usage } => {
                reply.finish = Some(reason);
                add_usage(&mut reply.usage, usage);
            }
            ChatEvent::Error(error) => {
                let message = format!("{error}");
                reply
                    .error
                    .get_or_insert(ChatModelError::new(ChatModelErrorKind::Upstream, message));
            }
        };
        let call = ModelCall::new(request).constrained(*constraint);
        model.stream(&call, &mut on_event).await
    };
    if let Err(error) = result {
        reply.error.get_or_insert(error);
    }
    reply
}

/// Runs one call (or refuses it), between its `tool_start` and `tool_end` events.
async fn run_call<T: Timer>(
    timer: &T,
    tools: &ToolRegistry<'_>,
    config: &ReactConfig,
    call: ToolCall,
    index: usize,
    sink: &mut dyn TurnSink,
) -> StoredToolCall {
    let parsed = serde_json::from_str::<serde_json::Value>(if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    });
    sink.emit(TurnEvent::ToolStart {
        call_id: call.id.clone(),
        name: call.name.clone(),
        input: parsed.as_ref().map_or_else(
            |_| serde_json::Value::String(call.arguments.clone()),
            Clone::clone,
        ),
    });
    let result = match (tools.get(&call.name), parsed) {
        _ if index >= config.max_calls_per_step => Err(ToolError::new(format!(
            "not run: at most {} tool calls per reply",
            config.max_calls_per_step
        ))),
        (None, _) => Err(ToolError::new(format!("unknown tool: {}", call.name))),
        (Some(_), Err(error)) => Err(ToolError::new(format!(
            "invalid arguments (not JSON): {error}"
        ))),
        (Some(tool), Ok(arguments)) => {
            let ms = tool.timeout_ms().unwrap_or(config.tool_timeout_ms);
            with_timeout(timer, ms, tool.call(arguments))
                .await
                .unwrap_or_else(|| Err(ToolError::new(format!("timed out after {ms} ms"))))
        }
    };
    let (ok, output) = match result {
        Ok(value) => (true, value),
        Err(error) => (false, serde_json::Value::String(error.message().into())),
    };
    sink.emit(TurnEvent::ToolEnd {
        call_id: call.id.clone(),
        name: call.name.clone(),
        ok,
        output: output.clone(),
    });
    StoredToolCall {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        ok,
        output,
    }
}
