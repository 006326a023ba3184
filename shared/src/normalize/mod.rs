//! Text normalisation for matching: lower-casing, Vietnamese diacritic folding, tokens and
//! phrase matching.
//!
//! Vietnamese is matched *with and without diacritics*: a word the visitor typed without
//! any diacritics (`bao hanh`) matches the keyword folded (`bảo hành`); a word typed with
//! diacritics must match the keyword's letters and tone exactly, so `mưa` (rain) does not
//! match `mua` (buy). Tone marks are compared per syllable, so both spellings `hóa`/`hoá`
//! match, and decomposed input (combining marks, as some keyboards send) is understood.

mod vietnamese;

use alloc::string::String;
use alloc::vec::Vec;

use vietnamese::vietnamese_letter;

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

/// Applies a combining mark (U+0300–U+036F) to the word being built: a tone mark sets
/// the tone, a shape mark changes the last letter (`a` + U+0302 → `â`).
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

/// One normalised word, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word<'a> {
    /// Lower-case letters without tone marks, Vietnamese letter shapes kept (`bảo` → `bao`,
    /// `được` → `đươc`).
    pub letters: &'a str,
    /// The syllable's tone: 0 none, 1 sắc, 2 huyền, 3 hỏi, 4 ngã, 5 nặng.
    pub tone: u8,
    /// Fully folded to ASCII where possible (`được` → `duoc`).
    pub folded: &'a str,
}

impl Word<'_> {
    /// Whether the word carries any Vietnamese diacritic (tone or letter shape).
    pub fn is_marked(&self) -> bool {
        self.tone != 0 || self.letters != self.folded
    }

    /// Whether this (visitor's) word matches keyword word `keyword`: folded when the visitor
    /// typed no diacritics, exactly (letters and tone) otherwise. An ASCII keyword also
    /// matches its plural (`spec` ↔ `specs`).
    pub fn matches(&self, keyword: &Word<'_>) -> bool {
        if self.is_marked() {
            return self.tone == keyword.tone && self.letters == keyword.letters;
        }
        self.folded == keyword.folded || is_plural_of(self.folded, keyword.folded)
    }

    /// Whether the word contains an ASCII digit.
    pub fn has_digit(&self) -> bool {
        self.folded.bytes().any(|b| b.is_ascii_digit())
    }
}

fn is_plural_of(word: &str, keyword: &str) -> bool {
    word.len() == keyword.len() + 1
        && word.ends_with('s')
        && word.starts_with(keyword)
        && keyword.bytes().all(|b| b.is_ascii_alphabetic())
        && keyword.len() > 2
}

