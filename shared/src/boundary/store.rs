//! The conversation store boundary.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::conversation::{Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary};
use crate::error::ServiceError;

/// What a turn starts from (see [`ConversationStore::start_turn`] and
/// [`ConversationStore::resume_turn`]).
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

/// What a turn starts from before its visitor's message is stored (see
/// [`ConversationStore::read_turn`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnContext {
    /// The conversation.
    pub conversation: Conversation,
    /// Its last messages, oldest first (at most the requested window).
    pub history: Vec<StoredMessage>,
    /// As [`TurnStart::retrievable`].
    pub retrievable: bool,
}

/// A visitor's message that starts a turn (see [`ConversationStore::start_turn`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NewTurn<'a> {
    /// The visitor's message (its `seq` is ignored: the store takes the next one).
    pub message: StoredMessage,
    /// The id the turn's reply is to be stored under.
    pub reply_id: &'a str,
    /// The client's idempotency key, unique per conversation: a message whose key is
    /// already used in the conversation is not stored again.
    pub idempotency_key: Option<&'a str>,
}

/// How [`ConversationStore::start_turn`] went.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOpening {
    /// The visitor's message is stored; the turn starts from here.
    Started(TurnStart),
    /// The conversation already holds a visitor's message with this idempotency key (it
    /// is returned); nothing was stored.
    Repeated(StoredMessage),
}

/// A stored visitor message's turn, as [`ConversationStore::resume_turn`] finds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResume {
    /// What the turn runs from; `history` holds the messages *before* the visitor's.
    pub start: TurnStart,
    /// The id the turn's reply is (to be) stored under.
    pub reply_id: String,
    /// The message stored under `reply_id`, if any: the reply, or the part of it streamed
    /// before a failure (marked [`incomplete`](StoredMessage::is_incomplete)).
    pub reply: Option<StoredMessage>,
}

/// How [`ConversationStore::reopen_last_turn`] went.
#[derive(Debug, Clone, PartialEq)]
pub enum Reopening {
    /// The last turn's reply (if any) is deleted and the turn moved to the new reply id:
    /// it runs again from here (`reply` is `None`). `replaced` is the deleted reply's id.
    Reopened {
        /// The turn to answer again.
        resume: Box<TurnResume>,
        /// The id of the reply that was deleted, if one was stored.
        replaced: Option<String>,
    },
    /// The conversation has no visitor's message, or the caller's `expected` id is not
    /// its last turn's (answer or visitor's message): nothing was changed.
    NotLast,
    /// The last turn is still being answered (no reply stored, no failure mark): nothing
    /// was changed.
    InProgress,
    /// The conversation's last message is a fixed text that is not the assistant's to
    /// answer again ([`MessageKind::is_fixed`](crate::conversation::MessageKind::is_fixed):
    /// a handoff notice, a person's reply): nothing was changed.
    Fixed,
}

