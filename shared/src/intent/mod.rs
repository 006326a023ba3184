//! Intent classification for the `shop` template (seed 000, node 2 "Xác định mong đợi").
//!
//! Keywords come from `prompts/shop_intent_keywords.md` (the seed's bilingual lists). An
//! intent's score is the weighted count of its distinct keywords in the current message
//! and the three previous user messages:
//!
//! | message      | weight |
//! |--------------|--------|
//! | current      | 1.0    |
//! | previous     | 0.5    |
//! | two before   | 0.3    |
//! | three before | 0.2    |
//!
//! The current message weighs most: it decides among the intents it mentions (earlier
//! messages add weight to those), and only when it mentions none do the earlier messages
//! decide alone ("cái nào rẻ hơn?" after "mình muốn mua laptop" is still shopping).
//!
//! Beyond the seed's lists (issue 48), the current message's question shapes, the product
//! nouns of `[products]` and the site's catalog terms ([`Classifier::with_catalog`]) are
//! shopping evidence, and `[assemble_pc.more]` / `[warranty.more]` add to those intents
//! (the rules are on `Classifier::evidence`). A message made only of small talk is marked
//! as such ([`Classification::small_talk`]): nothing for the model to classify.
//!
//! With `best` and `second` the two highest scores, the confidence is
//! `best / (best + 0.4) × (0.5 + 0.5 × (best − second) / best)`, rounded to two decimals:
//! one keyword in the current message gives 0.71, a tie between two intents stays below
//! 0.5 (so the clarify loop asks), no keyword at all is `unknown` with confidence 0.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use serde::{Deserialize, Serialize};

use crate::normalize::{Tokens, tokens};

mod keywords;

pub use keywords::{DEFAULT_KEYWORDS, KeywordLists, KeywordsError};
use keywords::{List, PhraseIndex};

/// Most catalog terms a classifier takes from a site ([`Classifier::with_catalog`]).
pub const MAX_CATALOG_TERMS: usize = 600;

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

    /// Parses the seed's name (as [`as_str`](Self::as_str) writes it).
    pub fn parse(name: &str) -> Option<Self> {
        Self::KNOWN
            .into_iter()
            .chain([Self::Unknown])
            .find(|intent| intent.as_str() == name)
    }
}

/// The keyword classifier, built once from [`KeywordLists`].
#[derive(Debug, Clone)]
pub struct Classifier {
    index: PhraseIndex,
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
    /// Whether the current message is only small talk or numbers ("xin chào", "alo",
    /// "cảm ơn", "123"): nothing a model could classify better.
    pub small_talk: bool,
    /// The product, brand, model or category the current message names, when that counted
    /// as shopping evidence.
    pub product: Option<String>,
    /// Why, in one line (for debug logs).
    pub rationale: String,
}

impl Classifier {
    /// Prepares `lists` (sections `assemble_pc`, `shopping`, `warranty`,
    /// `assemble_pc.specific`, `assemble_pc.general`, `warranty.concept`, `warranty.check`).
    pub fn new(lists: &KeywordLists) -> Self {
        Self {
            index: PhraseIndex::new(lists),
        }
    }

