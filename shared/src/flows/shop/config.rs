//! The `shop` template's settings, with defaults from the compiled-in `prompts/` files.

use crate::conversation::Language;
use crate::engine::TurnConfig;
use crate::intent::Classifier;
use crate::prompt::{Persona, Sentences};

/// `prompts/system_persona_vi.md`.
pub const PERSONA_VI: &str = include_str!("../../../../prompts/system_persona_vi.md");
/// `prompts/system_persona_en.md`.
pub const PERSONA_EN: &str = include_str!("../../../../prompts/system_persona_en.md");
/// `prompts/shop_fixed_vi.md`.
pub const SENTENCES_VI: &str = include_str!("../../../../prompts/shop_fixed_vi.md");
/// `prompts/shop_fixed_en.md`.
pub const SENTENCES_EN: &str = include_str!("../../../../prompts/shop_fixed_en.md");

/// Every fixed-sentence key the template uses.
pub const SENTENCE_KEYS: &[&str] = &[
    "greeting.fallback",
    "clarify.general.1",
    "clarify.general.2",
    "clarify.between",
    "clarify.detail",
    "intent.assemble_pc",
    "intent.shopping",
    "intent.warranty",
    "intent.unknown",
    "warranty.ask_serial",
    "warranty.remind_rule",
    "warranty.found",
    "warranty.not_found",
    "prompt.language",
    "prompt.address",
    "prompt.intent",
    "prompt.passages",
    "prompt.no_passages",
    "prompt.source.knowledge",
    "prompt.source.conversation",
];

/// A language's persona and fixed sentences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShopTexts {
    /// The persona (its `Greeting:` line is the greeting).
    pub persona: Persona,
    /// The fixed sentences (keys: [`SENTENCE_KEYS`]).
    pub sentences: Sentences,
}

/// The `shop` template's settings. A site overrides what it needs:
///
/// ```
/// use concierge_core::flows::shop::ShopConfig;
/// use concierge_core::prompt::Persona;
/// let mut config = ShopConfig::default();
/// config.vi.persona = Persona::parse("Greeting: Chào quý khách!\nEm là trợ lý của Shop A.");
/// config.intent_confidence_threshold = 0.6;
/// assert_eq!(config.greeting(concierge_core::conversation::Language::Vi), "Chào quý khách!");
/// ```
#[derive(Debug, Clone)]
pub struct ShopConfig {
    /// Vietnamese texts.
    pub vi: ShopTexts,
    /// English texts.
    pub en: ShopTexts,
    /// The keyword classifier.
    pub classifier: Classifier,
    /// `INTENT_CONFIDENCE_THRESHOLD`: below it, the clarify loop asks (default 0.5).
    pub intent_confidence_threshold: f32,
    /// Whether the model classifies what the rules leave uncertain (default true).
    pub intent_model: bool,
    /// How long that call may take before the rules' clarifying question is asked
    /// instead, in milliseconds (default 4000).
    pub intent_model_timeout_ms: u64,
    /// The settings every template shares: history window, persona cap, message
    /// length, token cap, temperature, retrieval.
    pub turn: TurnConfig,
}

impl Default for ShopConfig {
    fn default() -> Self {
        Self {
            vi: ShopTexts {
                persona: Persona::parse(PERSONA_VI),
                sentences: Sentences::parse(SENTENCES_VI),
            },
            en: ShopTexts {
                persona: Persona::parse(PERSONA_EN),
                sentences: Sentences::parse(SENTENCES_EN),
            },
            classifier: Classifier::default(),
            intent_confidence_threshold: 0.5,
            intent_model: true,
            intent_model_timeout_ms: 4000,
            turn: TurnConfig::default(),
        }
    }
}

impl ShopConfig {
    /// The texts of `language`.
    pub fn texts(&self, language: Language) -> &ShopTexts {
        match language {
            Language::Vi => &self.vi,
            Language::En => &self.en,
        }
    }

    /// A fixed sentence of `language`.
    pub fn sentence(&self, language: Language, key: &str) -> &str {
        self.texts(language).sentences.get(key)
    }

    /// The greeting of `language`: the persona's `Greeting:` line, or the fallback sentence.
    pub fn greeting(&self, language: Language) -> &str {
        let texts = self.texts(language);
        texts
            .persona
            .greeting
            .as_deref()
            .unwrap_or_else(|| texts.sentences.get("greeting.fallback"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_in_sentences_are_complete() {
        for (name, text) in [("vi", SENTENCES_VI), ("en", SENTENCES_EN)] {
            assert_eq!(
                Sentences::parse_complete(text, SENTENCE_KEYS).map(|_| ()),
                Ok(()),
                "{name}"
            );
        }
    }

    #[test]
    fn compiled_in_personas_have_greetings() {
        let config = ShopConfig::default();
        assert!(
            config
                .greeting(Language::Vi)
                .starts_with("Xin chào quý khách!")
        );
        assert!(config.greeting(Language::En).starts_with("Hello!"));
    }
}
