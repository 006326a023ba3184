//! Intent classification for the `shop` template (seed 000, node 2 "Xác định mong đợi").
//!
//! Keywords come from `prompts/shop_intent_keywords.md` (the seed's bilingual lists). The
//! current message weighs most; the three previous user messages add context:
//!
//! | message      | weight |
//! |--------------|--------|
//! | current      | 1.0    |
//! | previous     | 0.5    |
//! | two before   | 0.3    |
//! | three before | 0.2    |
//!
//! An intent's score is the weighted count of its distinct keywords found in each message.
//! With `best` and `second` the two highest scores, the confidence is
//! `best / (best + 0.4) × (0.5 + 0.5 × (best − second) / best)`, rounded to two decimals:
//! one keyword in the current message gives 0.71, a tie between two intents stays below
//! 0.5 (so the clarify loop asks), no keyword at all is `unknown` with confidence 0.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use serde::{Deserialize, Serialize};

use crate::normalize::{Phrase, Token, tokens};

/// The compiled-in keyword lists.
pub const DEFAULT_KEYWORDS: &str = include_str!("../../prompts/shop_intent_keywords.md");

/// Weights of the current message and the previous user messages, most recent first.
const WEIGHTS: [f32; 4] = [1.0, 0.5, 0.3, 0.2];

/// What the visitor wants (seed 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Advice on assembling a PC.
    AssemblePc,
    /// Product information, buying, ordering.
    Shopping,
    /// Warranty: checks, policy.
    Warranty,
    /// None of the above.
    Unknown,
}

impl Intent {
    /// The three known intents, in the seed's order.
    pub const KNOWN: [Intent; 3] = [Intent::AssemblePc, Intent::Shopping, Intent::Warranty];

    /// The seed's name: `assemble_pc`, `shopping`, `warranty`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AssemblePc => "assemble_pc",
            Self::Shopping => "shopping",
            Self::Warranty => "warranty",
            Self::Unknown => "unknown",
        }
    }
}

/// The keyword lists, by section of `prompts/shop_intent_keywords.md`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeywordLists {
    /// Sections and their phrases, in file order.
    pub sections: BTreeMap<String, Vec<String>>,
}

/// A keyword file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeywordsError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub reason: &'static str,
}

impl KeywordLists {
    /// Parses the keyword file format (see `prompts/shop_intent_keywords.md`).
    pub fn parse(text: &str) -> Result<Self, KeywordsError> {
        let mut lists = Self::default();
        let mut section: Option<String> = None;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let error = |reason| KeywordsError {
                line: index + 1,
                reason,
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[') {
                let name = name
                    .strip_suffix(']')
                    .ok_or(error("unclosed section header"))?;
                lists.sections.entry(name.trim().into()).or_default();
                section = Some(name.trim().into());
                continue;
            }
            let (_lang, phrases) = line
                .split_once(':')
                .ok_or(error("expected `vi:` or `en:`"))?;
            let name = section
                .as_ref()
                .ok_or(error("phrases before any section"))?;
            let list = lists.sections.entry(name.clone()).or_default();
            for quoted in phrases.split(',') {
                let phrase = quoted.trim().trim_matches('"').trim();
                if !phrase.is_empty() {
                    list.push(phrase.into());
                }
            }
        }
        Ok(lists)
    }

    /// The phrases of `section` (empty when absent).
    pub fn section(&self, section: &str) -> &[String] {
        self.sections
            .get(section)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// One phrase list, indexed by its first word for fast lookup.
#[derive(Debug, Clone, Default)]
struct PhraseSet {
    phrases: Vec<Phrase>,
    by_first_word: BTreeMap<String, Vec<usize>>,
}

impl PhraseSet {
    fn new(list: &[String]) -> Self {
        let mut set = Self::default();
        for text in list {
            let phrase = Phrase::new(text);
            // The seed lists some words in both languages ("serial", "BIOS"): count once.
            if set.phrases.iter().any(|p| p.words == phrase.words) {
                continue;
            }
            if let Some(first) = phrase.words.first() {
                set.by_first_word
                    .entry(first.folded.clone())
                    .or_default()
                    .push(set.phrases.len());
                set.phrases.push(phrase);
            }
        }
        set
    }

    /// Indices of the distinct phrases found in `words`.
    fn found(&self, words: &[Token]) -> Vec<usize> {
        let mut found = Vec::new();
        for at in 0..words.len() {
            let word = &words[at].folded;
            let singular = word.strip_suffix('s').unwrap_or(word);
            for key in [word.as_str(), singular] {
                for &index in self
                    .by_first_word
                    .get(key)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    if !found.contains(&index) && self.phrases[index].matches_at(words, at) {
                        found.push(index);
                    }
                }
                if singular.len() == word.len() {
                    break;
                }
            }
        }
        found
    }

    fn any(&self, words: &[Token]) -> bool {
        !self.found(words).is_empty()
    }
}

/// The keyword classifier, built once from [`KeywordLists`].
#[derive(Debug, Clone)]
pub struct Classifier {
    intents: [PhraseSet; 3],
    assemble_specific: PhraseSet,
    assemble_general: PhraseSet,
    warranty_concept: PhraseSet,
    warranty_check: PhraseSet,
}

impl Default for Classifier {
    /// The classifier over the compiled-in keyword lists.
    fn default() -> Self {
        Self::new(&KeywordLists::parse(DEFAULT_KEYWORDS).unwrap_or_default())
    }
}

/// The classifier's verdict on one message in its context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classification {
    /// The intent.
    pub intent: Intent,
    /// Confidence 0..1, two decimals.
    pub confidence: f32,
    /// Whether answering should retrieve knowledge first (seed's heuristics).
    pub need_retrieval_hint: bool,
    /// Whether the current message asks to check a product's warranty.
    pub warranty_check: bool,
    /// The intent with the second-highest score, when it scored at all.
    pub runner_up: Option<Intent>,
    /// Why, in one line (for debug logs).
    pub rationale: String,
}

