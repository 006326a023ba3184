//! The `guarded` template's settings, with defaults from the compiled-in `prompts/` files.

use alloc::string::String;

use super::guardrail::prose_domain;
use crate::conversation::Language;
use crate::engine::TurnConfig;
use crate::prompt::{Sentences, fill};

/// `prompts/guarded_guardrail_vi.md` (seed, verbatim, with `{DOMAIN_VI}`).
pub const GUARDRAIL_VI: &str = include_str!("../../../../prompts/guarded_guardrail_vi.md");
/// `prompts/guarded_guardrail_en.md` (`{DOMAIN_EN}`).
pub const GUARDRAIL_EN: &str = include_str!("../../../../prompts/guarded_guardrail_en.md");
/// `prompts/guarded_fixed_vi.md`: greeting, refusal, prompt labels.
pub const SENTENCES_VI: &str = include_str!("../../../../prompts/guarded_fixed_vi.md");
/// `prompts/guarded_fixed_en.md`.
pub const SENTENCES_EN: &str = include_str!("../../../../prompts/guarded_fixed_en.md");
/// `prompts/guarded_system_vi.md`: the answer's system prompt (role and format rules).
pub const SYSTEM_VI: &str = include_str!("../../../../prompts/guarded_system_vi.md");
/// `prompts/guarded_system_en.md`.
pub const SYSTEM_EN: &str = include_str!("../../../../prompts/guarded_system_en.md");
/// `prompts/guarded_summarize_vi.md`: the summarise-the-answer prompt.
pub const SUMMARIZE_VI: &str = include_str!("../../../../prompts/guarded_summarize_vi.md");
/// `prompts/guarded_summarize_en.md`.
pub const SUMMARIZE_EN: &str = include_str!("../../../../prompts/guarded_summarize_en.md");

/// The fixed-sentence keys the template uses.
pub const SENTENCE_KEYS: &[&str] = &[
    "greeting",
    "refusal",
    "prompt.recent",
    "prompt.user",
    "prompt.assistant",
    "prompt.question",
    "prompt.search",
    "prompt.no_results",
    "summarize.question",
    "summarize.answer",
];

/// `KEEP_RECENT_MESSAGES` (seed): the recent messages a prompt carries.
pub const KEEP_RECENT_MESSAGES: usize = 6;
/// `SUMMARIZE_THRESHOLD` (seed): with `auto_compress`, old messages are compressed once a
/// conversation holds more than this many.
pub const SUMMARIZE_THRESHOLD: usize = 10;
/// `COMPRESS_AFTER_SUMMARY` (seed): `set_summary{compress:true}` compresses old messages.
pub const COMPRESS_AFTER_SUMMARY: bool = true;
/// Search results per question (seed: up to 5).
pub const MAX_SEARCH_RESULTS: usize = 5;
/// The seed's tool name, kept whatever the provider.
pub const SEARCH_TOOL: &str = "duckduckgo_search";

/// One language's texts, with the domain filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedTexts {
    /// The guardrail's prompt.
    pub guardrail: String,
    /// The answer's system prompt.
    pub system: String,
    /// The summarise prompt.
    pub summarize: String,
    /// The greeting stored as a conversation's first message.
    pub greeting: String,
    /// The refusal of an off-domain question.
    pub refusal: String,
    /// Prompt labels (keys: [`SENTENCE_KEYS`]).
    pub sentences: Sentences,
}

impl GuardedTexts {
    fn new(language: Language, domain: &str) -> Self {
        let (guardrail, sentences, system, summarize, key) = match language {
            Language::Vi => (
                GUARDRAIL_VI,
                SENTENCES_VI,
                SYSTEM_VI,
                SUMMARIZE_VI,
                "DOMAIN_VI",
            ),
            Language::En => (
                GUARDRAIL_EN,
                SENTENCES_EN,
                SYSTEM_EN,
                SUMMARIZE_EN,
                "DOMAIN_EN",
            ),
        };
        let prose = prose_domain(domain);
        let values = [(key, domain.trim()), ("domain", prose.as_str())];
        let sentences = Sentences::parse(sentences);
        Self {
            guardrail: fill(guardrail.trim(), &values),
            system: fill(system.trim(), &values),
            summarize: fill(summarize.trim(), &values),
            greeting: fill(sentences.get("greeting"), &values),
            refusal: fill(sentences.get("refusal"), &values),
            sentences,
        }
    }
}

