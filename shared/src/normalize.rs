//! Text normalisation for matching: lower-casing, Vietnamese diacritic folding, tokens and
//! phrase matching.
//!
//! Vietnamese is matched *with and without diacritics*: a word the visitor typed without
//! any diacritics (`bao hanh`) matches the keyword folded (`bảo hành`); a word typed with
//! diacritics must match the keyword's letters and tone exactly, so `mưa` (rain) does not
//! match `mua` (buy). Tone marks are compared per syllable, so both spellings `hóa`/`hoá`
//! match, and decomposed input (combining marks, as some keyboards send) is understood.

use alloc::string::String;
use alloc::vec::Vec;

/// Vowel families: the six tone forms (none, sắc, huyền, hỏi, ngã, nặng) and the letter
/// they share.
const FAMILIES: [(&str, char); 12] = [
    ("aáàảãạ", 'a'),
    ("ăắằẳẵặ", 'ă'),
    ("âấầẩẫậ", 'â'),
    ("eéèẻẽẹ", 'e'),
    ("êếềểễệ", 'ê'),
    ("iíìỉĩị", 'i'),
    ("oóòỏõọ", 'o'),
    ("ôốồổỗộ", 'ô'),
    ("ơớờởỡợ", 'ơ'),
    ("uúùủũụ", 'u'),
    ("ưứừửữự", 'ư'),
    ("yýỳỷỹỵ", 'y'),
];

/// A lower-case character's letter without tone, and its tone (0 = none).
fn split_tone(c: char) -> (char, u8) {
    if c.is_ascii() {
        return (c, 0);
    }
    for (forms, letter) in FAMILIES {
        if let Some(tone) = forms.chars().position(|form| form == c) {
            return (letter, tone as u8);
        }
    }
    (c, 0)
}

/// The ASCII letter under a Vietnamese letter (`ư` → `u`, `đ` → `d`); other characters
/// unchanged.
fn base_letter(c: char) -> char {
    match c {
        'ă' | 'â' => 'a',
        'ê' => 'e',
        'ô' | 'ơ' => 'o',
        'ư' => 'u',
        'đ' => 'd',
        other => other,
    }
}

/// Applies a combining mark (U+0300–U+036F) to a token being built.
fn apply_combining(mark: char, letters: &mut String, tone: &mut u8) {
    let tone_of = match mark {
        '\u{301}' => 1,
        '\u{300}' => 2,
        '\u{309}' => 3,
        '\u{303}' => 4,
        '\u{323}' => 5,
        _ => 0,
    };
    if tone_of != 0 {
        *tone = tone_of;
        return;
    }
    let Some(last) = letters.pop() else { return };
    let shaped = match (last, mark) {
        ('a', '\u{302}') => 'â',
        ('e', '\u{302}') => 'ê',
        ('o', '\u{302}') => 'ô',
        ('a', '\u{306}') => 'ă',
        ('o', '\u{31b}') => 'ơ',
        ('u', '\u{31b}') => 'ư',
        (other, _) => other,
    };
    letters.push(shaped);
}

fn is_combining(c: char) -> bool {
    ('\u{300}'..='\u{36f}').contains(&c)
}

/// One normalised word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Lower-case letters without tone marks, Vietnamese letter shapes kept (`bảo` → `bao`,
    /// `được` → `đươc`).
    pub letters: String,
    /// The syllable's tone: 0 none, 1 sắc, 2 huyền, 3 hỏi, 4 ngã, 5 nặng.
    pub tone: u8,
    /// Fully folded to ASCII where possible (`được` → `duoc`).
    pub folded: String,
}

impl Token {
    /// Whether the word carries any Vietnamese diacritic (tone or letter shape).
    pub fn is_marked(&self) -> bool {
        self.tone != 0 || self.letters != self.folded
    }

    /// Whether this (visitor's) word matches keyword word `keyword`: folded when the visitor
    /// typed no diacritics, exactly (letters and tone) otherwise. An ASCII keyword also
    /// matches its plural (`spec` ↔ `specs`).
    pub fn matches(&self, keyword: &Token) -> bool {
        if self.is_marked() {
            return self.tone == keyword.tone && self.letters == keyword.letters;
        }
        self.folded == keyword.folded || is_plural_of(&self.folded, &keyword.folded)
    }

