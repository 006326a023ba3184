//! The panel's own words, in Vietnamese (the default) and English.
//!
//! The assistant's messages come from the server in the conversation's language; these are
//! the labels, hints and errors around them.
//!
//! [`Strings`] names every word; `vi.rs` and `en.rs` hold them in each language.

mod en;
mod vi;

use en::EN;
use vi::VI;

/// A UI language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Lang {
    /// Vietnamese, the default.
    #[default]
    Vi,
    /// English.
    En,
}

impl Lang {
    /// From a language tag: `vi`, `vi-VN`, `en`, `en-GB`, … (case-insensitive).
    pub(crate) fn parse(tag: &str) -> Option<Self> {
        // Bytes, not a split and a lowercased copy: the widget stays in its download budget.
        let tag = tag.trim().as_bytes();
        if tag.get(2).is_some_and(|c| *c != b'-' && *c != b'_') {
            return None;
        }
        // `| 0x20` lowercases an ASCII letter, and makes no other byte a letter of these.
        match tag.get(..2)? {
            [a, b] if [a | 0x20, b | 0x20] == *b"vi" => Some(Self::Vi),
            [a, b] if [a | 0x20, b | 0x20] == *b"en" => Some(Self::En),
            _ => None,
        }
    }

    /// The BCP 47 code the API and `<html lang>` use.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Self::Vi => "vi",
            Self::En => "en",
        }
    }

    /// This language's strings.
    pub(crate) fn strings(self) -> &'static Strings {
        match self {
            Self::Vi => &VI,
            Self::En => &EN,
        }
    }
}