fn flush(
    letters: &mut String,
    folded: &mut String,
    tone: &mut u8,
    on_word: &mut impl FnMut(Word<'_>),
) {
    while letters.ends_with('-') {
        letters.pop();
        folded.pop();
    }
    if !letters.is_empty() {
        on_word(Word {
            letters,
            tone: *tone,
            folded,
        });
    }
    letters.clear();
    folded.clear();
    *tone = 0;
}

/// Calls `on_word` for each word of `text` — runs of letters, digits and inner hyphens
/// (`mini-itx`, `i5-12400f`); everything else separates words — without allocating per
/// word.
pub fn for_each_word(text: &str, mut on_word: impl FnMut(Word<'_>)) {
    let mut letters = String::with_capacity(32);
    let mut folded = String::with_capacity(32);
    let mut tone = 0u8;
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() || (c == '-' && !letters.is_empty()) {
                let lower = c.to_ascii_lowercase();
                letters.push(lower);
                folded.push(lower);
            } else {
                flush(&mut letters, &mut folded, &mut tone, &mut on_word);
            }
        } else if let Some((letter, letter_tone)) = vietnamese_letter(c) {
            if letter_tone != 0 {
                tone = letter_tone;
            }
            letters.push(letter);
            folded.push(base_letter(letter));
        } else if is_combining(c) {
            apply_combining(c, &mut letters, &mut tone);
        } else if c.is_alphanumeric() {
            for lower in c.to_lowercase() {
                letters.push(lower);
                folded.push(lower);
            }
        } else {
            flush(&mut letters, &mut folded, &mut tone, &mut on_word);
        }
    }
    flush(&mut letters, &mut folded, &mut tone, &mut on_word);
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x100_0000_01b3;

/// A 64-bit FNV-1a hash of a (folded) word: cheap keys for indexes and overlap counts.
pub fn word_hash(word: &str) -> u64 {
    word.bytes().fold(FNV_OFFSET, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// Calls `on_hash` with [`word_hash`] of each folded word of `text` — the same words as
/// [`for_each_word`], hashed on the fly without building them.
pub fn for_each_word_hash(text: &str, mut on_hash: impl FnMut(u64)) {
    // `kept` is the hash up to the last non-hyphen character: trailing hyphens are trimmed.
    let (mut hash, mut kept, mut in_word) = (FNV_OFFSET, FNV_OFFSET, false);
    fn feed(bytes: &[u8], hyphen: bool, hash: &mut u64, kept: &mut u64) {
        for &b in bytes {
            *hash = (*hash ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
        if !hyphen {
            *kept = *hash;
        }
    }
    let mut buf = [0u8; 4];
    for c in text.chars() {
        let (is_word, hyphen) = if c.is_ascii() {
            (c.is_ascii_alphanumeric() || (c == '-' && in_word), c == '-')
        } else {
            (
                vietnamese_letter(c).is_some() || is_combining(c) || c.is_alphanumeric(),
                false,
            )
        };
        if !is_word {
            if in_word {
                on_hash(kept);
            }
            (hash, kept, in_word) = (FNV_OFFSET, FNV_OFFSET, false);
            continue;
        }
        if c.is_ascii() {
            feed(
                &[c.to_ascii_lowercase() as u8],
                hyphen,
                &mut hash,
                &mut kept,
            );
        } else if let Some((letter, _)) = vietnamese_letter(c) {
            feed(
                base_letter(letter).encode_utf8(&mut buf).as_bytes(),
                false,
                &mut hash,
                &mut kept,
            );
        } else if is_combining(c) {
            // Marks change letters and tones, not the folded form.
            if !in_word {
                continue;
            }
        } else {
            for lower in c.to_lowercase() {
                feed(
                    lower.encode_utf8(&mut buf).as_bytes(),
                    false,
                    &mut hash,
                    &mut kept,
                );
            }
        }
        in_word = true;
    }
    if in_word {
        on_hash(kept);
    }
}

/// A text's words, stored in one buffer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tokens {
    buffer: String,
    spans: Vec<Span>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    letters: (u32, u32),
    folded: (u32, u32),
    tone: u8,
}

impl Tokens {
    /// How many words.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Word `index`.
    pub fn get(&self, index: usize) -> Option<Word<'_>> {
        self.spans.get(index).map(|span| self.word(span))
    }

    /// The words in order.
    pub fn iter(&self) -> impl Iterator<Item = Word<'_>> {
        self.spans.iter().map(|span| self.word(span))
    }

    fn word(&self, span: &Span) -> Word<'_> {
        let slice = |(start, end): (u32, u32)| &self.buffer[start as usize..end as usize];
        Word {
            letters: slice(span.letters),
            tone: span.tone,
            folded: slice(span.folded),
        }
    }
}

/// Splits `text` into normalised words (see [`for_each_word`]).
pub fn tokens(text: &str) -> Tokens {
    let mut out = Tokens {
        buffer: String::with_capacity(text.len() + 8),
        spans: Vec::with_capacity(16),
    };
    for_each_word(text, |word| {
        let push = |buffer: &mut String, part: &str| {
            let start = buffer.len() as u32;
            buffer.push_str(part);
            (start, buffer.len() as u32)
        };
        let letters = push(&mut out.buffer, word.letters);
        let folded = if word.folded == word.letters {
            letters
        } else {
            push(&mut out.buffer, word.folded)
        };
        out.spans.push(Span {
            letters,
            folded,
            tone: word.tone,
        });
    });
    out
}

/// `text` lower-cased and folded to ASCII where possible, words separated by one space.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for_each_word(text, |word| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word.folded);
    });
    out
}

/// A keyword phrase: one or more words matched in sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    /// The phrase as written in the keyword list.
    pub text: String,
    /// Its words.
    pub words: Tokens,
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
    pub fn matches_at(&self, words: &Tokens, at: usize) -> bool {
        !self.words.is_empty()
            && at + self.words.len() <= words.len()
            && self
                .words
                .iter()
                .enumerate()
                .all(|(i, keyword)| words.get(at + i).is_some_and(|w| w.matches(&keyword)))
    }

    /// Whether the phrase occurs anywhere in `words`.
    pub fn occurs_in(&self, words: &Tokens) -> bool {
        (0..words.len()).any(|at| self.matches_at(words, at))
    }
}

#[cfg(test)]
mod tests;
