//! Scores node 2's understanding on labelled sets: which intent a natural first question
//! gets (or the clarifying question), which serial reaches the warranty lookup, and which
//! language a first message is detected as.
//!
//! The sets are plain text, one case a line, fields separated by a tab (`#` comments and
//! empty lines ignored):
//!
//! - intents: `shop <TAB> assemble_pc|shopping|warranty|unknown <TAB> message`, where
//!   `unknown` means the clarifying question is expected and `shop` names the catalog the
//!   message is classified with;
//! - serials: `awaiting|fresh <TAB> expected serial or - <TAB> message`;
//! - languages: `vi|en <TAB> message`.
//!
//! Used by the `shop_understanding` test (which fails under the thresholds) and by the
//! `classify` example (which prints the figures for a merchant's own sets).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::ShopConfig;
use super::classify::{Context, analyze};
use crate::conversation::Language;
use crate::intent::Intent;
use crate::language;
use crate::retrieval::catalog;

/// A line of a labelled set that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// One labelled serial message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SerialCase<'a> {
    /// 1-based line number in the set.
    pub line: usize,
    /// Whether the assistant's previous message asked for the serial.
    pub awaiting: bool,
    /// The serial the lookup must receive, or `None` when there must be no lookup.
    pub expected: Option<&'a str>,
    /// The visitor's message.
    pub message: &'a str,
}

/// One labelled first message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LanguageCase<'a> {
    /// 1-based line number in the set.
    pub line: usize,
    /// The language the conversation must get.
    pub expected: Language,
    /// The visitor's message.
    pub message: &'a str,
}

fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_end_matches('\r')))
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
}

/// Reads a serial set.
pub fn parse_serial_set(text: &str) -> Result<Vec<SerialCase<'_>>, SetError> {
    lines(text)
        .map(|(line, content)| {
            let error = |reason: &str| SetError {
                line,
                reason: reason.into(),
            };
            let mut fields = content.splitn(3, '\t');
            let (Some(context), Some(expected), Some(message)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(error("expected three tab-separated fields"));
            };
            let awaiting = match context {
                "awaiting" => true,
                "fresh" => false,
                _ => return Err(error("the context is `awaiting` or `fresh`")),
            };
            let expected = (expected != "-").then_some(expected);
            if message.trim().is_empty() {
                return Err(error("empty message"));
            }
            Ok(SerialCase {
                line,
                awaiting,
                expected,
                message,
            })
        })
        .collect()
}

/// Reads a language set.
pub fn parse_language_set(text: &str) -> Result<Vec<LanguageCase<'_>>, SetError> {
    lines(text)
        .map(|(line, content)| {
            let Some((code, message)) = content.split_once('\t') else {
                return Err(SetError {
                    line,
                    reason: "expected `vi` or `en`, a tab, the message".into(),
                });
            };
            let Some(expected) = Language::parse(code) else {
                return Err(SetError {
                    line,
                    reason: format!("unknown language {code:?}"),
                });
            };
            Ok(LanguageCase {
                line,
                expected,
                message,
            })
        })
        .collect()
}

/// A case the understanding got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// 1-based line number in the set.
    pub line: usize,
    /// The message.
    pub message: String,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub got: String,
}

/// The serial figures: over the serials that reach the warranty lookup.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SerialScore {
    /// Messages scored.
    pub cases: usize,
    /// Messages with a serial to look up.
    pub expected: usize,
    /// Lookups made.
    pub looked_up: usize,
    /// Lookups of the expected serial.
    pub correct: usize,
    /// The cases got wrong.
    pub misses: Vec<Miss>,
}

impl SerialScore {
    /// Correct lookups over lookups made (1.0 when none was made).
    pub fn precision(&self) -> f64 {
        ratio(self.correct, self.looked_up)
    }

    /// Correct lookups over serials to look up (1.0 when there were none).
    pub fn recall(&self) -> f64 {
        ratio(self.correct, self.expected)
    }
}

