//! The conversation store boundary.

use alloc::vec::Vec;

use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::ServiceError;

/// Conversations, their messages and summaries, every read and write scoped to one site
/// and one conversation.
///
/// Shaped for a SQL store (Cloudflare D1): each method is one or two statements with bound
/// parameters (see `migrations/0001_init.sql`).
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait ConversationStore {
    /// Creates `conversation` (its `site_id` is its scope).
    async fn create_conversation(&self, conversation: &Conversation) -> Result<(), ServiceError>;

    /// Loads a conversation; `None` when it does not exist *on this site*.
    async fn load_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Conversation>, ServiceError>;

    /// Changes a conversation's language.
    async fn set_language(&self, scope: Scope<'_>, language: Language) -> Result<(), ServiceError>;

    /// Appends `message`. Its `seq` must be unused in the conversation, otherwise the store
    /// answers [`ServiceErrorKind::Conflict`](crate::error::ServiceErrorKind::Conflict) (two
    /// concurrent turns in one conversation: one of them fails cleanly).
    async fn append_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<(), ServiceError>;

    /// The last `limit` messages of the conversation, oldest first.
    async fn load_recent_messages(
        &self,
        scope: Scope<'_>,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, ServiceError>;

    /// Records whether a message's embedding was indexed.
    async fn set_embedding_status(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        status: EmbeddingStatus,
    ) -> Result<(), ServiceError>;

    /// The conversation's accumulated summary, if any.
    async fn load_summary(&self, scope: Scope<'_>) -> Result<Option<Summary>, ServiceError>;

    /// Replaces the conversation's summary.
    async fn save_summary(&self, scope: Scope<'_>, summary: &Summary) -> Result<(), ServiceError>;
}
