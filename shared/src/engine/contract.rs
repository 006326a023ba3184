//! What the engine asks of the world and of a template: the [`Platform`] a turn reaches
//! the world through, a template's [`Assistant`] contract and its [`TurnConfig`], and the
//! [`Turn`] a template answers (with what it returns, [`Answer`] and [`TurnOutcome`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::boundary::{
    ChatModel, Clock, ConversationStore, DataSets, EmbedQueue, Embedder, Ids, KnowledgeState,
    KvCache, LogEntry, LogQuery, Logger, RentalData, SqlReader, Timer, VectorIndex,
    WarrantyRecords, WebSearch,
};
use crate::chat::Usage;
use crate::conversation::{Conversation, Language, Scope, StoredMessage};
use crate::error::Error;
use crate::error::{ServiceError, ServiceErrorKind};
use crate::identity::UserIdentity;
use crate::payload::Payload;
use crate::retrieval::RetrievalOptions;
use crate::template::Template;
use crate::turn::{TurnEvent, TurnInput, TurnSink};

/// The boundaries a turn reaches the world through, as one type.
///
/// Asynchronous boundaries are associated types (their traits use `async fn`); the
/// synchronous ones are object-safe and handed out as `&dyn`. The site's uploaded logs and
/// knowledge-base state (`knowledge`) are default methods: a platform without them has
/// no logs and an unversioned knowledge base.
#[allow(async_fn_in_trait)]
pub trait Platform {
    /// The chat model.
    type Model: ChatModel;
    /// The conversation store.
    type Store: ConversationStore;
    /// The embedder (retrieval queries).
    type Embedder: Embedder;
    /// The vector index (knowledge and conversation memory).
    type Index: VectorIndex;
    /// The site's warranty records.
    type Records: WarrantyRecords;
    /// Waiting (tool timeouts, stage timeouts, retries).
    type Timer: Timer;
    /// Read-only SQL over the site's own data (row-capped).
    type Sql: SqlReader;
    /// Web search returning citable sources.
    type Search: WebSearch;
    /// A key-value cache with TTL, keyed per site.
    type Cache: KvCache;

    /// The chat model.
    fn model(&self) -> &Self::Model;
    /// The conversation store.
    fn store(&self) -> &Self::Store;
    /// The embedder.
    fn embedder(&self) -> &Self::Embedder;
    /// The vector index.
    fn index(&self) -> &Self::Index;
    /// The site's warranty records.
    fn records(&self) -> &Self::Records;
    /// The timer.
    fn timer(&self) -> &Self::Timer;
    /// Read-only SQL over the site's data.
    fn sql(&self) -> &Self::Sql;
    /// Web search.
    fn search(&self) -> &Self::Search;
    /// The key-value cache.
    fn cache(&self) -> &Self::Cache;
    /// Id minting.
    fn ids(&self) -> &dyn Ids;
    /// The clock.
    fn clock(&self) -> &dyn Clock;
    /// Where stored messages go to be embedded.
    fn queue(&self) -> &dyn EmbedQueue;
    /// Where log records go.
    fn logger(&self) -> &dyn Logger;
    /// The `rental` template's roles and learned Q&A, where the platform keeps them
    /// (default: none — the template then treats everyone as a guest and learns nothing).
    fn rental(&self) -> Option<&dyn RentalData> {
        None
    }

    /// The `analyst` template's merchant data sets, where the platform keeps them
    /// (default: none — every user then has no connections).
    fn data_sets(&self) -> Option<&dyn DataSets> {
        None
    }

    /// Searches the site's uploaded logs (`knowledge`'s `log_tool`). Default: there are
    /// none (`Unavailable`).
    async fn search_logs(
        &self,
        _site_id: &str,
        _query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        Err(ServiceError::new(
            ServiceErrorKind::Unavailable,
            "no log store on this platform",
        ))
    }

    /// The site's knowledge-base version and whether it has logs. Default: unversioned,
    /// no logs.
    async fn knowledge_state(&self, _site_id: &str) -> Result<KnowledgeState, ServiceError> {
        Ok(KnowledgeState::default())
    }
}

