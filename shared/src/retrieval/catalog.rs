//! A shop's catalog vocabulary, learned from its knowledge documents when they are indexed:
//! product names, brands, categories and models, so the `shop` classifier knows what the
//! merchant sells ("son dưỡng môi", "CeraVe", "Vivobook", "27GP850") without a keyword
//! list written for that shop.
//!
//! Pure and bounded: [`document_terms`] reads one document (at most
//! [`MAX_DOCUMENT_TERMS`] terms of at most [`MAX_TERM_CHARS`] characters), [`merge_terms`]
//! joins a site's documents (at most [`MAX_SITE_TERMS`], each document contributing in
//! turn), [`encode`] / [`decode`] store them as a JSON array. The edge stores a
//! document's terms with the document and the merged terms with the site.
//!
//! What is read as a catalog entry: a line or sentence with a `:` — its name before the
//! colon ("Sữa rửa mặt CeraVe Foaming Cleanser 236ml: 320.000đ") gives its category (the
//! words before the first capitalised or numbered one, "Sữa rửa mặt"), its brand and
//! model ("CeraVe Foaming Cleanser", cut at the first specification such as "236ml"), and
//! each brand word and model code. Short titles and `#` headings give categories ("Chống
//! nắng"). Elsewhere only brand words (capitalised, not first in the sentence) and model
//! codes (letters with digits, "G102", "i5-12400F") are taken. Policies (warranty,
//! shipping, payment, returns) are not products and are left out.
//!
//! ```
//! use concierge_core::retrieval::catalog::document_terms;
//! let terms = document_terms("Trang điểm", "Son dưỡng môi Laneige Lip Sleeping Mask 20g: 390.000đ.");
//! assert!(terms.iter().any(|t| t == "Son dưỡng môi"));
//! assert!(terms.iter().any(|t| t == "Laneige"));
//! ```

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::normalize::fold;

/// Most terms taken from one document.
pub const MAX_DOCUMENT_TERMS: usize = 120;
/// Most terms a site keeps.
pub const MAX_SITE_TERMS: usize = 400;
/// Longest term, in characters.
pub const MAX_TERM_CHARS: usize = 48;
/// Most words in a category or brand-and-model term.
const MAX_PHRASE_WORDS: usize = 4;

/// Folded phrases that mark a policy or a price, not a product.
const NOT_PRODUCTS: &[&str] = &[
    "chinh sach",
    "bao hanh",
    "giao hang",
    "van chuyen",
    "doi tra",
    "thanh toan",
    "lien he",
    "huong dan",
    "gioi thieu",
    "mien phi",
    "phu hop",
    "policy",
    "warranty",
    "shipping",
    "delivery",
    "payment",
    "returns",
    "contact",
    "faq",
];

/// Folded words never taken alone (common words written capitalised in catalogs).
const NOT_ALONE: &[&str] = &[
    "the", "and", "for", "with", "new", "plus", "pro", "max", "mini", "super", "ultra", "gold",
    "silver", "bronze", "black", "white", "red", "blue", "green", "pink", "size", "set", "combo",
    "series", "edition", "version", "inch", "vnd", "usd", "gia", "chi", "tu", "den", "cho", "voi",
    "va", "hang", "san", "pham", "loai", "mau", "moi", "tot", "dong", "trieu", "nghin",
];

/// Units a number is written with in specifications ("16GB", "650W", "236ml").
const UNITS: &[&str] = &[
    "gb", "tb", "mb", "w", "ml", "l", "g", "kg", "mg", "mah", "hz", "khz", "inch", "in", "k", "mm",
    "cm", "m", "p", "d", "đ", "v", "h", "fps", "x", "vnd",
];