    /// The same classifier, knowing a site's catalog vocabulary too: product names, brands,
    /// categories and models (see [`crate::retrieval::catalog`]). A term names a product
    /// the way `[products]` phrases do, unless it is already an intent's keyword ("Gaming",
    /// "Premiere"); at most [`MAX_CATALOG_TERMS`] are taken.
    #[must_use]
    pub fn with_catalog<'a>(&self, terms: impl IntoIterator<Item = &'a str>) -> Self {
        let mut classifier = self.clone();
        classifier.add_catalog(terms);
        classifier
    }

    /// Adds a site's catalog terms in place (as [`Self::with_catalog`], without a copy:
    /// what a turn's freshly built config does).
    pub fn add_catalog<'a>(&mut self, terms: impl IntoIterator<Item = &'a str>) {
        for term in terms.into_iter().take(MAX_CATALOG_TERMS) {
            if !too_short_to_name(term) && !self.index.is_intent_phrase(term) {
                self.index.add(List::Product, term);
            }
        }
    }

    /// How many phrases the classifier matches (its keyword lists and catalog terms).
    pub fn phrases(&self) -> usize {
        self.index.len()
    }

    /// Classifies `current` given `previous` user messages (oldest first; the last three
    /// count).
    pub fn classify(&self, current: &str, previous: &[&str]) -> Classification {
        let messages: Vec<Tokens> = core::iter::once(current)
            .chain(previous.iter().rev().take(WEIGHTS.len() - 1).copied())
            .map(tokens)
            .collect();
        let current_words = &messages[0];
        let current_found = self.index.found(current_words);
        // Per message (current first) and intent: the distinct keywords found.
        let mut product = None;
        let hits: Vec<[Vec<&str>; 3]> = messages
            .iter()
            .enumerate()
            .map(|(position, words)| {
                if position == 0 {
                    let (hits, named) = self.evidence(&current_found, true);
                    product = named;
                    hits
                } else {
                    self.evidence(&self.index.found(words), false).0
                }
            })
            .collect();
        // The current message decides among the intents it mentions; earlier messages add
        // weight to those, and decide alone only when it mentions none.
        let mentioned = hits[0].clone().map(|phrases| !phrases.is_empty());
        let competes = |slot: usize| !mentioned.contains(&true) || mentioned[slot];
        let mut scores = [0f32; 3];
        let mut rationale = String::new();
        for (position, (per_intent, weight)) in hits.iter().zip(WEIGHTS).enumerate() {
            for (slot, phrases) in per_intent.iter().enumerate() {
                if phrases.is_empty() || !competes(slot) {
                    continue;
                }
                scores[slot] += weight * phrases.len() as f32;
                let label = if position == 0 { "current" } else { "context" };
                let intent = Intent::KNOWN[slot].as_str();
                let _ = write!(rationale, "{label} {intent}: {}; ", phrases.join(", "));
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
        let has = |list: List| {
            current_found
                .iter()
                .any(|&(i, _, _)| self.index.list_of(i) == list)
        };
        let warranty_check = has(List::WarrantyCheck);
        let small_talk = self.small_talk(current_words, &current_found);
        if best <= 0.0 {
            return Classification {
                intent: Intent::Unknown,
                confidence: 0.0,
                need_retrieval_hint: false,
                warranty_check,
                runner_up: None,
                small_talk,
                product,
                rationale: "no keyword matched".into(),
            };
        }
        let intent = Intent::KNOWN[best_slot];
        let confidence = round2(best / (best + 0.4) * (0.5 + 0.5 * (best - second) / best));
        let digits = current_words.iter().any(|word| word.has_digit());
        let need_retrieval_hint = need_retrieval(intent, has, digits);
        let _ = write!(rationale, "score {best:.2} vs {second:.2}");
        Classification {
            intent,
            confidence,
            need_retrieval_hint,
            warranty_check,
            runner_up,
            small_talk,
            product,
            rationale,
        }
    }

    /// One message's evidence per intent, and the product it names when that counts.
    ///
    /// Earlier messages weigh by the seed's lists alone. In the current message:
    /// - a phrase inside a longer one of another intent, or an added phrase inside any
    ///   longer one, does not count ("xuất hóa đơn" is not "hóa đơn"; "build pc" is not
    ///   also "build"; the "gaming" of a named "ghế gaming" or "PC Gaming AP-4060" is part
    ///   of a product's name);
    /// - the added assemble_pc and warranty phrases count;
    /// - when the message is not about building a PC, `[shopping.ask]` shapes count; and
    ///   when the seed's shopping list is silent and it is not about a warranty matter
    ///   either, a product, brand, model or category named counts once, with the
    ///   `[shopping.about]` shapes around it ("có … không", "loại nào tốt", "recommend").
    fn evidence(
        &self,
        found: &[(usize, usize, usize)],
        current: bool,
    ) -> ([Vec<&str>; 3], Option<String>) {
        let list = |i: usize| self.index.list_of(i);
        let inside = |(a, at, len): (usize, usize, usize)| {
            found.iter().any(|&(b, b_at, b_len)| {
                let (la, lb) = (list(a), list(b));
                b != a
                    && lb.slot().is_some()
                    && b_len > len
                    && b_at <= at
                    && at + len <= b_at + b_len
                    && (!la.is_seed() || la.slot() != lb.slot())
            })
        };
        let kept: Vec<usize> = found
            .iter()
            .filter(|&&(i, _, _)| list(i).slot().is_some() && (current || list(i).is_seed()))
            .filter(|&&f| !inside(f))
            .map(|&(i, _, _)| i)
            .collect();
        let any = |l: List| kept.iter().any(|&i| list(i) == l);
        let building = found
            .iter()
            .any(|&(i, _, _)| list(i) == List::AssembleBuilding);
        let seed_shopping = any(List::Shopping);
        let warranty = kept.iter().any(|&i| list(i).slot() == Some(2));
        let ask = current && !building;
        let named = ask && !seed_shopping && !warranty && any(List::Product);
        let mut hits: [Vec<&str>; 3] = Default::default();
        let mut product = None;
        for &i in &kept {
            let counts = match list(i) {
                List::ShoppingAsk => ask,
                List::ShoppingAbout => named,
                List::Product => named && product.is_none(),
                _ => true,
            };
            if !counts {
                continue;
            }
            if list(i) == List::Product {
                product = Some(self.index.text_of(i).into());
            }
            if let Some(slot) = list(i).slot() {
                hits[slot].push(self.index.text_of(i));
            }
        }
        (hits, product)
    }

    /// Whether the message is only small talk (greetings, thanks, politeness, "alo"),
    /// numbers or nothing: no question for anyone to classify.
    fn small_talk(&self, words: &Tokens, found: &[(usize, usize, usize)]) -> bool {
        (0..words.len()).all(|at| {
            let numeric = words
                .get(at)
                .is_some_and(|w| w.folded.bytes().all(|b| b.is_ascii_digit()));
            numeric
                || found.iter().any(|&(i, start, len)| {
                    self.index.list_of(i) == List::SmallTalk && start <= at && at < start + len
                })
        })
    }
}

/// Seed 000's heuristics: shopping retrieves; warranty retrieves unless only a concept is
/// asked about; assemble_pc retrieves unless only general principles are asked about (a
/// word with a digit — a model number, a budget — counts as specific).
/// Whether catalog term `term` is one word too short to name a product ("Q" and "A" of a
/// FAQ, "Ms"): fewer than three letters and no digit (a model code "X1" still names one).
fn too_short_to_name(term: &str) -> bool {
    let term = term.trim();
    !term.contains(char::is_whitespace)
        && term.chars().count() < 3
        && !term.chars().any(|c| c.is_ascii_digit())
}

fn need_retrieval(intent: Intent, has: impl Fn(List) -> bool, digits: bool) -> bool {
    match intent {
        Intent::Shopping => true,
        Intent::Warranty => !has(List::WarrantyConcept) || has(List::WarrantyCheck),
        Intent::AssemblePc => digits || has(List::AssembleSpecific) || !has(List::AssembleGeneral),
        Intent::Unknown => false,
    }
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
/// conversation_id}`. The seed also logged the `user_id`; this log does not: it goes to the
/// platform's log stream, which is not the place for who the visitor is, and the
/// conversation id already ties the line to what was said.
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
    /// `"model"` when the model classified the message (the rules left it uncertain);
    /// absent when the rules did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<&'static str>,
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
