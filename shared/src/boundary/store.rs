//! The conversation store boundary.

use alloc::vec::Vec;

use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::ServiceError;

/// What a turn starts from (see [`ConversationStore::start_turn`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnStart {
    /// The conversation.
    pub conversation: Conversation,
    /// The messages before the visitor's, oldest first (at most the requested window).
    pub history: Vec<StoredMessage>,
    /// The visitor's message as stored (with its `seq`).
    pub message: StoredMessage,
    /// Whether retrieval could find anything this turn. `false` only when the store knows
    /// it cannot: the site has no indexed knowledge and the conversation no indexed message
    /// older than `history`. Stores that cannot tell say `true`.
    pub retrievable: bool,
}

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

    /// Starts a turn as one unit: loads the conversation and its last `window` messages,
    /// and appends the visitor's `message` after them (its `seq` is the next one; the
    /// value passed in is ignored). `None`, with nothing stored, when the conversation does
    /// not exist on this site.
    ///
    /// The default runs [`load_conversation`](Self::load_conversation),
    /// [`load_recent_messages`](Self::load_recent_messages) and
    /// [`append_message`](Self::append_message) in turn; a SQL store does it in one batch.
    async fn start_turn(
        &self,
        scope: Scope<'_>,
        mut message: StoredMessage,
        window: usize,
    ) -> Result<Option<TurnStart>, ServiceError> {
        let Some(conversation) = self.load_conversation(scope).await? else {
            return Ok(None);
        };
        let history = self.load_recent_messages(scope, window).await?;
        message.seq = history.last().map_or(1, |m| m.seq + 1);
        self.append_message(scope, &message).await?;
        Ok(Some(TurnStart {
            conversation,
            history,
            message,
            retrievable: true,
        }))
    }

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
