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

use alloc::vec::Vec;

use crate::normalize::{Phrase, Tokens, Word, tokens};

/// How clearly a phrase names a person who is not the assistant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clarity {
    /// A support person beyond doubt ("tư vấn viên", "a human", "live agent").
    Clear,
    /// Anyone ("nhân viên", "someone", "staff"): a request only after a contact verb.
    Plain,
}

/// The persons, Vietnamese and English. The longest match at a position wins.
const PERSONS: &[(&str, Clarity)] = &[
    ("nhân viên tư vấn", Clarity::Clear),
    ("nhân viên hỗ trợ", Clarity::Clear),
    ("nhân viên chăm sóc khách hàng", Clarity::Clear),
    ("nhân viên cskh", Clarity::Clear),
    ("nhân viên thật", Clarity::Clear),
    ("nhân viên trực", Clarity::Clear),
    ("nhân viên trực tuyến", Clarity::Clear),
    ("tư vấn viên", Clarity::Clear),
    ("người thật", Clarity::Clear),
    ("người thực", Clarity::Clear),
    ("con người", Clarity::Clear),
    ("người trực", Clarity::Clear),
    ("người hỗ trợ", Clarity::Clear),
    ("người tư vấn", Clarity::Clear),
    ("người phụ trách", Clarity::Clear),
    ("cskh", Clarity::Clear),
    ("chăm sóc khách hàng", Clarity::Clear),
    ("bộ phận chăm sóc khách hàng", Clarity::Clear),
    ("bộ phận hỗ trợ", Clarity::Clear),
    ("tổng đài viên", Clarity::Clear),
    ("nhân viên", Clarity::Plain),
    ("nhân viên bán hàng", Clarity::Plain),
    ("quản lý", Clarity::Plain),
    ("chủ shop", Clarity::Plain),
    ("chủ cửa hàng", Clarity::Plain),
    ("admin", Clarity::Plain),
    ("ai đó", Clarity::Plain),
    ("human", Clarity::Clear),
    ("human being", Clarity::Clear),
    ("human agent", Clarity::Clear),
    ("real person", Clarity::Clear),
    ("real human", Clarity::Clear),
    ("actual person", Clarity::Clear),
    ("actual human", Clarity::Clear),
    ("live person", Clarity::Clear),
    ("live agent", Clarity::Clear),
    ("live chat", Clarity::Clear),
    ("live support", Clarity::Clear),
    ("support agent", Clarity::Clear),
    ("customer service", Clarity::Clear),
    ("customer support", Clarity::Clear),
    ("customer care", Clarity::Clear),
    ("representative", Clarity::Clear),
    ("customer representative", Clarity::Clear),
    ("operator", Clarity::Clear),
    ("staff member", Clarity::Clear),
    ("person", Clarity::Plain),
    ("someone", Clarity::Plain),
    ("somebody", Clarity::Plain),
    ("anyone", Clarity::Plain),
    ("anybody", Clarity::Plain),
    ("agent", Clarity::Plain),
    ("rep", Clarity::Plain),
    ("staff", Clarity::Plain),
    ("employee", Clarity::Plain),
    ("manager", Clarity::Plain),
    ("supervisor", Clarity::Plain),
    ("owner", Clarity::Plain),
    ("support", Clarity::Plain),
    ("support team", Clarity::Plain),
    ("sales", Clarity::Plain),
    ("people", Clarity::Plain),
];

/// Verbs that ask to be put in touch: any person after them is a request.
const CONTACT: &[&str] = &[
    "gặp",
    "nói chuyện",
    "nói",
    "trò chuyện",
    "chat",
    "nhắn",
    "nhắn tin",
    "kết nối",
    "chuyển",
    "liên hệ",
    "liên lạc",
    "gọi",
    "hỏi",
    "trao đổi",
    "talk",
    "speak",
    "connect",
    "transfer",
    "put",
    "reach",
    "contact",
    "call",
    "escalate",
    "hand",
    "switch",
    "forward",
];

/// Verbs that ask for something: only a clear person after them is a request.
const WANT: &[&str] = &[
    "cần",
    "muốn",
    "xin",
    "cho",
    "tìm",
    "want",
    "wanna",
    "need",
    "get",
    "have",
    "like",
    "prefer",
    "request",
    "is there",
    "are there",
    "any",
];

/// Small words allowed between a verb and its person (at most [`MAX_GAP`]).
const GAP: &[&str] = &[
    "với",
    "cho",
    "tôi",
    "em",
    "mình",
    "tui",
    "tớ",
    "anh",
    "chị",
    "bạn",
    "được",
    "một",
    "1",
    "bên",
    "trực",
    "tiếp",
    "sang",
    "qua",
    "tới",
    "đến",
    "ngay",
    "luôn",
    "giúp",
    "dùm",
    "giùm",
    "hộ",
    "các",
    "vị",
    "cái",
    "thử",
    "lại",
    "cùng",
    "liền",
    "nhanh",
    "a",
    "an",
    "the",
    "your",
    "ur",
    "you",
    "me",
    "us",
    "to",
    "with",
    "some",
    "one",
    "of",
    "please",
    "pls",
    "plz",
    "now",
    "right",
    "just",
    "through",
    "from",
    "directly",
    "real",
    "actual",
    "live",
    "over",
    "back",
    "asap",
    "immediately",
    "quickly",
];

/// How many small words may stand between a verb and its person.
const MAX_GAP: usize = 4;

/// Words that may surround a clear person making up the whole message.
const BARE: &[&str] = &[
    "ơi", "ạ", "à", "a", "nhé", "nha", "đâu", "với", "cho", "em", "tôi", "mình", "xin", "vậy",
    "đi", "có", "không", "ko", "k", "nào", "online", "hả", "chứ", "ai", "là", "shop", "alo",
    "hello", "hi", "hey", "please", "pls", "plz", "an", "the", "i", "now", "ok", "okay", "here",
    "there", "any", "anyone", "is", "are", "some", "one", "real",
];

/// The most words a whole-message request has.
const BARE_MAX_WORDS: usize = 8;

/// Negations and past markers that cancel a verb just after them.
const NEGATIONS: &[&str] = &[
    "không", "ko", "k", "hông", "hổng", "chẳng", "chả", "đừng", "đã", "vừa", "chưa", "khỏi",
    "don't", "dont", "do not", "not", "never", "no need", "didn't", "didnt", "won't", "wont",
    "doesn't", "already", "without",
];

/// Words that may stand between a negation and the verb it cancels ("không **muốn**
/// gặp", "don't **want to** talk").
const BRIDGE: &[&str] = &[
    "muốn", "cần", "được", "có", "thể", "phải", "hề", "định", "hay", "want", "wanna", "need", "to",
    "really", "even", "ever", "have", "like", "would", "going", "gonna", "will", "d",
];

/// How many bridge words may stand between a negation and its verb.
const MAX_BRIDGE: usize = 4;

/// Words that, right after a person, make it someone who is not a support person.
const NOT_SUPPORT: &[&str] = &[
    "giao",
    "ship",
    "shipper",
    "vận chuyển",
    "bảo vệ",
    "kho",
    "bưu",
    "rồi",
    "resources",
    "resource",
    "rights",
    "body",
    "error",
    "nature",
    "race",
];

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