/// The language figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LanguageScore {
    /// Messages scored.
    pub cases: usize,
    /// Messages detected as labelled.
    pub correct: usize,
    /// The cases got wrong.
    pub misses: Vec<Miss>,
}

impl LanguageScore {
    /// Correct detections over messages (1.0 for an empty set).
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.cases)
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

/// The serial node 2 sends to the warranty lookup for `text`, if any: the message is
/// classified warranty, needs no clarifying question, and carries a serial (the route
/// `classify → warranty_stream` with a serial).
pub fn looked_up_serial(config: &ShopConfig, text: &str, awaiting: bool) -> Option<String> {
    let context = Context {
        language: language::detect(text),
        awaiting_serial: awaiting,
        ..Context::default()
    };
    let analysis = analyze(config, text, context);
    (analysis.intent == Intent::Warranty && analysis.clarify_questions.is_empty())
        .then_some(analysis.serial)
        .flatten()
}

/// Scores `cases` with `config`.
pub fn score_serials(config: &ShopConfig, cases: &[SerialCase<'_>]) -> SerialScore {
    let mut score = SerialScore {
        cases: cases.len(),
        ..SerialScore::default()
    };
    for case in cases {
        let got = looked_up_serial(config, case.message, case.awaiting);
        score.expected += usize::from(case.expected.is_some());
        score.looked_up += usize::from(got.is_some());
        let right = got.as_deref() == case.expected;
        score.correct += usize::from(right && got.is_some());
        if !right {
            score.misses.push(Miss {
                line: case.line,
                message: case.message.into(),
                expected: case.expected.unwrap_or("-").into(),
                got: got.unwrap_or_else(|| "-".into()),
            });
        }
    }
    score
}

/// Scores `cases` with [`language::detect`].
pub fn score_languages(cases: &[LanguageCase<'_>]) -> LanguageScore {
    let mut score = LanguageScore {
        cases: cases.len(),
        ..LanguageScore::default()
    };
    for case in cases {
        let got = language::detect(case.message);
        if got == case.expected {
            score.correct += 1;
        } else {
            score.misses.push(Miss {
                line: case.line,
                message: case.message.into(),
                expected: case.expected.as_str().into(),
                got: got.as_str().into(),
            });
        }
    }
    score
}

/// One labelled natural question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntentCase<'a> {
    /// 1-based line number in the set.
    pub line: usize,
    /// The kind of shop it is asked of (names its catalog).
    pub shop: &'a str,
    /// The intent it must get; [`Intent::Unknown`]: the clarifying question.
    pub expected: Intent,
    /// The visitor's message.
    pub message: &'a str,
}

/// Reads an intent set.
pub fn parse_intent_set(text: &str) -> Result<Vec<IntentCase<'_>>, SetError> {
    lines(text)
        .map(|(line, content)| {
            let error = |reason: &str| SetError {
                line,
                reason: reason.into(),
            };
            let mut fields = content.splitn(3, '\t');
            let (Some(shop), Some(intent), Some(message)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(error("expected three tab-separated fields"));
            };
            let expected = Intent::parse(intent)
                .ok_or_else(|| error("the intent is assemble_pc, shopping, warranty or unknown"))?;
            if message.trim().is_empty() {
                return Err(error("empty message"));
            }
            Ok(IntentCase {
                line,
                shop,
                expected,
                message,
            })
        })
        .collect()
}

/// A catalog written as markdown documents (a `# Title` line starts each) as the site's
/// learned vocabulary: each document's terms ([`catalog::document_terms`]), merged.
pub fn catalog_of_markdown(text: &str) -> Vec<String> {
    let mut documents: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("# ") {
            Some(title) => documents.push((title.trim().into(), String::new())),
            None => match documents.last_mut() {
                Some((_, content)) => {
                    content.push_str(line);
                    content.push('\n');
                }
                None => documents.push((String::new(), format!("{line}\n"))),
            },
        }
    }
    let terms: Vec<Vec<String>> = documents
        .iter()
        .map(|(title, content)| catalog::document_terms(title, content))
        .collect();
    catalog::merge_terms(terms.iter().map(Vec::as_slice))
}

