//! What the engine asks of the world and of a template: the [`Platform`] a turn reaches
//! the world through, a template's [`Assistant`] contract and its [`TurnConfig`], and the
//! [`Turn`] a template answers (with what it returns, [`Answer`] and [`TurnOutcome`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::boundary::{
    ChatModel, Clock, ConversationStore, EmbedQueue, Embedder, Ids, Logger, Timer, VectorIndex,
};
use crate::chat::Usage;
use crate::conversation::{Conversation, Language, Scope, StoredMessage};
use crate::error::Error;
use crate::identity::UserIdentity;
use crate::payload::Payload;
use crate::retrieval::RetrievalOptions;
use crate::turn::{TurnEvent, TurnInput, TurnSink};

/// The boundaries the engine itself reaches the world through, as one type: the model, the
/// store, retrieval (embedder and vector index), waiting, ids, the clock, the embedding
/// queue and the log.
///
/// Asynchronous boundaries are associated types (their traits use `async fn`); the
/// synchronous ones are object-safe and handed out as `&dyn`. What only one template uses
/// (warranty records, SQL, web search, a cache, data sets, logs…) is not here: the
/// template declares it as its own dependencies and holds them.
pub trait Platform {
    /// The chat model.
    type Model: ChatModel;
    /// The conversation store.
    type Store: ConversationStore;
    /// The embedder (retrieval queries).
    type Embedder: Embedder;
    /// The vector index (knowledge and conversation memory).
    type Index: VectorIndex;
    /// Waiting (tool timeouts, stage timeouts, retries).
    type Timer: Timer;

    /// The chat model.
    fn model(&self) -> &Self::Model;
    /// The conversation store.
    fn store(&self) -> &Self::Store;
    /// The embedder.
    fn embedder(&self) -> &Self::Embedder;
    /// The vector index.
    fn index(&self) -> &Self::Index;
    /// The timer.
    fn timer(&self) -> &Self::Timer;
    /// Id minting.
    fn ids(&self) -> &dyn Ids;
    /// The clock.
    fn clock(&self) -> &dyn Clock;
    /// Where stored messages go to be embedded.
    fn queue(&self) -> &dyn EmbedQueue;
    /// Where log records go.
    fn logger(&self) -> &dyn Logger;
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
    /// The shared settings.
    fn config(&self) -> &TurnConfig;

    /// The greeting a new conversation opens with.
    fn greeting(&self, language: Language) -> &str;

    /// Whether the greeting is stored as a new conversation's first message (the default).
    /// A template whose conversations hold only questions and answers (`guarded`, seed
    /// 004) says no: the greeting is still handed back to be shown, never stored.
    fn stores_greeting(&self) -> bool {
        true
    }

    /// The intent and confidence a stored reply carries (for replays of answered
    /// messages); templates that do not classify keep the default, none.
    fn stored_intent(&self, _reply: &StoredMessage) -> (Option<&'static str>, Option<f32>) {
        (None, None)
    }

    /// How clients are told what kind of reply `reply` is, beyond its message kind: the
    /// `completed` event's `kind` and its `reply` envelope (seed 002's `data | content |
    /// control` and `ChatResponse`). Derived from the stored reply, so a replay says the
    /// same. Templates without one keep the default, none.
    fn reply_envelope(&self, _reply: &StoredMessage) -> Option<crate::turn::ReplyEnvelope> {
        None
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
    /// The messages of the history that leave the history window after the next turn:
    /// their embeddings are queued once this turn's reply is stored. A message is embedded
    /// one turn before memory retrieval may return it, and only then: one that never
    /// leaves the window (most messages of most conversations) is never embedded.
    pub(crate) memory_due: Vec<StoredMessage>,
    /// Whether the reply itself is due too (a window of fewer than four messages).
    pub(crate) reply_due: bool,
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
    type Timer = P::Timer;

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
    fn timer(&self) -> &P::Timer {
        (**self).timer()
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
}
