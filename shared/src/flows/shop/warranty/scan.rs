//! The scan of a message's words: tokens, labels, and what a word is when it is no serial.

use alloc::string::String;
use alloc::vec::Vec;

use super::words::{
    FILLERS, MAX_FILLERS, MAX_LABEL_WORDS, MAX_NAME_WORDS, OTHER_LABELS, POLITE, PRODUCT_WORDS,
    UNITS,
};
use super::{NOT_SERIALS, SERIAL_LABELS, is_valid_serial};
use crate::normalize::fold;

/// Whether `word` is a serial and not an ordinary word.
fn is_serial_like(word: &str) -> bool {
    let capitals = word.bytes().all(|b| b.is_ascii_uppercase() || b == b'-');
    is_valid_serial(word)
        && (has_digit(word) || capitals)
        && !NOT_SERIALS
            .iter()
            .any(|stop| stop.eq_ignore_ascii_case(word))
}

fn has_digit(word: &str) -> bool {
    word.bytes().any(|b| b.is_ascii_digit())
}

/// `12-08-2024`, `12-8`.
fn is_date(word: &str) -> bool {
    let mut parts = word.split('-');
    let lengths = [parts.next(), parts.next(), parts.next(), parts.next()].map(|p| p.map(str::len));
    let numeric = word
        .split('-')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    numeric
        && matches!(
            lengths,
            [Some(1..=2), Some(1..=2), Some(2..=4) | None, None]
        )
}

/// `10h`, `10h30`, `9g15` (Vietnamese clock times).
fn is_time(word: &str) -> bool {
    let hours = word.bytes().take_while(u8::is_ascii_digit).count();
    let rest = word.as_bytes().get(hours + 1..).unwrap_or_default();
    (1..=2).contains(&hours)
        && matches!(word.as_bytes().get(hours), Some(b'h' | b'H' | b'g' | b'G'))
        && rest.len() <= 2
        && rest.iter().all(u8::is_ascii_digit)
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || ",.;:!?()[]{}\"'“”‘’<>|=#*+".contains(c)
}

/// One word of the message as written.
#[derive(Debug)]
pub(super) struct Token<'a> {
    /// As written (hyphens at its ends trimmed).
    pub(super) text: &'a str,
    /// Lower-case, without diacritics, its parts joined by spaces (`S/N` → `s n`).
    folded: String,
    /// Only whitespace separates it from the previous word.
    glued: bool,
}

/// The words of `text`. Punctuation separates words, except `.` and `,` between digits
/// (`2.500.000` stays one word, which is no serial).
pub(super) fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut punctuated = false;
    let mut glued = true;
    let mut previous = ' ';
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map_or(' ', |&(_, n)| n);
        let grouping = matches!(c, '.' | ',') && previous.is_ascii_digit() && next.is_ascii_digit();
        previous = c;
        if is_separator(c) && !grouping {
            if let Some(from) = start.take() {
                add(text, from, at, glued, &mut out);
            }
            punctuated |= !c.is_whitespace();
        } else if start.is_none() {
            start = Some(at);
            glued = !punctuated;
            punctuated = false;
        }
    }
    if let Some(from) = start {
        add(text, from, text.len(), glued, &mut out);
    }
    out
}

fn add<'a>(text: &'a str, from: usize, to: usize, glued: bool, out: &mut Vec<Token<'a>>) {
    let word = text[from..to].trim_matches('-');
    if !word.is_empty() {
        out.push(Token {
            text: word,
            folded: fold(word),
            glued,
        });
    }
}

