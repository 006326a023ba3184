//! A scripted [`ChatModel`] that records the requests it receives.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::boundary::{ChatModel, ChatRequest, ChatSink, ModelCall};
use crate::chat::{ChatEvent, FinishReason, ToolCall, UpstreamError};
use crate::error::{ChatModelError, ChatModelErrorKind};

/// One scripted model reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    /// Streams these chunks, then finishes normally.
    Reply(Vec<String>),
    /// Streams these chunks, then the connection breaks (`Err`).
    BreakAfter(Vec<String>, ChatModelError),
    /// Streams these chunks, then the provider reports an error in-band.
    ErrorAfter(Vec<String>, UpstreamError),
    /// Streams exactly these events (tool calls, finishes…), then returns `Ok`.
    Events(Vec<ChatEvent>),
}

/// A chat model that plays back scripts in order and records every request. With no
/// script left it answers `Unreachable`.
#[derive(Debug, Default)]
pub struct ScriptedChatModel {
    scripts: RefCell<VecDeque<Script>>,
    requests: RefCell<Vec<ChatRequest>>,
}

impl ScriptedChatModel {
    /// A model with no scripts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a script.
    pub fn push(&self, script: Script) {
        self.scripts.borrow_mut().push_back(script);
    }

    /// Queues a normal reply streamed as `chunks`.
    pub fn reply(&self, chunks: &[&str]) {
        self.push(Script::Reply(
            chunks.iter().map(|c| String::from(*c)).collect(),
        ));
    }

    /// Queues a reply that streams `text` (may be empty) and then asks for these tool
    /// calls, each `(id, name, arguments JSON text)`, finishing with `tool_calls` — what the
    /// OpenAI and Ollama decoders produce once a streamed call is assembled.
    pub fn tool_calls(&self, text: &str, calls: &[(&str, &str, &str)]) {
        let mut events = Vec::with_capacity(calls.len() + 2);
        if !text.is_empty() {
            events.push(ChatEvent::text(text));
        }
        events.extend(calls.iter().map(|(id, name, arguments)| {
            ChatEvent::ToolCall(ToolCall {
                id: String::from(*id),
                name: String::from(*name),
                arguments: String::from(*arguments),
            })
        }));
        events.push(ChatEvent::finish(FinishReason::ToolCalls));
        self.push(Script::Events(events));
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.borrow().clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<ChatRequest> {
        self.requests.borrow().last().cloned()
    }

    /// How many scripts are left.
    pub fn scripts_left(&self) -> usize {
        self.scripts.borrow().len()
    }
}

impl ChatModel for ScriptedChatModel {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        self.requests.borrow_mut().push(call.request.clone());
        let script = self.scripts.borrow_mut().pop_front();
        let (chunks, ending) = match script {
            None => {
                return Err(ChatModelError::new(
                    ChatModelErrorKind::Unreachable,
                    "no scripted reply left",
                ));
            }
            Some(Script::Events(events)) => {
                events.into_iter().for_each(|event| sink.event(event));
                return Ok(());
            }
            Some(Script::Reply(chunks)) => (chunks, Ok(None)),
            Some(Script::BreakAfter(chunks, error)) => (chunks, Err(error)),
            Some(Script::ErrorAfter(chunks, error)) => (chunks, Ok(Some(error))),
        };
        for chunk in chunks {
            sink.event(ChatEvent::TextDelta(chunk));
        }
        match ending {
            Ok(None) => {
                sink.event(ChatEvent::finish(FinishReason::Stop));
                Ok(())
            }
            Ok(Some(error)) => {
                sink.event(ChatEvent::Error(error));
                Ok(())
            }
            Err(error) => Err(error),
        }
    }
}
