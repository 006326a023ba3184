//! Recognising a visitor's request for a person, in Vietnamese and English.
//!
//! A request is a *person* — a phrase naming someone who is not the assistant ("nhân
//! viên", "người thật", "tư vấn viên", "a human", "someone", "customer service") — asked
//! for in one of two ways:
//! - after a verb, with at most a few small words between ("cho **gặp** em **nhân
//!   viên**", "**talk** to a **human**"). Contact verbs (gặp, nói chuyện, talk, speak,
//!   connect, …) take any person; wanting verbs (cần, muốn, need, want, …) only an
//!   unambiguous one ("cần **tư vấn viên**", but not "cần nhân viên": a shop may be
//!   hiring). A negation or a past marker just before the verb ("không muốn gặp", "đã nói
//!   chuyện với", "don't need") cancels it;
//! - or as the whole message with only small words around it ("người thật ạ", "real
//!   person please", "có tư vấn viên không"), for an unambiguous person; a plain one only
//!   when called ("nhân viên ơi").
//!
//! A person followed by a word that makes it someone else ("nhân viên **giao** hàng",
//! "human **resources**") is not one. Words match as [`normalize`](crate::normalize)
//! matches them: case-insensitively, with or without diacritics.
//!
//! The word lists are in `words.rs`; this module matches them.

use alloc::vec::Vec;

use crate::normalize::{Phrase, Tokens, Word, tokens};

mod words;

use words::{
    BARE, BARE_MAX_WORDS, BRIDGE, CONTACT, Clarity, GAP, MAX_BRIDGE, MAX_GAP, NEGATIONS,
    NOT_SUPPORT, PERSONS, WANT,
};

/// Whether `text` asks to talk to a person rather than the assistant (Vietnamese or
/// English; see the module docs for what counts).
pub fn asks_for_person(text: &str) -> bool {
    let words = tokens(text);
    if words.is_empty() {
        return false;
    }
    let lists = Lists::new();
    (0..words.len()).any(|at| {
        let Some((clarity, len)) = lists.person_at(&words, at) else {
            return false;
        };
        if Lists::any_at(&lists.not_support, &words, at + len) {
            return false;
        }
        lists.asked_before(&words, at, clarity) || lists.whole_message(&words, at, len, clarity)
    })
}

/// The word lists as phrases.
struct Lists {
    persons: Vec<(Phrase, Clarity)>,
    contact: Vec<Phrase>,
    want: Vec<Phrase>,
    negations: Vec<Phrase>,
    not_support: Vec<Phrase>,
    gap: Vec<Phrase>,
    bare: Vec<Phrase>,
    bridge: Vec<Phrase>,
}

fn phrases(list: &[&str]) -> Vec<Phrase> {
    list.iter().map(|p| Phrase::new(p)).collect()
}

impl Lists {
    fn new() -> Self {
        Self {
            persons: PERSONS.iter().map(|(p, c)| (Phrase::new(p), *c)).collect(),
            contact: phrases(CONTACT),
            want: phrases(WANT),
            negations: phrases(NEGATIONS),
            not_support: phrases(NOT_SUPPORT),
            gap: phrases(GAP),
            bare: phrases(BARE),
            bridge: phrases(BRIDGE),
        }
    }

    /// The longest person starting at word `at`: its clarity and length in words.
    fn person_at(&self, words: &Tokens, at: usize) -> Option<(Clarity, usize)> {
        self.persons
            .iter()
            .filter(|(phrase, _)| phrase.matches_at(words, at))
            .map(|(phrase, clarity)| (*clarity, phrase.words.len()))
            .max_by_key(|(_, len)| *len)
    }

    /// Whether a phrase of `list` starts at word `at`.
    fn any_at(list: &[Phrase], words: &Tokens, at: usize) -> bool {
        list.iter().any(|phrase| phrase.matches_at(words, at))
    }

    /// The length of the longest phrase of `list` ending just before word `end`.
    fn ending_before(list: &[Phrase], words: &Tokens, end: usize) -> Option<usize> {
        list.iter()
            .filter_map(|phrase| {
                let len = phrase.words.len();
                (len <= end && phrase.matches_at(words, end - len)).then_some(len)
            })
            .max()
    }

    /// Whether a verb asks for the person at word `at` (see the module docs).
    fn asked_before(&self, words: &Tokens, at: usize, clarity: Clarity) -> bool {
        let mut end = at;
        for _ in 0..=MAX_GAP {
            if let Some(len) = Self::ending_before(&self.contact, words, end) {
                return !self.negated(words, end - len);
            }
            if clarity == Clarity::Clear
                && let Some(len) = Self::ending_before(&self.want, words, end)
            {
                return !self.negated(words, end - len);
            }
            match Self::ending_before(&self.gap, words, end) {
                Some(len) => end -= len,
                None => return false,
            }
        }
        false
    }

    /// Whether a negation stands just before the verb starting at word `verb`, with only
    /// bridge words between.
    fn negated(&self, words: &Tokens, verb: usize) -> bool {
        let mut end = verb;
        for _ in 0..=MAX_BRIDGE {
            if Self::ending_before(&self.negations, words, end).is_some() {
                return true;
            }
            match Self::ending_before(&self.bridge, words, end) {
                Some(len) => end -= len,
                None => return false,
            }
        }
        false
    }

    /// Whether the person at `at..at + len` is the whole message but for small words: a
    /// clear person, or a plain one called ("nhân viên ơi").
    fn whole_message(&self, words: &Tokens, at: usize, len: usize, clarity: Clarity) -> bool {
        if words.len() > BARE_MAX_WORDS {
            return false;
        }
        let called = words.get(at + len).is_some_and(|w| is_word(&w, "ơi"));
        if clarity == Clarity::Plain && !called {
            return false;
        }
        let small = |word: Word<'_>| {
            self.bare
                .iter()
                .any(|p| p.words.get(0).is_some_and(|k| word.matches(&k)))
        };
        words
            .iter()
            .enumerate()
            .filter(|(i, _)| !(at..at + len).contains(i))
            .all(|(_, word)| small(word))
    }
}

/// Whether `word` is `keyword` (one word).
fn is_word(word: &Word<'_>, keyword: &str) -> bool {
    tokens(keyword).get(0).is_some_and(|k| word.matches(&k))
}

#[cfg(test)]
mod tests {
    use super::asks_for_person;

    #[test]
    fn plain_staff_is_not_a_request() {
        assert!(!asks_for_person("nhân viên"));
        assert!(!asks_for_person("nhân viên giao hàng chưa tới"));
        assert!(!asks_for_person("the staff was rude"));
    }

    #[test]
    fn asked_for_is() {
        assert!(asks_for_person("gặp nhân viên"));
        assert!(asks_for_person("talk to a human"));
        assert!(asks_for_person("nhân viên ơi"));
    }
}