    /// Whether the word is made only of ASCII digits.
    pub fn is_number(&self) -> bool {
        !self.folded.is_empty() && self.folded.bytes().all(|b| b.is_ascii_digit())
    }
}

fn is_plural_of(word: &str, keyword: &str) -> bool {
    word.len() == keyword.len() + 1
        && word.ends_with('s')
        && word.starts_with(keyword)
        && keyword.bytes().all(|b| b.is_ascii_alphabetic())
        && keyword.len() > 2
}

/// Splits `text` into normalised words: runs of letters, digits and inner hyphens
/// (`mini-itx`, `i5-12400f`); everything else separates words.
pub fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut letters = String::new();
    let mut tone = 0u8;
    let flush = |letters: &mut String, tone: &mut u8, out: &mut Vec<Token>| {
        let word = letters.trim_matches('-');
        if !word.is_empty() {
            let folded = word.chars().map(base_letter).collect();
            out.push(Token {
                letters: word.into(),
                tone: *tone,
                folded,
            });
        }
        letters.clear();
        *tone = 0;
    };
    for c in text.chars() {
        if is_combining(c) {
            apply_combining(c, &mut letters, &mut tone);
        } else if c.is_alphanumeric() || (c == '-' && !letters.is_empty()) {
            for lower in c.to_lowercase() {
                let (letter, t) = split_tone(lower);
                if t != 0 {
                    tone = t;
                }
                letters.push(letter);
            }
        } else {
            flush(&mut letters, &mut tone, &mut out);
        }
    }
    flush(&mut letters, &mut tone, &mut out);
    out
}

/// `text` lower-cased and folded to ASCII where possible, words separated by one space.
pub fn fold(text: &str) -> String {
    let mut out = String::new();
    for token in tokens(text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&token.folded);
    }
    out
}

/// A keyword phrase: one or more words matched in sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    /// The phrase as written in the keyword list.
    pub text: String,
    /// Its words.
    pub words: Vec<Token>,
}

impl Phrase {
    /// Parses a keyword phrase.
    pub fn new(text: &str) -> Self {
        Self {
            text: text.into(),
            words: tokens(text),
        }
    }

    /// Whether the phrase occurs in `words` (visitor text) starting at `at`.
    pub fn matches_at(&self, words: &[Token], at: usize) -> bool {
        !self.words.is_empty()
            && words.get(at..at + self.words.len()).is_some_and(|window| {
                window
                    .iter()
                    .zip(&self.words)
                    .all(|(word, keyword)| word.matches(keyword))
            })
    }

    /// Whether the phrase occurs anywhere in `words`.
    pub fn occurs_in(&self, words: &[Token]) -> bool {
        (0..words.len()).any(|at| self.matches_at(words, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(text: &str, keyword: &str) -> bool {
        Phrase::new(keyword).occurs_in(&tokens(text))
    }

    #[test]
    fn folds_vietnamese() {
        assert_eq!(fold("Bảo Hành  ĐƯỢC không?"), "bao hanh duoc khong");
        assert_eq!(fold("Kiểm tra: SN-123."), "kiem tra sn-123");
    }

    #[test]
    fn matches_with_and_without_diacritics() {
        assert!(matches("tôi muốn kiểm tra bảo hành", "bảo hành"));
        assert!(matches("toi muon kiem tra bao hanh", "bảo hành"));
        assert!(matches("BẢO HÀNH", "bảo hành"));
        assert!(matches("bảo hanh", "bảo hành"));
        assert!(!matches("trời mưa", "mua"));
        assert!(matches("muốn mua", "mua"));
        assert!(matches("bao hành", "bảo hành"));
    }

    #[test]
    fn tone_placement_and_combining_marks() {
        assert!(matches("hoá đơn", "hóa đơn"));
        // "hóa đơn" typed with combining marks (NFD).
        assert!(matches("ho\u{301}a đo\u{31b}n", "hóa đơn"));
        assert!(matches("gia\u{301} bao nhiêu", "giá"));
    }

    #[test]
    fn words_and_phrases() {
        assert!(matches("case mini-itx nào đẹp", "mini-itx"));
        assert!(matches("need a new GPU", "gpu"));
        assert!(matches("what specs do I need", "spec"));
        assert!(!matches("specification", "spec"));
        assert!(matches("chính sách 1 đổi 1", "1 đổi 1"));
        assert!(!matches("đổi 1", "1 đổi 1"));
    }
}