/// The catalog terms of one document (title and content), in the order found.
pub fn document_terms(title: &str, content: &str) -> Vec<String> {
    let mut terms = Terms::default();
    terms.heading(title);
    for line in content.lines() {
        let line = line.trim();
        if let Some(heading) = line.strip_prefix('#') {
            terms.heading(heading.trim_start_matches('#'));
            continue;
        }
        for sentence in sentences(line) {
            match sentence.split_once(':') {
                Some((name, _)) => terms.entry(name),
                None => terms.brands(sentence, true),
            }
        }
    }
    terms.out
}

/// A site's terms from its documents' terms: each document in turn contributes its next
/// term, duplicates (folded) dropped, at most [`MAX_SITE_TERMS`].
pub fn merge_terms<'a, I>(documents: I) -> Vec<String>
where
    I: IntoIterator<Item = &'a [String]>,
{
    let lists: Vec<&[String]> = documents.into_iter().collect();
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
    'rounds: for round in 0..longest {
        for list in &lists {
            let Some(term) = list.get(round) else {
                continue;
            };
            let folded = fold(term);
            if folded.is_empty() || seen.contains(&folded) {
                continue;
            }
            seen.push(folded);
            out.push(term.clone());
            if out.len() == MAX_SITE_TERMS {
                break 'rounds;
            }
        }
    }
    out
}

/// Terms as stored: a JSON array of strings.
pub fn encode(terms: &[String]) -> String {
    serde_json::to_string(terms).unwrap_or_else(|_| "[]".into())
}

/// Stored terms (anything but a JSON array of strings reads as none; bounds re-applied).
pub fn decode(stored: &str) -> Vec<String> {
    let terms: Vec<String> = serde_json::from_str(stored).unwrap_or_default();
    terms
        .into_iter()
        .filter(|t| !t.trim().is_empty() && t.chars().count() <= MAX_TERM_CHARS)
        .take(MAX_SITE_TERMS)
        .collect()
}

/// Sentences of a line: split at `.`, `;`, `•` and `|` followed by a space (or at the end),
/// so prices such as "18.990.000" stay whole.
fn sentences(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    core::iter::from_fn(move || {
        loop {
            if rest.is_empty() {
                return None;
            }
            let cut = rest.char_indices().find(|&(i, c)| {
                matches!(c, '.' | ';' | '•' | '|')
                    && rest[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_none_or(char::is_whitespace)
            });
            let (sentence, next) = match cut {
                Some((i, c)) => (&rest[..i], &rest[i + c.len_utf8()..]),
                None => (rest, ""),
            };
            rest = next;
            let sentence = sentence.trim();
            if !sentence.is_empty() {
                return Some(sentence);
            }
        }
    })
}

#[derive(Default)]
struct Terms {
    out: Vec<String>,
    seen: Vec<String>,
}

impl Terms {
    fn push(&mut self, term: &str) {
        let term = term.trim_matches(|c: char| !c.is_alphanumeric());
        if term.is_empty() || term.chars().count() > MAX_TERM_CHARS {
            return;
        }
        if self.out.len() >= MAX_DOCUMENT_TERMS {
            return;
        }
        let folded = fold(term);
        let padded = alloc::format!(" {folded} ");
        let policy = NOT_PRODUCTS
            .iter()
            .any(|p| padded.contains(&alloc::format!(" {p} ")));
        if folded.is_empty() || policy || self.seen.contains(&folded) {
            return;
        }
        self.seen.push(folded);
        self.out.push(term.to_string());
    }

    /// A title or heading: a category when short.
    fn heading(&mut self, text: &str) {
        let words: Vec<&str> = text.split_whitespace().collect();
        if !words.is_empty() && words.len() <= MAX_PHRASE_WORDS + 1 {
            self.push(&words.join(" "));
        }
        self.brands(text, true);
    }

    /// A catalog entry's name: category, brand and model, brand words and model codes.
    fn entry(&mut self, name: &str) {
        let name = name.split('(').next().unwrap_or(name);
        let words: Vec<&str> = name.split_whitespace().collect();
        if words.is_empty() || words.len() > 12 {
            self.brands(name, true);
            return;
        }
        // The category: the first word and the lower-case words after it.
        let category_end = 1 + words[1..]
            .iter()
            .take_while(|w| !starts_upper(w) && !w.chars().any(|c| c.is_ascii_digit()))
            .count();
        let category_end = category_end.min(MAX_PHRASE_WORDS);
        if !is_spec(words[0]) {
            self.push(&words[..category_end].join(" "));
        }
        // Brand and model: what follows, up to the first specification.
        let model: Vec<&str> = words[category_end..]
            .iter()
            .copied()
            .take_while(|w| !is_spec(w))
            .take(MAX_PHRASE_WORDS)
            .collect();
        if model.len() > 1 {
            self.push(&model.join(" "));
        }
        self.brands(name, true);
    }

    /// Brand words (capitalised; the first word of a sentence only when `skip_first` is
    /// false) and model codes.
    fn brands(&mut self, text: &str, skip_first: bool) {
        let words = text
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '/' | '+' | '"'))
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty());
        for (i, word) in words.enumerate() {
            if is_spec(word) {
                continue;
            }
            let letters = word.chars().filter(|c| c.is_alphabetic()).count();
            let code = letters > 0 && word.chars().any(|c| c.is_ascii_digit()) && word.len() >= 3;
            let brand = starts_upper(word) && letters >= 3 && !(skip_first && i == 0);
            let folded = fold(word);
            if (code || brand) && !NOT_ALONE.contains(&folded.as_str()) {
                self.push(word);
            }
        }
    }
}