/// The `guarded` template's settings. A site picks its domain (and may override the
/// refusal, the greeting and the models):
///
/// ```
/// use concierge_core::conversation::Language;
/// use concierge_core::flows::guarded::GuardedConfig;
/// let config = GuardedConfig::default();
/// assert_eq!(
///     config.texts(Language::Vi).guardrail,
///     "Câu hỏi có liên quan đến NHA KHOA không? Trả lời CHỈ một từ: YES hoặc NO"
/// );
/// let legal = GuardedConfig::with_domain("PHÁP LUẬT", "LAW");
/// assert!(legal.texts(Language::En).refusal.contains("about law."));
/// ```
#[derive(Debug, Clone)]
pub struct GuardedConfig {
    /// The domain in Vietnamese, upper case as the guardrail prompt has it (`NHA KHOA`).
    pub domain_vi: String,
    /// The domain in English (`DENTISTRY`).
    pub domain_en: String,
    /// Vietnamese texts.
    pub vi: GuardedTexts,
    /// English texts.
    pub en: GuardedTexts,
    /// The model that answers (`chat_model`; `None`: the site's model).
    pub chat_model: Option<String>,
    /// The guardrail's model (`guardrail_model`; `None`: the site's model).
    pub guardrail_model: Option<String>,
    /// What the step-8 log line names as the provider (`ollama`, `openai`, …).
    pub provider: String,
    /// After each summary update, compress old messages once a conversation holds more
    /// than [`SUMMARIZE_THRESHOLD`] (TEMPLATES §4.6.3; default off: the seed's chat flow
    /// passes `compress=false`).
    pub auto_compress: bool,
    /// Compression deletes old messages instead of flagging them (default off).
    pub compression_deletes: bool,
    /// Log prompts and responses (they hold visitor text; default off).
    pub debug_log: bool,
    /// The guardrail also sees the conversation's summary, so a follow-up that only makes
    /// sense after earlier answers ("Còn trẻ em thì sao?") is judged in context (site
    /// setting `guardrail_with_context`; default off: the seed's guardrail sees only the
    /// current message).
    pub guardrail_with_context: bool,
    /// The settings every template shares (history window: the recent messages plus a
    /// greeting and a failed reply's slack).
    pub turn: TurnConfig,
}

impl Default for GuardedConfig {
    fn default() -> Self {
        Self::with_domain("NHA KHOA", "DENTISTRY")
    }
}

impl GuardedConfig {
    /// The template's texts for a domain named `domain_vi` / `domain_en`.
    pub fn with_domain(domain_vi: &str, domain_en: &str) -> Self {
        let turn = TurnConfig {
            history_window: KEEP_RECENT_MESSAGES + 4,
            prompt_history: KEEP_RECENT_MESSAGES,
            ..TurnConfig::default()
        };
        Self {
            domain_vi: domain_vi.trim().into(),
            domain_en: domain_en.trim().into(),
            vi: GuardedTexts::new(Language::Vi, domain_vi),
            en: GuardedTexts::new(Language::En, domain_en),
            chat_model: None,
            guardrail_model: None,
            provider: "openai".into(),
            auto_compress: false,
            compression_deletes: false,
            debug_log: false,
            guardrail_with_context: false,
            turn,
        }
    }

    /// The texts of `language`.
    pub fn texts(&self, language: Language) -> &GuardedTexts {
        match language {
            Language::Vi => &self.vi,
            Language::En => &self.en,
        }
    }

    /// The texts of `language`, to change.
    pub fn texts_mut(&mut self, language: Language) -> &mut GuardedTexts {
        match language {
            Language::Vi => &mut self.vi,
            Language::En => &mut self.en,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_in_sentences_are_complete_and_filled() {
        for text in [SENTENCES_VI, SENTENCES_EN] {
            assert!(Sentences::parse_complete(text, SENTENCE_KEYS).is_ok());
        }
        let config = GuardedConfig::default();
        assert_eq!(
            config.vi.refusal,
            "Xin lỗi, tôi chỉ có thể tư vấn các vấn đề liên quan đến nha khoa. \
             Bạn có câu hỏi nào về răng miệng không?"
        );
        assert_eq!(
            config.en.refusal,
            "Sorry, I can only help with questions about dentistry. Do you have a question \
             about your teeth or oral health?"
        );
        assert_eq!(
            config.en.guardrail,
            "Is the question related to DENTISTRY? Answer with ONLY one word: YES or NO"
        );
        assert!(
            config
                .vi
                .system
                .starts_with("Bạn là chuyên gia tư vấn nha khoa")
        );
    }
}