/// The settings every template shares; a template's own config embeds one.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnConfig {
    /// How many recent messages each turn loads from the store, besides the visitor's
    /// new one (default 12).
    pub history_window: usize,
    /// How many of them go into the answer prompt (default 12).
    pub prompt_history: usize,
    /// `PERSONA_MAX_CHARS`: the persona is cut to this many characters in prompts
    /// (default 4000).
    pub persona_max_chars: usize,
    /// Longest accepted visitor message, in characters (default 4000).
    pub max_message_chars: usize,
    /// Token cap for answers (default: the provider's).
    pub max_tokens: Option<u32>,
    /// Sampling temperature for answers (default: the provider's).
    pub temperature: Option<f32>,
    /// Retrieval settings (top-K 4 of 8 + 8 candidates).
    pub retrieval: RetrievalOptions,
}

impl Default for TurnConfig {
    fn default() -> Self {
        Self {
            history_window: 12,
            prompt_history: 12,
            persona_max_chars: 4000,
            max_message_chars: 4000,
            max_tokens: None,
            temperature: None,
            retrieval: RetrievalOptions::default(),
        }
    }
}

/// A template: its settings, its greeting and its answer steps.
///
/// The engine runs everything around [`Assistant::answer`]; the answer streams into
/// [`Turn::sink`] and stores its reply with [`store_reply`](super::store_reply),
/// [`stream_answer`](super::stream_answer) or [`react_answer`](super::react_answer) (which
/// apply the turn's mode: stored or stateless, partial text kept or not).
// `async fn` in a public trait: its futures carry no `Send` bound, which is what we want —
// Workers and browsers are single-threaded.
#[allow(async_fn_in_trait)]
pub trait Assistant {
    /// Which template this is.
    fn template(&self) -> Template;

    /// The shared settings.
    fn config(&self) -> &TurnConfig;

    /// The greeting stored as a new conversation's first message.
    fn greeting(&self, language: Language) -> &str;

    /// The intent and confidence a stored reply carries (for replays of answered
    /// messages); templates that do not classify keep the default, none.
    fn stored_intent(&self, _reply: &StoredMessage) -> (Option<&'static str>, Option<f32>) {
        (None, None)
    }

    /// Screens the visitor's (valid, trimmed) `text` *before* it is stored: `Ok(Some(_))`
    /// refuses it — the refusal is streamed as the answer and nothing is stored — and an
    /// error fails the turn with nothing stored. Templates without a guardrail keep the
    /// default: every message goes on to be stored and answered.
    async fn screen<P: Platform>(
        &self,
        _platform: &P,
        _input: &TurnInput,
        _text: &str,
    ) -> Result<Option<Refusal>, Error> {
        Ok(None)
    }

    /// Answers the turn's visitor message, whose reply id is already announced.
    async fn answer<P: Platform>(&self, platform: &P, turn: &mut Turn<'_>)
    -> Result<Answer, Error>;
}

/// A visitor's message refused by [`Assistant::screen`]: answered with `text`, never stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The refusal, in the visitor's language.
    pub text: String,
    /// The language the message was detected in.
    pub language: Language,
}

/// How a turn keeps what it produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnMode {
    /// History from the store; the reply is stored. A streamed turn keeps text streamed
    /// before a model failure (marked incomplete): its visitor saw it.
    Streamed,
    /// A background attempt (turn queue): stored, but nobody saw partial text, so none is
    /// kept.
    Background,
    /// History from the caller; nothing is stored or queued.
    Stateless,
}

/// One turn, as a template's answer steps see it.
pub struct Turn<'t> {
    /// The conversation (for a stateless turn, one minted for the turn, not stored).
    pub conversation: Conversation,
    /// Recent history, oldest first; the visitor's message is last. A template may move
    /// it into its own state.
    pub history: Vec<StoredMessage>,
    /// The visitor's message this turn answers.
    pub user_message_id: String,
    /// Its position in the conversation.
    pub(crate) message_seq: u64,
    /// The language of this turn's answer.
    pub language: Language,
    /// The id the reply is stored under (announced in `Started`).
    pub reply_id: String,
    /// Whether retrieval could find anything (`false`: the store knows nothing is indexed
    /// outside the history).
    pub retrievable: bool,
    /// Where the turn's events go.
    pub sink: &'t mut dyn TurnSink,
    /// How the turn keeps what it produces.
    pub mode: TurnMode,
    /// The payloads sent so far, stored with the reply.
    pub(crate) payloads: Vec<Payload>,
}