/// The length in words of the label of `labels` starting at word `at`, if one does.
fn label_at(tokens: &[Token<'_>], at: usize, labels: &[&[&str]]) -> Option<usize> {
    labels
        .iter()
        .filter(|label| {
            label.len() <= tokens.len().saturating_sub(at)
                && label
                    .iter()
                    .zip(&tokens[at..])
                    .all(|(word, token)| token.folded == *word)
        })
        .map(|label| label.len())
        .max()
}

/// The first serial after a serial label.
pub(super) fn after_label(tokens: &[Token<'_>]) -> Option<usize> {
    let mut at = 0;
    while at < tokens.len() {
        let Some(length) = label_at(tokens, at, SERIAL_LABELS) else {
            at += 1;
            continue;
        };
        let mut value = at + length;
        let mut fillers = 0;
        while value < tokens.len() {
            if let Some(length) = label_at(tokens, value, SERIAL_LABELS) {
                value += length;
            } else if fillers < MAX_FILLERS && FILLERS.contains(&tokens[value].folded.as_str()) {
                value += 1;
                fillers += 1;
            } else {
                break;
            }
        }
        if value < tokens.len() && is_serial_like(tokens[value].text) && !spaced(tokens, value) {
            return Some(value);
        }
        at = value;
    }
    None
}

/// The serial of a message that is nothing but one (and politeness).
pub(super) fn alone(tokens: &[Token<'_>]) -> Option<usize> {
    let mut others = (0..tokens.len()).filter(|&i| !POLITE.contains(&tokens[i].folded.as_str()));
    let (Some(only), None) = (others.next(), others.next()) else {
        return None;
    };
    let word = tokens[only].text;
    // Four digits or fewer alone may as well be a model number (`4060`): taken only when a
    // serial is awaited.
    let short_number = word.len() < 5 && word.bytes().all(|b| b.is_ascii_digit());
    (has_digit(word) && !short_number && is_serial_like(word) && !something_else(tokens, only))
        .then_some(only)
}

/// The first word with a digit that can be a serial, anywhere.
pub(super) fn anywhere(tokens: &[Token<'_>]) -> Option<usize> {
    (0..tokens.len()).find(|&i| {
        let word = tokens[i].text;
        has_digit(word) && is_serial_like(word) && !something_else(tokens, i)
    })
}

/// Whether word `i`, outside a label, is something other than a serial (see the module
/// docs).
fn something_else(tokens: &[Token<'_>], i: usize) -> bool {
    let word = tokens[i].text;
    is_date(word)
        || is_time(word)
        || product_name(tokens, i)
        || quantity(tokens, i)
        || amount_or_year(word)
        || named_otherwise(tokens, i)
        || spaced(tokens, i)
}

/// `iPhone15`, `RTX4090`, `i7-13700K`, `COVID19`; `4090` in `RTX 4090`, `G16` in
/// `ROG Strix G16`, `7800X3D` in `Ryzen 7 7800X3D`.
fn product_name(tokens: &[Token<'_>], i: usize) -> bool {
    product_shape(tokens[i].text) || follows_product_word(tokens, i, MAX_NAME_WORDS)
}

/// `iPhone15` (a capital after a lower-case letter), `RTX4090` (a product word, then
/// digits), `i7-13700K`.
fn product_shape(word: &str) -> bool {
    let bytes = word.as_bytes();
    let camel = bytes
        .windows(2)
        .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
    let letters = bytes.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let lower = word.to_ascii_lowercase();
    let product_prefix = letters > 0
        && bytes.get(letters).is_some_and(u8::is_ascii_digit)
        && PRODUCT_WORDS.contains(&&lower[..letters]);
    let intel = matches!(lower.as_bytes(), [b'i', b'3' | b'5' | b'7' | b'9', rest @ ..]
        if rest.is_empty() || rest[0] == b'-');
    camel || product_prefix || intel
}

/// Whether word `i` (with a digit) continues a product name: right after a product word, a
/// capitalised word that is no filler or label (`Strix G16`), or another part of the name
/// (looking at most `reach` words back).
fn follows_product_word(tokens: &[Token<'_>], i: usize, reach: usize) -> bool {
    if reach == 0 || i == 0 || !tokens[i].glued || !has_digit(tokens[i].text) {
        return false;
    }
    let previous = &tokens[i - 1];
    let folded = previous.folded.as_str();
    let capitalised = previous.text.bytes().all(|b| b.is_ascii_alphabetic())
        && previous.text.as_bytes()[0].is_ascii_uppercase()
        && !FILLERS.contains(&folded)
        && !POLITE.contains(&folded)
        && label_at(tokens, i - 1, SERIAL_LABELS).is_none();
    PRODUCT_WORDS.contains(&folded)
        || capitalised
        || product_shape(previous.text)
        || follows_product_word(tokens, i - 1, reach - 1)
}

/// `16GB`, `500k`, `2500000 đ`.
fn quantity(tokens: &[Token<'_>], i: usize) -> bool {
    let word = tokens[i].text;
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let unit = word[digits..].to_ascii_lowercase();
    if UNITS.contains(&unit.as_str()) {
        return true;
    }
    unit.is_empty()
        && tokens
            .get(i + 1)
            .is_some_and(|next| next.glued && UNITS.contains(&next.folded.as_str()))
}

/// A round amount (`2500000`, four digits or more ending in `000`) or a year (`2024`).
fn amount_or_year(word: &str) -> bool {
    if !word.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let round = word.len() >= 4 && word.ends_with("000");
    let year = word.len() == 4 && (word.starts_with("19") || word.starts_with("20"));
    round || year
}

/// Whether a label of something else (phone, order, price…) names word `i`: it stands
/// right before it, or right after it, past filler words.
fn named_otherwise(tokens: &[Token<'_>], i: usize) -> bool {
    let is_filler = |t: &Token<'_>| FILLERS.contains(&t.folded.as_str());
    let label_ends_at = |end: usize| {
        (end.saturating_sub(MAX_LABEL_WORDS)..end).any(|start| {
            label_at(tokens, start, OTHER_LABELS).is_some_and(|length| start + length == end)
        })
    };
    // Before: `sđt 0912345678`, `số điện thoại em là 0912345678`.
    for end in (1..=i).rev().take(MAX_FILLERS + 1) {
        if label_ends_at(end) {
            return true;
        }
        if !is_filler(&tokens[end - 1]) {
            break;
        }
    }
    // After: `0912345678 là sđt của em`.
    for start in (i + 1..tokens.len()).take(MAX_FILLERS + 1) {
        if label_at(tokens, start, OTHER_LABELS).is_some() {
            return true;
        }
        if !is_filler(&tokens[start]) {
            break;
        }
    }
    false
}

/// Whether word `i` is one piece of a code written with spaces: a neighbour (only
/// whitespace between) also looks like a piece of code (`F2LX K9P0 Q1`).
fn spaced(tokens: &[Token<'_>], i: usize) -> bool {
    let piece = |t: &Token<'_>| {
        let digits = t.text.bytes().take_while(u8::is_ascii_digit).count();
        let unit = t.text[digits..].to_ascii_lowercase();
        has_digit(t.text)
            && t.text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !(digits > 0 && UNITS.contains(&unit.as_str()))
    };
    let next = tokens.get(i + 1).is_some_and(|n| n.glued && piece(n));
    let previous = i > 0 && tokens[i].glued && piece(&tokens[i - 1]);
    next || previous
}
