//! Tools a model may call, and the registry a ReAct loop offers.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::pin::Pin;

use crate::chat::ToolSpec;

/// What a tool call resolves to.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<serde_json::Value, ToolError>> + 'a>>;

/// A tool failure. Its text is exactly what the model is fed back (and what the
/// `tool_end` event and the stored call carry), so it must help the model retry and must
/// not leak secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A failure the model will read as `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The text the model reads.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A tool the model may call. Object-safe, so a registry can hold different tools; a tool
/// that needs a boundary (SQL, search, cache) borrows it.
pub trait Tool {
    /// The name the model calls it by (unique within a registry).
    fn name(&self) -> &str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema of its arguments object.
    fn parameters(&self) -> serde_json::Value;

    /// Runs the tool on the model's arguments (already parsed as JSON). An `Err` is fed back
    /// to the model as the call's result.
    fn call(&self, arguments: serde_json::Value) -> ToolFuture<'_>;

    /// This tool's own timeout, when it differs from the loop's
    /// ([`ReactConfig::tool_timeout_ms`](super::ReactConfig::tool_timeout_ms)).
    fn timeout_ms(&self) -> Option<u64> {
        None
    }
}

/// The tools of one loop, by name, in the order they are offered.
#[derive(Default)]
pub struct ToolRegistry<'a> {
    tools: Vec<&'a dyn Tool>,
}

impl fmt::Debug for ToolRegistry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
    }
}

impl<'a> ToolRegistry<'a> {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`; a tool of the same name is replaced.
    pub fn with(mut self, tool: &'a dyn Tool) -> Self {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&'a dyn Tool> {
        self.tools.iter().copied().find(|t| t.name() == name)
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tools as the request offers them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().into(),
                description: t.description().into(),
                parameters: t.parameters(),
            })
            .collect()
    }
}