impl Turn<'_> {
    /// The store scope of this turn.
    pub fn scope(&self) -> Scope<'_> {
        self.conversation.scope()
    }

    /// Sends structured content with the answer: emitted now as a `payload` event, and
    /// stored with the reply (history and replays carry it).
    pub fn payload(&mut self, payload: Payload) {
        self.sink.emit(TurnEvent::payload(&payload));
        self.payloads.push(payload);
    }

    /// The verified identity of the visitor (from a signed user token or a secret-key
    /// call; never from a field a public-key caller controls), `None` when anonymous.
    pub fn identity(&self) -> Option<&UserIdentity> {
        self.conversation.identity.as_deref()
    }
}

impl core::fmt::Debug for Turn<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Turn")
            .field("conversation", &self.conversation.id)
            .field("reply_id", &self.reply_id)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// What a template's answer produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The stored reply.
    pub reply: StoredMessage,
    /// The classified intent, when the template classifies.
    pub intent: Option<&'static str>,
    /// Its confidence.
    pub confidence: Option<f32>,
    /// Tokens the model used, when it was called and reported them.
    pub usage: Option<Usage>,
    /// The graph nodes the turn visited.
    pub route: Vec<&'static str>,
}

/// What a completed turn produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The stored visitor message.
    pub user_message_id: String,
    /// The stored assistant reply.
    pub reply: StoredMessage,
    /// The classified intent, when the template classifies.
    pub intent: Option<&'static str>,
    /// Its confidence.
    pub confidence: Option<f32>,
    /// The conversation's language for this turn.
    pub language: Language,
    /// The graph nodes the turn visited (empty for a replay).
    pub route: Vec<&'static str>,
    /// Tokens the model used, when it was called and reported them.
    pub usage: Option<Usage>,
}

impl<P: Platform> Platform for &P {
    type Model = P::Model;
    type Store = P::Store;
    type Embedder = P::Embedder;
    type Index = P::Index;
    type Records = P::Records;
    type Timer = P::Timer;
    type Sql = P::Sql;
    type Search = P::Search;
    type Cache = P::Cache;

    fn model(&self) -> &P::Model {
        (**self).model()
    }
    fn store(&self) -> &P::Store {
        (**self).store()
    }
    fn embedder(&self) -> &P::Embedder {
        (**self).embedder()
    }
    fn index(&self) -> &P::Index {
        (**self).index()
    }
    fn records(&self) -> &P::Records {
        (**self).records()
    }
    fn timer(&self) -> &P::Timer {
        (**self).timer()
    }
    fn sql(&self) -> &P::Sql {
        (**self).sql()
    }
    fn search(&self) -> &P::Search {
        (**self).search()
    }
    fn cache(&self) -> &P::Cache {
        (**self).cache()
    }
    fn ids(&self) -> &dyn Ids {
        (**self).ids()
    }
    fn clock(&self) -> &dyn Clock {
        (**self).clock()
    }
    fn queue(&self) -> &dyn EmbedQueue {
        (**self).queue()
    }
    fn logger(&self) -> &dyn Logger {
        (**self).logger()
    }
    fn rental(&self) -> Option<&dyn RentalData> {
        (**self).rental()
    }
    fn data_sets(&self) -> Option<&dyn DataSets> {
        (**self).data_sets()
    }
    async fn search_logs(
        &self,
        site_id: &str,
        query: &LogQuery,
    ) -> Result<Vec<LogEntry>, ServiceError> {
        (**self).search_logs(site_id, query).await
    }
    async fn knowledge_state(&self, site_id: &str) -> Result<KnowledgeState, ServiceError> {
        (**self).knowledge_state(site_id).await
    }
}