fn starts_upper(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// A number with a unit ("16GB", "650W", "2K", "1080p", "2x8GB") or a price
/// ("8.490.000"). A plain number is not: in a name it is a model number ("RTX 4060").
fn is_spec(word: &str) -> bool {
    let lower = word.to_lowercase();
    let lower = lower.trim_matches(|c: char| !c.is_alphanumeric());
    if !lower.is_empty() && lower.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let digits =
        lower.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',' || c == 'x');
    if digits.len() == lower.len() {
        return false;
    }
    digits.is_empty() || UNITS.contains(&digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_give_categories_brands_and_models() {
        let terms = document_terms(
            "Chăm sóc da",
            "Sữa rửa mặt CeraVe Foaming Cleanser 236ml: 320.000đ, cho da dầu.\n\
             Card đồ họa RTX 4060 8GB: 8.490.000 VND. Chuột Logitech G102: 399.000 VND.",
        );
        for expected in [
            "Chăm sóc da",
            "Sữa rửa mặt",
            "CeraVe Foaming Cleanser",
            "CeraVe",
            "Card đồ họa",
            "RTX 4060",
            "RTX",
            "Chuột",
            "Logitech G102",
            "G102",
        ] {
            assert!(terms.iter().any(|t| t == expected), "{expected}: {terms:?}");
        }
        for absent in ["236ml", "8GB", "320.000đ", "VND", "8.490.000"] {
            assert!(!terms.iter().any(|t| t == absent), "{absent}: {terms:?}");
        }
    }

    #[test]
    fn policies_are_not_products() {
        let terms = document_terms(
            "Chính sách bảo hành",
            "Sản phẩm được bảo hành theo số serial. Giao hàng: toàn quốc 2–4 ngày.",
        );
        assert!(terms.is_empty(), "{terms:?}");
    }

    #[test]
    fn merged_terms_are_bounded_and_shared_fairly() {
        let a: Vec<String> = (0..500).map(|i| alloc::format!("Alpha{i}")).collect();
        let b = alloc::vec![String::from("Beta"), String::from("alpha0")];
        let merged = merge_terms([a.as_slice(), b.as_slice()]);
        assert_eq!(merged.len(), MAX_SITE_TERMS);
        assert_eq!(&merged[..3], ["Alpha0", "Beta", "Alpha1"]);
        assert_eq!(decode(&encode(&merged)), merged);
        assert!(decode("not json").is_empty());
    }
}