impl Classifier {
    /// Prepares `lists` (sections `assemble_pc`, `shopping`, `warranty`,
    /// `assemble_pc.specific`, `assemble_pc.general`, `warranty.concept`, `warranty.check`).
    pub fn new(lists: &KeywordLists) -> Self {
        let set = |name: &str| PhraseSet::new(lists.section(name));
        Self {
            intents: [set("assemble_pc"), set("shopping"), set("warranty")],
            assemble_specific: set("assemble_pc.specific"),
            assemble_general: set("assemble_pc.general"),
            warranty_concept: set("warranty.concept"),
            warranty_check: set("warranty.check"),
        }
    }

    /// Classifies `current` given `previous` user messages (oldest first; the last three
    /// count).
    pub fn classify(&self, current: &str, previous: &[&str]) -> Classification {
        let current_words = tokens(current);
        let mut scores = [0f32; 3];
        let mut rationale = String::new();
        let context = previous
            .iter()
            .rev()
            .take(WEIGHTS.len() - 1)
            .map(|text| tokens(text));
        let messages = core::iter::once(current_words.clone()).chain(context);
        for (position, (words, weight)) in messages.zip(WEIGHTS).enumerate() {
            for (slot, set) in self.intents.iter().enumerate() {
                let found = set.found(&words);
                if found.is_empty() {
                    continue;
                }
                scores[slot] += weight * found.len() as f32;
                let label = if position == 0 { "current" } else { "context" };
                let phrases: Vec<&str> = found
                    .iter()
                    .map(|&i| set.phrases[i].text.as_str())
                    .collect();
                let _ = write!(
                    rationale,
                    "{label} {}: {}; ",
                    Intent::KNOWN[slot].as_str(),
                    phrases.join(", ")
                );
            }
        }
        let (best_slot, best) =
            scores
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, 0f32),
                    |acc, (i, s)| {
                        if s > acc.1 { (i, s) } else { acc }
                    },
                );
        let (second_slot, second) = scores
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, _)| *i != best_slot)
            .fold(
                (0, 0f32),
                |acc, (i, s)| if s > acc.1 { (i, s) } else { acc },
            );
        let runner_up = (second > 0.0).then_some(Intent::KNOWN[second_slot]);
        let warranty_check = self.warranty_check.any(&current_words);
        if best <= 0.0 {
            return Classification {
                intent: Intent::Unknown,
                confidence: 0.0,
                need_retrieval_hint: false,
                warranty_check,
                runner_up: None,
                rationale: "no keyword matched".into(),
            };
        }
        let intent = Intent::KNOWN[best_slot];
        let confidence = round2(best / (best + 0.4) * (0.5 + 0.5 * (best - second) / best));
        let need_retrieval_hint = self.need_retrieval(intent, &current_words);
        let _ = write!(rationale, "score {best:.2} vs {second:.2}");
        Classification {
            intent,
            confidence,
            need_retrieval_hint,
            warranty_check,
            runner_up,
            rationale,
        }
    }

    /// Seed 000's heuristics: shopping retrieves; warranty retrieves unless only a concept
    /// is asked about; assemble_pc retrieves unless only general principles are asked about.
    fn need_retrieval(&self, intent: Intent, words: &[Token]) -> bool {
        match intent {
            Intent::Shopping => true,
            Intent::Warranty => !self.warranty_concept.any(words) || self.warranty_check.any(words),
            Intent::AssemblePc => {
                let specific = self.assemble_specific.any(words) || words.iter().any(has_digit);
                specific || !self.assemble_general.any(words)
            }
            Intent::Unknown => false,
        }
    }
}

fn has_digit(word: &Token) -> bool {
    word.folded.bytes().any(|b| b.is_ascii_digit())
}

/// Rounds a non-negative number to two decimals.
pub fn round2(value: f32) -> f32 {
    (value * 100.0 + 0.5) as u32 as f32 / 100.0
}

/// A confidence as a JSON number with two decimals (`0.83`, not `0.8299999833106995`).
pub fn confidence_json(confidence: f32) -> serde_json::Value {
    let cents = (confidence * 100.0 + 0.5) as u32;
    serde_json::Value::from(f64::from(cents) / 100.0)
}

/// The seed's one-line JSON debug log of a classification:
/// `{intent, confidence, need_retrieval, clarify_needed, first_clarify_question?,
/// conversation_id, user_id}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassificationLog {
    /// The intent.
    pub intent: Intent,
    /// Its confidence.
    pub confidence: f32,
    /// The retrieval hint.
    pub need_retrieval: bool,
    /// Whether the turn asks a clarifying question.
    pub clarify_needed: bool,
    /// The question asked, when clarifying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_clarify_question: Option<String>,
    /// The conversation.
    pub conversation_id: String,
    /// The visitor, when known.
    pub user_id: Option<String>,
}

impl ClassificationLog {
    /// The log line.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|_| format!("{{\"intent\":\"{}\"}}", self.intent.as_str()))
    }
}

#[cfg(test)]
mod tests;
