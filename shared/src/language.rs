//! Language detection: Vietnamese by default, English when English dominates.
//!
//! Seed 000: the conversation's language is detected from the visitor's *first* message;
//! when unsure, Vietnamese. A message that explicitly asks for a language ("please answer
//! in English", "trả lời bằng tiếng Việt") switches it at any turn.

use crate::conversation::Language;
use crate::normalize::{Phrase, Word, tokens};

/// Unaccented words that are Vietnamese (not English).
const VI_WORDS: &[&str] = &[
    "toi", "ban", "minh", "cho", "hoi", "gia", "mua", "cua", "la", "va", "duoc", "nhe", "em",
    "anh", "chi", "voi", "nay", "gi", "sao", "bao", "nhieu", "muon", "khong", "ko", "co", "thi",
    "roi", "nao", "dau", "nhung", "cac", "mot", "xin", "chao", "cam", "giup", "vui", "long",
    "hang", "kiem", "tra", "hanh", "lap", "rap", "cau", "hinh", "oi", "ah", "nhi", "vay", "nua",
    "nhat", "moi", "cung", "lam", "biet", "dang", "se", "da",
];

/// English words that are not also common unaccented Vietnamese.
const EN_WORDS: &[&str] = &[
    "i",
    "you",
    "your",
    "my",
    "is",
    "are",
    "am",
    "was",
    "were",
    "what",
    "how",
    "which",
    "where",
    "when",
    "why",
    "who",
    "want",
    "need",
    "would",
    "could",
    "should",
    "please",
    "hello",
    "hey",
    "thanks",
    "thank",
    "with",
    "and",
    "for",
    "of",
    "this",
    "that",
    "it",
    "does",
    "did",
    "have",
    "has",
    "about",
    "much",
    "many",
    "buy",
    "price",
    "check",
    "warranty",
    "order",
    "build",
    "help",
    "get",
    "know",
    "tell",
    "there",
    "here",
    "good",
    "best",
    "cheap",
    "new",
    "computer",
    "if",
    "will",
    "just",
    "some",
    "any",
    "from",
    "we",
    "our",
    "us",
    "be",
    "not",
    "yes",
    "okay",
    "still",
    "under",
    "expire",
    "number",
    "serial",
    "looking",
    "recommend",
    "gaming",
    "budget",
    "doing",
];

const ASK_EN: &[&str] = &[
    "in english",
    "speak english",
    "english please",
    "bằng tiếng anh",
    "nói tiếng anh",
    "dùng tiếng anh",
];
const ASK_VI: &[&str] = &[
    "in vietnamese",
    "speak vietnamese",
    "vietnamese please",
    "bằng tiếng việt",
    "nói tiếng việt",
    "dùng tiếng việt",
];

fn in_list(word: &Word<'_>, list: &[&str]) -> bool {
    !word.is_marked() && list.contains(&word.folded)
}

/// The language `text` is written in: English when English words clearly dominate (more
/// than twice the Vietnamese evidence), Vietnamese otherwise — including when unsure.
pub fn detect(text: &str) -> Language {
    let words = tokens(text);
    let vi = words
        .iter()
        .filter(|w| w.is_marked() || in_list(w, VI_WORDS))
        .count();
    let en = words.iter().filter(|w| in_list(w, EN_WORDS)).count();
    if en >= 1 && en > 2 * vi {
        Language::En
    } else {
        Language::Vi
    }
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
    fn explicit_requests() {
        assert_eq!(requested("Can you answer in English?"), Some(Language::En));
        assert_eq!(requested("trả lời bằng tiếng Việt nhé"), Some(Language::Vi));
        assert_eq!(requested("tôi không nói được tiếng Anh"), None);
    }
}
