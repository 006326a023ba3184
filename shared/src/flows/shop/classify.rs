//! Node 2's decision, as a pure function: intent, confidence, retrieval hint, clarify
//! questions and serial for one visitor message in its context.
//!
//! Shared by the `classify` node and the `classify` example (for merchants tuning their
//! keywords).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

use super::ShopConfig;
use super::warranty::extract_serial;
use crate::conversation::{Language, MessageKind, Role, StoredMessage};
use crate::intent::Intent;
use crate::prompt::fill;

/// Node 2's output for one message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The intent.
    pub intent: Intent,
    /// Its confidence, 0..1.
    pub confidence: f32,
    /// Whether to retrieve before answering.
    pub need_retrieval_hint: bool,
    /// Whether the message asks to check a product's warranty.
    pub warranty_check: bool,
    /// The serial in the message, if any.
    pub serial: Option<String>,
    /// Whether the assistant's previous message asked for a serial.
    pub awaiting_serial: bool,
    /// One or two clarifying questions when clarification is needed (the first is asked).
    pub clarify_questions: Vec<String>,
    /// Clarifying questions asked in a row before this message.
    pub clarify_attempts: u32,
    /// Whether the rules leave the message uncertain and the model should classify it
    /// (a clarifying question would be asked, and the message is not small talk).
    pub ask_model: bool,
    /// Whether the model's verdict was applied ([`super::intent_model::apply`]).
    pub decided_by_model: bool,
    /// Why, in one line.
    pub rationale: String,
}

/// What node 2 needs to know about the conversation besides the message itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Context<'a> {
    /// The conversation's language.
    pub language: Language,
    /// Up to three previous user messages, oldest first.
    pub previous: &'a [&'a str],
    /// Whether the assistant's previous message asked for a serial.
    pub awaiting_serial: bool,
    /// Clarifying questions asked in a row before this message.
    pub clarify_attempts: u32,
}

/// Classifies `text` in `context`.
///
/// While a serial is awaited, a message with a serial is a warranty message whatever its
/// words (confidence 1.0), and a message that is not clearly about something else is too:
/// the rule reminder takes the place of a clarifying question. Otherwise a serial given
/// after a label or on its own (`IMEI: 356938035643809`) also makes a warranty message
/// (confidence 1.0 unless the keywords already said warranty), unless the visitor clearly
/// asks for something else.
///
/// When the rules would ask a clarifying question about a message that is not small talk,
/// [`Analysis::ask_model`] says the model should classify it
/// ([`super::intent_model`]).
pub fn analyze(config: &ShopConfig, text: &str, context: Context<'_>) -> Analysis {
    let c = config.classifier.classify(text, context.previous);
    let confident =
        c.intent != Intent::Unknown && c.confidence >= config.intent_confidence_threshold;
    // A serial after a label or on its own always counts. While a serial is awaited, one
    // anywhere in the message counts too — unless the visitor clearly moved on to another
    // need ("giá RTX 4060 bao nhiêu?" is about a price, not serial "4060").
    let moved_on = confident && c.intent != Intent::Warranty;
    let strict = extract_serial(text, false);
    let given = strict.is_some() && !moved_on;
    let serial = match strict {
        None if context.awaiting_serial && !moved_on => extract_serial(text, true),
        strict => strict,
    };
    let mut analysis = Analysis {
        intent: c.intent,
        confidence: c.confidence,
        need_retrieval_hint: c.need_retrieval_hint,
        warranty_check: c.warranty_check,
        serial,
        awaiting_serial: context.awaiting_serial,
        clarify_questions: Vec::new(),
        clarify_attempts: context.clarify_attempts,
        ask_model: false,
        decided_by_model: false,
        rationale: c.rationale,
    };
    if context.awaiting_serial && (analysis.serial.is_some() || !moved_on) {
        if analysis.serial.is_some() {
            analysis.confidence = 1.0;
        }
        analysis.intent = Intent::Warranty;
        analysis.rationale = format!("awaiting serial; {}", analysis.rationale);
        return analysis;
    }
    if given && !(confident && c.intent == Intent::Warranty) {
        analysis.intent = Intent::Warranty;
        analysis.confidence = 1.0;
        analysis.rationale = format!("serial given; {}", analysis.rationale);
        return analysis;
    }
    if !confident {
        let leaders = match c.runner_up {
            Some(runner_up) if c.intent != Intent::Unknown => alloc::vec![c.intent, runner_up],
            _ => Vec::new(),
        };
        analysis.clarify_questions =
            clarify_questions(config, context.language, &leaders, context.clarify_attempts);
        analysis.ask_model = config.intent_model && !c.small_talk;
    }
    analysis
}

/// The clarifying questions: a choice between the two leading intents when there are
/// two, otherwise a general question that alternates between attempts; then a follow-up.
fn clarify_questions(
    config: &ShopConfig,
    language: Language,
    leaders: &[Intent],
    attempts: u32,
) -> Vec<String> {
    let sentence = |key: &str| config.sentence(language, key);
    let first = match leaders {
        [first, second] => fill(
            sentence("clarify.between"),
            &[
                ("first", intent_label(config, language, *first)),
                ("second", intent_label(config, language, *second)),
            ],
        ),
        _ => sentence(if attempts.is_multiple_of(2) {
            "clarify.general.1"
        } else {
            "clarify.general.2"
        })
        .into(),
    };
    alloc::vec![first, sentence("clarify.detail").into()]
}

/// How `intent` is named to the visitor in `language`.
pub fn intent_label(config: &ShopConfig, language: Language, intent: Intent) -> &str {
    let key = match intent {
        Intent::AssemblePc => "intent.assemble_pc",
        Intent::Shopping => "intent.shopping",
        Intent::Warranty => "intent.warranty",
        Intent::Unknown => "intent.unknown",
    };
    config.sentence(language, key)
}

/// Clarifying questions asked in a row just before the current message: assistant
/// `clarify` messages since the last other assistant message (within the loaded history
/// window).
pub fn clarify_attempts(history_before_current: &[StoredMessage]) -> u32 {
    let assistant = history_before_current
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant);
    assistant
        .take_while(|m| m.kind == MessageKind::Clarify)
        .count() as u32
}

/// The last `n` user messages before the current one, oldest first.
pub fn previous_user_messages(history_before_current: &[StoredMessage], n: usize) -> Vec<&str> {
    let mut previous: Vec<&str> = history_before_current
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .take(n)
        .map(|m| m.content.as_str())
        .collect();
    previous.reverse();
    previous
}
