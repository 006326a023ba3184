//! Language detection: Vietnamese by default, English when English dominates.
//!
//! Seed 000: the conversation's language is detected from the visitor's *first* message;
//! when unsure, Vietnamese. A message that explicitly asks for a language ("please answer
//! in English", "trả lời bằng tiếng Việt") switches it at any turn.
//!
//! Evidence, word by word:
//! - Vietnamese: a word with Vietnamese diacritics, or a common Vietnamese word typed
//!   without them ([`VI_WORDS`]: `cho minh hoi gia bao nhieu`);
//! - English: a common English word that is not also unaccented Vietnamese ([`EN_WORDS`]),
//!   and, for half as much, any other lower-case word that cannot be a Vietnamese syllable
//!   (`store`, `open`, `today`: clusters and endings Vietnamese does not have);
//! - none: names. Vietnamese place names ([`PLACE_NAMES`], in any case, with or without
//!   diacritics: `Đà Nẵng`, `da nang`, `DANANG`) and capitalised words inside a sentence (`Nguyen Van Minh`, `Đà Nẵng`,
//!   `iPhone 15 Pro Max`), or a run of capitalised words opening one (`Anh Tuan from …`),
//!   are names, not language: an English message naming Ho Chi Minh City stays English.
//!   In a message written mostly in capitals, capitals say nothing and this is skipped.
//!
//! English wins when its evidence is at least one word and more than twice the Vietnamese.
//!
//! The word lists are in `words`.

use alloc::vec::Vec;

use crate::conversation::Language;
use crate::normalize::{Phrase, Word, for_each_word, tokens};

mod words;

use words::{ASK_EN, ASK_VI};
pub use words::{EN_WORDS, PLACE_NAMES, VI_WORDS};

fn in_list(word: &Word<'_>, list: &[&str]) -> bool {
    !word.is_marked() && list.contains(&word.folded)
}

/// One word as the visitor wrote it, with its normalised form.
struct Written<'a> {
    word: Word<'a>,
    /// Starts with a capital letter.
    capitalised: bool,
    /// Two or more letters, all capitals.
    shouted: bool,
    /// Has a capital after a lower-case letter (`iPhone`, `MacBook`).
    camel: bool,
    /// First word of a sentence.
    sentence_start: bool,
    /// Has a letter.
    lettered: bool,
}