/// Every string the panel shows or announces.
#[derive(Debug)]
pub(crate) struct Strings {
    /// Header title when neither the embed tag nor the site sets one.
    pub title: &'static str,
    /// Close button.
    pub close: &'static str,
    /// New-conversation button.
    pub new_conversation: &'static str,
    /// Accessible name of the message list.
    pub messages_label: &'static str,
    /// Label of the message box.
    pub input_label: &'static str,
    /// Placeholder of the message box.
    pub placeholder: &'static str,
    /// Keyboard hint under the message box.
    pub input_hint: &'static str,
    /// Send button.
    pub send: &'static str,
    /// Stop button (while an answer streams).
    pub stop: &'static str,
    /// Retry button after a failure.
    pub retry: &'static str,
    /// Regenerate button on the last answer.
    pub regenerate: &'static str,
    /// Typing indicator, for screen readers.
    pub typing: &'static str,
    /// Heading of the starter prompts.
    pub starters_label: &'static str,
    /// Who wrote a message, for screen readers.
    pub you: &'static str,
    /// Who wrote a message, for screen readers.
    pub assistant: &'static str,
    /// While the conversation loads.
    pub loading: &'static str,
    /// A failed answer (server error, `failed` event).
    pub error_failed: &'static str,
    /// The network failed.
    pub error_network: &'static str,
    /// Too many requests.
    pub error_rate_limited: &'static str,
    /// The stream ended without its terminal event.
    pub error_interrupted: &'static str,
    /// The conversation could not be started or loaded.
    pub error_start: &'static str,
    /// Note on an answer the visitor stopped.
    pub stopped: &'static str,
    /// The panel opened outside a page of the site (not framed): it does not run.
    pub not_embedded: &'static str,
    /// A tool call's state: working, done, failed.
    pub tool_states: [&'static str; 3],
    /// Accessible name of a table's scrolling region.
    pub table: &'static str,
    /// Under a capped list or table: the words around how many are shown, and of how many.
    pub showing: [&'static str; 3],
    /// Heading of an answer's sources.
    pub sources: &'static str,
    /// Heading of an answer's evidence.
    pub evidence: &'static str,
    /// Accessible name of the follow-up question chips.
    pub follow_ups: &'static str,
    /// Accessible name of the chips answering the assistant's questions.
    pub control: &'static str,
    /// Feedback on an answer: thumbs up and down (names, then visible words), copy,
    /// copied, the comment box, its send button, thanks.
    pub feedback: [&'static str; 9],
    /// Around the conversation (`js/flow.js`): the "new messages" pill; the length
    /// counter's unit; the over-the-limit message before and after the limit; earlier
    /// conversations (the list and its button); the "talk to a person" button; and the
    /// request that button sends.
    pub flow: [&'static str; 7],
    /// Who wrote a person's reply ("Nhân viên"), before their name.
    pub person: &'static str,
    /// The handoff's state, as notices in the log: waiting for a person; `{0}` (a
    /// person's name) joined; the assistant is back; `{0}` ("Nhân viên · Lan") is
    /// answering (after a reload, from the live stream's first event).
    pub handoff: [&'static str; 4],
    // ---- How rich turns read (widget/js/rich.js; issue 26 items 3–4) ----
    /// A plan's stages: ready; working on step `{0}`/`{1}` (`{2}`: its purpose); `{0}` of
    /// `{1}` steps done; putting the answer together.
    pub stages: [&'static str; 4],
    /// The currency written after an amount of money.
    pub currency: &'static str,
    /// A chart's kind in its text alternative (bar, line, pie), and a chart's title when
    /// it has none and several series.
    pub charts: [&'static str; 4],
    /// A tool whose name has no word in [`Strings::vocabulary`].
    pub tool: &'static str,
    /// Words for column, series, scope and tool names: `key=words|…`, whole names first
    /// (`get_top_items`), then single words; `^` leads, `$` is a unit (in brackets at the
    /// end), `~` marks a Vietnamese word (kept in order), an empty value drops the word.
    pub vocabulary: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &Strings) -> [&'static str; 40] {
        [
            s.title,
            s.close,
            s.new_conversation,
            s.messages_label,
            s.input_label,
            s.placeholder,
            s.input_hint,
            s.send,
            s.stop,
            s.retry,
            s.regenerate,
            s.typing,
            s.starters_label,
            s.you,
            s.assistant,
            s.loading,
            s.error_failed,
            s.error_network,
            s.error_rate_limited,
            s.error_interrupted,
            s.error_start,
            s.stopped,
            s.not_embedded,
            s.tool_states[0],
            s.tool_states[1],
            s.tool_states[2],
            s.table,
            s.showing[1],
            s.sources,
            s.evidence,
            s.follow_ups,
            s.feedback[0],
            s.feedback[1],
            s.feedback[2],
            s.feedback[3],
            s.feedback[4],
            s.feedback[5],
            s.feedback[6],
            s.feedback[7],
            s.feedback[8],
        ]
    }

    #[test]
    fn parses_language_tags() {
        assert_eq!(Lang::parse("vi"), Some(Lang::Vi));
        assert_eq!(Lang::parse("vi-VN"), Some(Lang::Vi));
        assert_eq!(Lang::parse(" EN_gb "), Some(Lang::En));
        assert_eq!(Lang::parse("fr"), None);
        assert_eq!(Lang::parse("vie"), None);
        assert_eq!(Lang::parse("v"), None);
        assert_eq!(Lang::parse("Vi-vn"), Some(Lang::Vi));
        assert_eq!(Lang::parse(""), None);
        assert_eq!(Lang::default(), Lang::Vi);
        assert_eq!(Lang::En.code(), "en");
    }

    #[test]
    fn every_string_is_translated() {
        let (vi, en) = (all(Lang::Vi.strings()), all(Lang::En.strings()));
        for (v, e) in vi.iter().zip(en) {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
    }

    #[test]
    fn the_flow_strings_are_translated() {
        for (v, e) in Lang::Vi.strings().flow.iter().zip(Lang::En.strings().flow) {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
    }

    #[test]
    fn the_handoff_words_are_translated_and_name_the_person() {
        let (vi, en) = (Lang::Vi.strings(), Lang::En.strings());
        for (v, e) in vi
            .handoff
            .iter()
            .zip(en.handoff)
            .chain([(&vi.person, en.person)])
        {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
        assert!(vi.handoff[1].contains("{0}") && en.handoff[1].contains("{0}"));
        assert!(vi.handoff[3].contains("{0}") && en.handoff[3].contains("{0}"));
        // The request the button sends is the phrase the Worker recognises.
        assert_eq!(vi.flow[6], "Gặp nhân viên");
        assert_eq!(en.flow[6], "Talk to a person");
    }

    #[test]
    fn rich_turn_words_are_translated_and_keep_their_placeholders() {
        let (vi, en) = (Lang::Vi.strings(), Lang::En.strings());
        let pairs = vi
            .stages
            .iter()
            .zip(en.stages)
            .chain(vi.charts.iter().zip(en.charts));
        for (v, e) in pairs.chain([(&vi.currency, en.currency), (&vi.tool, en.tool)]) {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
        for (v, e) in vi.stages.iter().zip(en.stages) {
            for hole in ["{0}", "{1}", "{2}"] {
                assert_eq!(v.contains(hole), e.contains(hole), "{hole} in {v} / {e}");
            }
        }
        for vocabulary in [vi.vocabulary, en.vocabulary] {
            for entry in vocabulary.split('|') {
                let (key, _) = entry.split_once('=').expect("key=words");
                assert!(
                    !key.is_empty()
                        && key
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                    "{entry}"
                );
            }
        }
    }

    #[test]
    fn vietnamese_uses_the_fixed_forms_of_address() {
        let vi = Lang::Vi.strings();
        assert!(vi.input_label.contains("quý khách"));
        assert!(vi.error_failed.contains("em"));
    }
}
