//! The keyword file and the phrase index the classifier matches with.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::normalize::{Phrase, Tokens, word_hash};

/// The compiled-in keyword lists.
pub const DEFAULT_KEYWORDS: &str = include_str!("../../../prompts/shop_intent_keywords.md");

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

/// The keyword lists the classifier uses, by section name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    AssemblePc,
    Shopping,
    Warranty,
    AssembleSpecific,
    AssembleGeneral,
    WarrantyConcept,
    WarrantyCheck,
    ShoppingAsk,
    ShoppingAbout,
    Product,
    AssembleMore,
    AssembleBuilding,
    WarrantyMore,
    SmallTalk,
}

impl List {
    /// The intent slot (assemble_pc 0, shopping 1, warranty 2) whose evidence the list
    /// holds, if any.
    pub(super) fn slot(self) -> Option<usize> {
        match self {
            Self::AssemblePc | Self::AssembleMore => Some(0),
            Self::Shopping | Self::ShoppingAsk | Self::ShoppingAbout | Self::Product => Some(1),
            Self::Warranty | Self::WarrantyMore => Some(2),
            _ => None,
        }
    }

    /// Whether the list is one of the seed's three intent lists.
    pub(super) fn is_seed(self) -> bool {
        matches!(self, Self::AssemblePc | Self::Shopping | Self::Warranty)
    }
}

const LISTS: [(List, &str); 14] = [
    (List::AssemblePc, "assemble_pc"),
    (List::Shopping, "shopping"),
    (List::Warranty, "warranty"),
    (List::AssembleSpecific, "assemble_pc.specific"),
    (List::AssembleGeneral, "assemble_pc.general"),
    (List::WarrantyConcept, "warranty.concept"),
    (List::WarrantyCheck, "warranty.check"),
    (List::ShoppingAsk, "shopping.ask"),
    (List::ShoppingAbout, "shopping.about"),
    (List::Product, "products"),
    (List::AssembleMore, "assemble_pc.more"),
    (List::AssembleBuilding, "assemble_pc.building"),
    (List::WarrantyMore, "warranty.more"),
    (List::SmallTalk, "small_talk"),
];

/// Every phrase of every list, indexed by the hash of its first folded word (integer
/// keys: lookups cost no string compares; a collision only costs a wasted phrase check).
#[derive(Debug, Clone, Default)]
pub(super) struct PhraseIndex {
    phrases: Vec<(List, Phrase)>,
    by_first_word: BTreeMap<u64, Vec<usize>>,
}

impl PhraseIndex {
    pub(super) fn new(lists: &KeywordLists) -> Self {
        let mut index = Self::default();
        for (list, name) in LISTS {
            for text in lists.section(name) {
                index.add(list, text);
            }
        }
        index
    }

    /// Adds `text` to `list` (a phrase already in the list is not added twice: the seed
    /// lists some words in both languages, "serial", "BIOS").
    pub(super) fn add(&mut self, list: List, text: &str) {
        let phrase = Phrase::new(text);
        let Some(first) = phrase.words.get(0) else {
            return;
        };
        let key = word_hash(first.folded);
        let duplicate = self.by_first_word.get(&key).is_some_and(|candidates| {
            candidates.iter().any(|&i| {
                let (l, p) = &self.phrases[i];
                *l == list && p.words == phrase.words
            })
        });
        if !duplicate {
            self.by_first_word
                .entry(key)
                .or_default()
                .push(self.phrases.len());
            self.phrases.push((list, phrase));
        }
    }

    /// The distinct phrases found in `words`, as indices with where each first occurs
    /// (start word, number of words).
    pub(super) fn found(&self, words: &Tokens) -> Vec<(usize, usize, usize)> {
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for (at, word) in words.iter().enumerate() {
            let folded = word.folded;
            let singular = folded.strip_suffix('s').filter(|s| !s.is_empty());
            for key in core::iter::once(folded).chain(singular) {
                let candidates = self
                    .by_first_word
                    .get(&word_hash(key))
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for &index in candidates {
                    if !found.iter().any(|f| f.0 == index)
                        && self.phrases[index].1.matches_at(words, at)
                        && !self.toneless_lookalike(index, &word)
                    {
                        found.push((index, at, self.phrases[index].1.words.len()));
                    }
                }
            }
        }
        found
    }

    /// Whether product phrase `index` is one word with diacritics that the visitor's `word`
    /// matched only once folded: typed without marks, a one-syllable noun is too often
    /// another word ("ban oi" is "bạn ơi", not "bàn"; "tui" is "tôi", not "túi"; "hom qua"
    /// is "hôm qua", not "quà"), so it names a product only when typed with its marks.
    fn toneless_lookalike(&self, index: usize, word: &crate::normalize::Word<'_>) -> bool {
        let (list, phrase) = &self.phrases[index];
        *list == List::Product
            && phrase.words.len() == 1
            && phrase
                .words
                .get(0)
                .is_some_and(|keyword| keyword.is_marked())
            && !word.is_marked()
    }

    /// Whether `text` is already a phrase of an intent's list other than the products, or
    /// small talk (a catalog term "Gaming" or "Premiere" is the seed's keyword, and "Shop"
    /// or "Bạn" in a shop's copy a word of greeting, not a product name).
    pub(super) fn is_intent_phrase(&self, text: &str) -> bool {
        let phrase = Phrase::new(text);
        let Some(first) = phrase.words.get(0) else {
            return false;
        };
        self.by_first_word
            .get(&word_hash(first.folded))
            .is_some_and(|candidates| {
                candidates.iter().any(|&i| {
                    let (list, p) = &self.phrases[i];
                    *list != List::Product
                        && (list.slot().is_some() || *list == List::SmallTalk)
                        && p.words == phrase.words
                })
            })
    }

    /// How many phrases the index holds.
    pub(super) fn len(&self) -> usize {
        self.phrases.len()
    }

    /// The list phrase `index` belongs to.
    pub(super) fn list_of(&self, index: usize) -> List {
        self.phrases[index].0
    }

    /// The phrase as written in the keyword file.
    pub(super) fn text_of(&self, index: usize) -> &str {
        &self.phrases[index].1.text
    }
}