/// The language `text` is written in: English when English clearly dominates (more than
/// twice the Vietnamese evidence), Vietnamese otherwise — including when unsure. See the
/// module docs for what counts.
pub fn detect(text: &str) -> Language {
    let words = tokens(text);
    let mut written: Vec<Written<'_>> = Vec::with_capacity(words.len());
    let mut index = 0;
    for_each_raw_word(text, |raw, sentence_start| {
        // The normalised words of this written word (usually one).
        let mut count = 0;
        for_each_word(raw, |_| count += 1);
        let letters = || raw.chars().filter(|c| c.is_alphabetic());
        let capitalised = letters().next().is_some_and(char::is_uppercase);
        let shouted = letters().count() >= 2 && letters().all(char::is_uppercase);
        let camel = letters()
            .zip(letters().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        for k in 0..count {
            if let Some(word) = words.get(index) {
                written.push(Written {
                    word,
                    capitalised,
                    shouted,
                    camel,
                    sentence_start: sentence_start && k == 0,
                    lettered: letters().next().is_some(),
                });
            }
            index += 1;
        }
    });
    let names = names(&words, &written);
    let (mut vi, mut en) = (0f32, 0f32);
    for (w, is_name) in written.iter().zip(names) {
        let word = &w.word;
        if in_list(word, EN_WORDS) && !is_name.place {
            en += 1.0;
        } else if is_name.any() {
            continue;
        } else if word.is_marked() || in_list(word, VI_WORDS) {
            vi += 1.0;
        } else if !w.shouted && !w.camel && foreign_to_vietnamese(word.folded) {
            en += 0.5;
        }
    }
    if en >= 1.0 && en > 2.0 * vi {
        Language::En
    } else {
        Language::Vi
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Name {
    /// Part of a known place name.
    place: bool,
    /// A capitalised word that names someone or something.
    proper: bool,
}

impl Name {
    fn any(self) -> bool {
        self.place || self.proper
    }
}

/// Which words are names (see the module docs).
fn names(words: &crate::normalize::Tokens, written: &[Written<'_>]) -> Vec<Name> {
    let mut names = alloc::vec![Name::default(); written.len()];
    // Folded, so `Đà Nẵng`, `da nang` and `DA NANG` all match `da nang`.
    for at in 0..written.len() {
        let Some(first) = words.get(at) else {
            continue;
        };
        for place in PLACE_NAMES {
            // Most places are ruled out by their first word, before anything is counted.
            if place
                .split(' ')
                .next()
                .is_none_or(|part| first.folded != part)
            {
                continue;
            }
            let length = place.split(' ').count();
            let matches = place
                .split(' ')
                .enumerate()
                .all(|(k, part)| words.get(at + k).is_some_and(|w| w.folded == part));
            if matches {
                for name in names.iter_mut().skip(at).take(length) {
                    name.place = true;
                }
            }
        }
    }
    // In a message written mostly in capitals (fewer than a quarter of the words inside
    // its sentences start lower-case), capitals say nothing.
    let inner = written.iter().filter(|w| !w.sentence_start && w.lettered);
    let lower = inner.clone().filter(|w| !w.capitalised).count();
    let inner = inner.count();
    if inner >= 2 && lower * 4 < inner {
        return names;
    }
    for (i, w) in written.iter().enumerate() {
        let next_capitalised = written
            .get(i + 1)
            .is_some_and(|n| n.capitalised && !n.sentence_start);
        // "I" is a pronoun, not a name.
        let pronoun = w.word.folded == "i";
        names[i].proper = w.capitalised && !pronoun && (!w.sentence_start || next_capitalised);
    }
    names
}

/// Calls `on_word` with each written word of `text` (letters, digits, combining marks,
/// inner hyphens) and whether it opens a sentence (first word, or after `.`, `!`, `?`,
/// `…` or a line break).
fn for_each_raw_word(text: &str, mut on_word: impl FnMut(&str, bool)) {
    let is_word_char = |c: char| c.is_alphanumeric() || ('\u{300}'..='\u{36f}').contains(&c);
    let mut start: Option<usize> = None;
    let mut sentence_start = true;
    for (at, c) in text.char_indices() {
        let inner_hyphen = c == '-' && start.is_some();
        if is_word_char(c) || inner_hyphen {
            if start.is_none() {
                start = Some(at);
            }
            continue;
        }
        if let Some(from) = start.take() {
            on_word(text[from..at].trim_end_matches('-'), sentence_start);
            sentence_start = false;
        }
        if matches!(c, '.' | '!' | '?' | '…' | '\n') {
            sentence_start = true;
        }
    }
    if let Some(from) = start {
        on_word(text[from..].trim_end_matches('-'), sentence_start);
    }
}

/// Whether a lower-case, unaccented word of three letters or more cannot be one Vietnamese
/// syllable: an initial consonant Vietnamese has, a vowel group it has and a final it allows
/// (`store`, `open`, `today` cannot; `tien`, `nguyen`, `khong` can).
pub fn foreign_to_vietnamese(folded: &str) -> bool {
    folded.len() >= 3
        && folded.bytes().all(|b| b.is_ascii_lowercase())
        && !could_be_vietnamese_syllable(folded)
}

const INITIALS: &[&str] = &[
    "ngh", "ng", "nh", "ch", "gh", "gi", "kh", "ph", "th", "tr", "qu", "b", "c", "d", "g", "h",
    "k", "l", "m", "n", "p", "r", "s", "t", "v", "x", "",
];
/// Vowel groups, unaccented (`ươi` → `uoi`).
const VOWELS: &[&str] = &[
    "a", "e", "i", "o", "u", "y", "ai", "ao", "au", "ay", "eo", "eu", "ia", "ie", "iu", "oa", "oe",
    "oi", "oo", "ua", "ue", "ui", "uo", "uu", "uy", "ye", "oai", "oao", "oay", "oeo", "uay", "uoi",
    "uou", "uya", "uye", "uyu", "ieu", "yeu",
];
const FINALS: &[&str] = &["", "c", "ch", "m", "n", "ng", "nh", "p", "t"];

fn could_be_vietnamese_syllable(word: &str) -> bool {
    INITIALS.iter().any(|initial| {
        let Some(rest) = word.strip_prefix(initial) else {
            return false;
        };
        VOWELS.iter().any(|vowel| {
            let Some(last) = rest.strip_prefix(vowel) else {
                return false;
            };
            FINALS.contains(&last) && rime_allowed(vowel, last)
        })
    })
}

/// Finals after a vowel group: none after a glide (`ai`, `ao`, …); `ch`/`nh` only after
/// `a`, `e`, `i`, `y`; `ng`/`c` never after `i`/`y`; `oo` only before `ng`/`c`.
fn rime_allowed(vowel: &str, last: &str) -> bool {
    let glide_end = vowel.len() >= 2
        && matches!(vowel.as_bytes()[vowel.len() - 1], b'i' | b'o' | b'u' | b'y')
        && !matches!(vowel, "uo" | "oo" | "uy");
    let ends = |set: &[u8]| set.contains(&vowel.as_bytes()[vowel.len() - 1]);
    match last {
        "" => vowel != "oo",
        _ if glide_end => false,
        "ch" | "nh" => ends(b"aeiy"),
        "ng" | "c" => !ends(b"iy"),
        _ => vowel != "oo",
    }
}

/// The language a visitor's message is answered in: the one it explicitly asks for;
/// else, on the visitor's first message, the one it is written in; else the
/// conversation's (`stored`). The one rule for every answer, the model's or a fixed one.
pub fn for_message(text: &str, stored: Language, first_user_message: bool) -> Language {
    requested(text).unwrap_or_else(|| {
        if first_user_message {
            detect(text)
        } else {
            stored
        }
    })
}

/// The language `text` explicitly asks for, if any ("in English", "bằng tiếng Việt").
pub fn requested(text: &str) -> Option<Language> {
    // Cheap check first: every request names the language.
    let mut names_one = false;
    crate::normalize::for_each_word(text, |word| {
        names_one |= matches!(word.folded, "english" | "vietnamese" | "anh" | "viet");
    });
    if !names_one {
        return None;
    }
    let words = tokens(text);
    let asks = |list: &[&str]| {
        list.iter()
            .any(|phrase| Phrase::new(phrase).occurs_in(&words))
    };
    if asks(ASK_EN) {
        Some(Language::En)
    } else if asks(ASK_VI) {
        Some(Language::Vi)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vietnamese_by_default() {
        assert_eq!(detect("Cho em hỏi giá RTX 4060"), Language::Vi);
        assert_eq!(detect("cho minh hoi gia card do hoa"), Language::Vi);
        assert_eq!(detect("SN: ABC123-XYZ"), Language::Vi);
        assert_eq!(detect("check bảo hành giúp mình"), Language::Vi);
        assert_eq!(detect(""), Language::Vi);
    }

    #[test]
    fn english_when_it_dominates() {
        assert_eq!(
            detect("I want to check the warranty of my laptop"),
            Language::En
        );
        assert_eq!(detect("Hello"), Language::En);
        assert_eq!(detect("What is the price of the RTX 4060 ạ"), Language::En);
        assert_eq!(detect("My laptop bị lỗi màn hình"), Language::Vi);
    }

    #[test]
    fn names_are_not_language() {
        for english in [
            "Is your store in Ho Chi Minh City open today?",
            "How long does shipping take from ha noi to da lat?",
            "My name is Nguyen Van Minh and I need help",
            "Is your shop in Đà Nẵng open today?",
            "Anh Tuan from your store said I should email you",
            "is your store in đà nẵng open on sunday",
        ] {
            assert_eq!(detect(english), Language::En, "{english}");
        }
        for vietnamese in [
            "Can Tho co chi nhanh khong shop",
            "Anh Tuấn ở chi nhánh Hà Nội tư vấn cho em rồi",
            "CHO MINH HOI GIA LAPTOP GAMING",
            "Cho Minh Hoi Gia Laptop Gaming Bao Nhieu",
            "iPhone 15 Pro Max còn hàng không",
            "hello ạ",
        ] {
            assert_eq!(detect(vietnamese), Language::Vi, "{vietnamese}");
        }
    }

    #[test]
    fn vietnamese_syllables() {
        for word in [
            "nguyen", "khong", "duoc", "nhieu", "truong", "huynh", "xoong", "gi",
        ] {
            assert!(could_be_vietnamese_syllable(word), "{word}");
        }
        for word in [
            "store", "open", "today", "much", "morning", "good", "your", "shop",
        ] {
            assert!(foreign_to_vietnamese(word), "{word}");
        }
    }

    #[test]
    fn explicit_requests() {
        assert_eq!(requested("Can you answer in English?"), Some(Language::En));
        assert_eq!(requested("trả lời bằng tiếng Việt nhé"), Some(Language::Vi));
        assert_eq!(requested("tôi không nói được tiếng Anh"), None);
    }
}
