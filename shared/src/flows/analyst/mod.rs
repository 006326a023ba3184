//! `analyst` — business data questions answered by a tool-calling agent over the user's
//! own data sets (seed 001, `001_2f11b40d0be89da0.txt`, "AI Chat Agent").
//!
//! ```text
//! START
//!   └─ intent_classifier                      (LLM; failure → "unclear")
//!        ├─ "chat"       → chat_node          (LLM, CHAT_NODE_PROMPT, streamed)
//!        ├─ "data_query" → data_agent_node    (ReAct loop over the 5 tools)
//!        └─ "unclear"    → clarify_node       (the fixed clarifying question)
//!   all three → response_formatter → END       (LLM on the data path; Vietnamese numbers)
//! ```
//!
//! The user's data sets come from the platform's [`DataSets`](crate::boundary::DataSets),
//! scoped by site and the conversation's verified identity; anonymous visitors have none.
//! Where the seed is silent, `TEMPLATES.md` §1.6 decides.

pub mod budget;
pub mod cap;
pub mod data;
pub mod eval;
pub mod expr;
mod flow;
pub mod format;
pub mod pipeline;
pub mod query;
pub mod regex;
pub mod sql;
pub mod tools;
pub mod value;

pub use flow::{INTENTS, NODE_NAMES, parse_intent, schema_context, tool_records};

use alloc::string::String;

use crate::agent::ReactConfig;
use crate::boundary::DataSets;
use crate::conversation::{Language, StoredMessage};
use crate::engine::{Answer, Assistant, Platform, Turn, TurnConfig};
use crate::error::Error;
use crate::prompt::Sentences;

/// `INTENT_CLASSIFIER_PROMPT` (seed, verbatim).
pub const INTENT_CLASSIFIER_PROMPT: &str =
    include_str!("../../../../prompts/analyst_intent_classifier_vi.md");
/// `DATA_AGENT_SYSTEM_PROMPT` (seed, verbatim; `{schema_context}` filled per turn).
pub const DATA_AGENT_SYSTEM_PROMPT: &str =
    include_str!("../../../../prompts/analyst_data_agent_vi.md");
/// `CHAT_NODE_PROMPT` (seed, verbatim).
pub const CHAT_NODE_PROMPT: &str = include_str!("../../../../prompts/analyst_chat_vi.md");
/// `RESPONSE_FORMATTER_PROMPT` (seed, verbatim).
pub const RESPONSE_FORMATTER_PROMPT: &str =
    include_str!("../../../../prompts/analyst_response_formatter_vi.md");
/// The product strings, Vietnamese.
pub const SENTENCES_VI: &str = include_str!("../../../../prompts/analyst_fixed_vi.md");
/// The product strings, English.
pub const SENTENCES_EN: &str = include_str!("../../../../prompts/analyst_fixed_en.md");

/// Keys every product-string file must have.
pub const SENTENCE_KEYS: [&str; 9] = [
    "greeting",
    "clarify",
    "no_connections",
    "max_retries",
    "no_data",
    "language",
    "formatter.question",
    "formatter.result",
    "no_sources",
];

/// The `analyst` template's settings.
#[derive(Debug, Clone)]
pub struct AnalystConfig {
    /// The shared settings (a long history window: Property 9 wants the full history).
    pub turn: TurnConfig,
    /// The data agent's loop bounds (8 model calls, 3 retries; the first call must use a
    /// tool).
    pub react: ReactConfig,
    /// Whether the data path's answer goes through the formatter LLM (default `true`).
    pub formatter_llm: bool,
    /// Rows a tool loads per connection at most (default 50 000).
    pub max_rows: usize,
    /// Vietnamese product strings.
    pub vi: Sentences,
    /// English product strings.
    pub en: Sentences,
}

impl Default for AnalystConfig {
    fn default() -> Self {
        // The data agent's numbers come from the tools: its first call must use one.
        let react = ReactConfig {
            stream_text: false,
            first_call_requires_tool: true,
            ..ReactConfig::default()
        };
        Self {
            turn: TurnConfig {
                history_window: 200,
                prompt_history: 200,
                ..TurnConfig::default()
            },
            react,
            formatter_llm: true,
            max_rows: 50_000,
            vi: Sentences::parse(SENTENCES_VI),
            en: Sentences::parse(SENTENCES_EN),
        }
    }
}

impl AnalystConfig {
    /// The product strings of `language`.
    pub fn texts(&self, language: Language) -> &Sentences {
        match language {
            Language::Vi => &self.vi,
            Language::En => &self.en,
        }
    }

    /// A product string.
    pub fn sentence(&self, language: Language, key: &str) -> String {
        self.texts(language).get(key).into()
    }
}

/// What `analyst` needs besides the engine's platform: the merchant's data sets (its
/// `data_agent_node`'s tools).
#[derive(Debug, Clone)]
pub struct AnalystDeps<D> {
    /// The merchant data sets, read by site and user.
    pub data_sets: D,
}

/// The `analyst` template as the engine runs it: the site's settings and its dependencies.
#[derive(Debug, Clone)]
pub struct AnalystAssistant<D> {
    /// The site's settings.
    pub config: AnalystConfig,
    /// Its dependencies.
    pub deps: AnalystDeps<D>,
}

impl<D: DataSets> AnalystAssistant<D> {
    /// `config` over `data_sets`.
    pub fn new(config: AnalystConfig, data_sets: D) -> Self {
        Self {
            config,
            deps: AnalystDeps { data_sets },
        }
    }
}

impl<D: DataSets> Assistant for AnalystAssistant<D> {
    fn config(&self) -> &TurnConfig {
        &self.config.turn
    }

    fn greeting(&self, language: Language) -> &str {
        self.config.texts(language).get("greeting")
    }

    fn stored_intent(&self, reply: &StoredMessage) -> (Option<&'static str>, Option<f32>) {
        let intent = reply.metadata.get("intent").and_then(|v| v.as_str());
        (INTENTS.into_iter().find(|i| Some(*i) == intent), None)
    }

    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        flow::answer(&self.config, &self.deps.data_sets, platform, turn).await
    }
}