/// Conversations, their messages and summaries, every read and write scoped to one site
/// and one conversation.
///
/// Shaped for a SQL store (Cloudflare D1): each method is one or two statements with bound
/// parameters (see `migrations/`).
///
/// A message's position (`seq`) is taken when it is stored, so turns running at once in
/// one conversation never collide. A visitor's message carries its turn: the id its reply
/// is to be stored under (a retry moves it to a new id, after which an earlier attempt
/// still running can no longer store its reply) and the client's idempotency key.
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

    /// Appends `message` after the conversation's last message: its `seq` is taken here
    /// (the value passed in is ignored) and returned. An id already used is a
    /// [`ServiceErrorKind::Conflict`](crate::error::ServiceErrorKind::Conflict).
    async fn append_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError>;

    /// Appends the assistant's reply to the visitor's message `reply_to`, as
    /// [`append_message`](Self::append_message) does, but only while `reply_to`'s turn is
    /// to be answered under `message.id`. Otherwise (a retry superseded this attempt, or the
    /// conversation is gone) nothing is stored and the store answers
    /// [`ServiceErrorKind::Conflict`](crate::error::ServiceErrorKind::Conflict). A complete
    /// reply removes `reply_to`'s failure mark, if any.
    async fn append_reply(
        &self,
        scope: Scope<'_>,
        reply_to: &str,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError>;

    /// Starts a turn as one unit: loads the conversation and its last `window` messages,
    /// and appends the visitor's message after them (its `seq` is the next one) with its
    /// turn's reply id and idempotency key — unless that key is already used in the
    /// conversation ([`TurnOpening::Repeated`], nothing stored). `None`, with nothing
    /// stored, when the conversation does not exist on this site.
    async fn start_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError>;

    /// Reads what a turn without an idempotency key starts from — the conversation and
    /// its last `window` messages — storing nothing; `None` when the conversation does not
    /// exist on this site. The engine then stores the visitor's message with
    /// [`insert_turn`](Self::insert_turn) while the answer is already being prepared.
    async fn read_turn(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError>;

    /// Appends a turn's visitor message (read by [`read_turn`](Self::read_turn)) after the
    /// conversation's last message, with its reply id and idempotency key as
    /// [`start_turn`](Self::start_turn) does; returns its `seq`, or `None`, with nothing
    /// stored, when the conversation is gone. A key already used in the conversation is a
    /// [`ServiceErrorKind::Conflict`](crate::error::ServiceErrorKind::Conflict): a turn with
    /// a key starts with [`start_turn`](Self::start_turn) instead.
    async fn insert_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
    ) -> Result<Option<u64>, ServiceError>;

    /// What this store already knows of the conversation's turn context for `window` —
    /// what its last [`read_turn`](Self::read_turn) found — without a round trip; `None`
    /// when it knows nothing (stores without such a memory always say so). It may be out
    /// of date: a turn that starts from it stores its message with
    /// [`insert_checked_turn`](Self::insert_checked_turn) and compares.
    fn cached_turn(&self, _scope: Scope<'_>, _window: usize) -> Option<TurnContext> {
        None
    }

    /// [`insert_turn`](Self::insert_turn), also answering the turn context for `window` as
    /// it stood just before the message was stored (as [`read_turn`](Self::read_turn)
    /// would have read it): one unit where the store can make it one.
    async fn insert_checked_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<(u64, TurnContext)>, ServiceError> {
        let Some(context) = self.read_turn(scope, window).await? else {
            return Ok(None);
        };
        Ok(self
            .insert_turn(scope, turn)
            .await?
            .map(|seq| (seq, context)))
    }

    /// Loads the turn of the stored visitor message `message_id`: the conversation, the
    /// last `window` messages before it, the message, its reply id and what is stored
    /// under that id. With `claim`, unless a complete reply is stored, the turn is first
    /// moved to the reply id `claim` and its failure mark
    /// ([`ANSWER_FAILED`](crate::conversation::ANSWER_FAILED)) removed: the earlier
    /// attempt, if still running, can no longer store its reply. `None` when there is no
    /// such visitor message in this conversation on this site.
    async fn resume_turn(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        claim: Option<&str>,
        window: usize,
    ) -> Result<Option<TurnResume>, ServiceError>;

    /// Reopens the conversation's last turn to be answered again ("regenerate"), as one
    /// unit: the last visitor's message's reply — complete, or partial — is deleted with
    /// what hangs on it (votes), the turn is moved to the reply id `claim` and its failure
    /// mark removed, and the turn is loaded as [`resume_turn`](Self::resume_turn) does
    /// (the visitor's message is never stored again). Only when that turn is settled (a
    /// reply is stored, or it is marked failed — otherwise [`Reopening::InProgress`]), it
    /// is the conversation's last, and `expected`, when given, names its reply or its
    /// visitor's message (otherwise [`Reopening::NotLast`]), and the conversation's last
    /// message is not a fixed text (otherwise [`Reopening::Fixed`]). `None` when the conversation
    /// does not exist on this site.
    async fn reopen_last_turn(
        &self,
        scope: Scope<'_>,
        expected: Option<&str>,
        claim: &str,
        window: usize,
    ) -> Result<Option<Reopening>, ServiceError>;

    /// Marks the visitor's message `message_id` as unanswered
    /// ([`ANSWER_FAILED`](crate::conversation::ANSWER_FAILED) = `code` in its metadata),
    /// only while its turn is still `reply_id`'s and no complete reply is stored under it.
    async fn mark_answer_failed(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        reply_id: &str,
        code: &str,
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

    /// Memory compression (seed 004): when the conversation holds more than `above`
    /// dialogue messages (the visitor's and the assistant's, not the greeting), the ones
    /// older than its `keep_recent` most recent uncompressed ones are compressed — flagged,
    /// kept for display but left out of memory views — or deleted when `delete`. How many.
    /// Stores that cannot compress keep the default: unavailable.
    async fn compress_messages(
        &self,
        scope: Scope<'_>,
        keep_recent: usize,
        above: usize,
        delete: bool,
    ) -> Result<usize, ServiceError> {
        let _ = (scope, keep_recent, above, delete);
        Err(ServiceError::new(
            crate::error::ServiceErrorKind::Unavailable,
            "this store does not compress messages",
        ))
    }
}
