//! A tool call as the MCP server's tools agree on it: the calls whose arguments fit their
//! schemas, and the bounds those schemas publish.

use alloc::string::String;
use serde_json::Value;

/// The longest knowledge query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// The most passages one search returns.
pub const MAX_SEARCH_LIMIT: usize = 8;
/// Passages a search returns when `limit` is not given.
pub const DEFAULT_SEARCH_LIMIT: usize = 4;
/// The longest message sent to the assistant, in characters (the engine's default).
pub const MAX_MESSAGE_CHARS: usize = 4000;
/// The longest conversation id, in characters.
pub const MAX_ID_CHARS: usize = 128;

/// A tool call whose arguments fit its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// `search_knowledge`: what retrieval finds in the site's documents.
    SearchKnowledge {
        /// The query.
        query: String,
        /// How many passages at most.
        limit: usize,
    },
    /// `get_conversation`: a stored conversation's messages.
    GetConversation {
        /// The conversation.
        conversation_id: String,
    },
    /// `send_message`: one turn of the site's assistant.
    SendMessage {
        /// The visitor's message.
        message: String,
        /// The stored conversation to continue; `None` for a stateless turn.
        conversation_id: Option<String>,
    },
    /// `lookup_warranty` (`shop`'s): a warranty record by serial.
    LookupWarranty {
        /// The serial, trimmed.
        serial: String,
    },
    /// One of `guarded`'s tools: the seed's JSON-RPC method it runs.
    Guarded {
        /// The JSON-RPC method, e.g. `memory-server/memory/get_context`.
        method: &'static str,
        /// Its params.
        params: Value,
    },
}