/// The intent figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntentScore {
    /// Messages scored.
    pub cases: usize,
    /// Messages that got the labelled intent (or, labelled `unknown`, the clarifying
    /// question).
    pub correct: usize,
    /// Messages labelled with a known intent.
    pub clear: usize,
    /// Of those, the ones that got the clarifying question.
    pub clarified_clear: usize,
    /// Per shop: (shop, messages, right).
    pub per_shop: Vec<(String, usize, usize)>,
    /// The cases got wrong.
    pub misses: Vec<Miss>,
}

impl IntentScore {
    /// Right over messages (1.0 for an empty set).
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.cases)
    }

    /// Clarifying questions over messages with a clear intent (0.0 when there are none).
    pub fn clarify_rate(&self) -> f64 {
        if self.clear == 0 {
            0.0
        } else {
            self.clarified_clear as f64 / self.clear as f64
        }
    }
}

/// What node 2's rules make of a first message: the intent, or [`Intent::Unknown`] when
/// the clarifying question is asked. (The model, asked about what the rules leave
/// uncertain, is not consulted: these figures are the rules' own.)
pub fn first_message_intent(config: &ShopConfig, text: &str) -> Intent {
    let context = Context {
        language: language::detect(text),
        ..Context::default()
    };
    let analysis = analyze(config, text, context);
    if analysis.clarify_questions.is_empty() {
        analysis.intent
    } else {
        Intent::Unknown
    }
}

/// Scores `cases`, each with the config of its shop (`config_of`).
pub fn score_intents<'c>(
    config_of: impl Fn(&str) -> &'c ShopConfig,
    cases: &[IntentCase<'_>],
) -> IntentScore {
    let mut score = IntentScore {
        cases: cases.len(),
        ..IntentScore::default()
    };
    for case in cases {
        let got = first_message_intent(config_of(case.shop), case.message);
        let right = got == case.expected;
        score.correct += usize::from(right);
        if case.expected != Intent::Unknown {
            score.clear += 1;
            score.clarified_clear += usize::from(got == Intent::Unknown);
        }
        match score
            .per_shop
            .iter_mut()
            .find(|(shop, ..)| shop == case.shop)
        {
            Some((_, n, r)) => {
                *n += 1;
                *r += usize::from(right);
            }
            None => score
                .per_shop
                .push((case.shop.into(), 1, usize::from(right))),
        }
        if !right {
            score.misses.push(Miss {
                line: case.line,
                message: case.message.into(),
                expected: case.expected.as_str().into(),
                got: got.as_str().into(),
            });
        }
    }
    score
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sets_are_read_and_bad_lines_named() {
        let serials = parse_serial_set("# c\n\nawaiting\tABC123\tSN ABC123\nfresh\t-\thi\n");
        assert_eq!(
            serials,
            Ok(alloc::vec![
                SerialCase {
                    line: 3,
                    awaiting: true,
                    expected: Some("ABC123"),
                    message: "SN ABC123"
                },
                SerialCase {
                    line: 4,
                    awaiting: false,
                    expected: None,
                    message: "hi"
                },
            ])
        );
        assert_eq!(parse_serial_set("later\t-\thi").unwrap_err().line, 1);
        assert_eq!(parse_serial_set("fresh\thi").unwrap_err().line, 1);
        assert_eq!(parse_language_set("fr\tbonjour").unwrap_err().line, 1);
        let languages = parse_language_set("en\thi\r\nvi\tchào").unwrap();
        assert_eq!(languages[1].expected, Language::Vi);
        assert_eq!(languages[0].message, "hi");
    }

    #[test]
    fn empty_sets_score_one() {
        assert_eq!(SerialScore::default().precision(), 1.0);
        assert_eq!(SerialScore::default().recall(), 1.0);
        assert_eq!(LanguageScore::default().accuracy(), 1.0);
    }
}
