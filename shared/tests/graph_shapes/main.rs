//! The engine expresses every seed's graph: each shape below is built with toy nodes.
//!
//! - 001: a ReAct tool loop with a retry cap;
//! - 002: sequential agents, a self-retrying SQL step, a validator;
//! - 003: planned stages whose tasks run concurrently and merge;
//! - 004: guard first with an early exit, and summary memory.
#![allow(clippy::unwrap_used)]

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use concierge_core::boundary::{ChatModel, ChatRequest, ConversationStore};
use concierge_core::chat::{ChatEvent, ChatMessage, FinishReason, ToolCall};
use concierge_core::conversation::{
    Conversation, Language, MessageKind, Metadata, Role, StoredMessage, Summary,
};
use concierge_core::graph::{END, Flow, Graph, GraphError, Next, Node, block_on, join_all};
use concierge_core::memory::{MemoryStore, Script, ScriptedChatModel};

macro_rules! nodes {
    ($name:ident { $($variant:ident => $text:literal),* $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum $name { $($variant),* }
        impl Node for $name {
            fn name(self) -> &'static str {
                match self { $(Self::$variant => $text),* }
            }
        }
    };
}

mod analyst;
mod guarded;
mod knowledge;
mod rental;
mod wiring;
