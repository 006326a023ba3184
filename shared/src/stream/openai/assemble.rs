//! Assembly of streamed tool-call fragments into complete calls.

use alloc::string::String;
use alloc::vec::Vec;

use super::chunk::ToolCallChunk;
use crate::chat::ToolCall;
use crate::stream::sse::push_u64;

/// Collects the `delta.tool_calls` pieces of one streamed message and hands out complete
/// [`ToolCall`]s when the message ends.
///
/// Pieces are matched by `index`. A provider that omits `index` starts a new call whenever
/// a piece carries an id different from the current call's. A call without an id gets
/// `call_<index>`; a call without arguments gets `{}`.
#[derive(Debug, Clone, Default)]
pub struct ToolCallAssembler {
    calls: Vec<PartialCall>,
}

#[derive(Debug, Clone)]
struct PartialCall {
    index: u32,
    id: String,
    name: String,
    arguments: String,
}

impl ToolCallAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no piece has been pushed since the last [`take`](Self::take).
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Adds one piece.
    pub fn push(&mut self, piece: &ToolCallChunk<'_>) {
        let index = piece
            .index
            .unwrap_or_else(|| match (self.calls.last(), piece.id.as_deref()) {
                (None, _) => 0,
                (Some(last), Some(id))
                    if !id.is_empty() && !last.id.is_empty() && last.id != id =>
                {
                    last.index + 1
                }
                (Some(last), _) => last.index,
            });
        let call = match self.calls.iter().rposition(|c| c.index == index) {
            Some(i) => &mut self.calls[i],
            None => {
                self.calls.push(PartialCall {
                    index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                let last = self.calls.len() - 1;
                &mut self.calls[last]
            }
        };
        if let Some(id) = piece.id.as_deref()
            && call.id.is_empty()
        {
            call.id.push_str(id);
        }
        if let Some(function) = &piece.function {
            if let Some(name) = function.name.as_deref() {
                call.name.push_str(name);
            }
            if let Some(arguments) = function.arguments.as_deref() {
                call.arguments.push_str(arguments);
            }
        }
    }

    /// The complete calls in index order, leaving the assembler empty.
    pub fn take(&mut self) -> impl Iterator<Item = ToolCall> + use<> {
        let mut calls = core::mem::take(&mut self.calls);
        calls.sort_by_key(|c| c.index);
        calls.into_iter().map(|mut c| {
            if c.id.is_empty() {
                c.id.push_str("call_");
                push_u64(&mut c.id, u64::from(c.index));
            }
            if c.arguments.trim().is_empty() {
                c.arguments.clear();
                c.arguments.push_str("{}");
            }
            ToolCall {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            }
        })
    }
}
