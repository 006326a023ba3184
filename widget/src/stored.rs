//! How a stored message looks when the panel loads history or the live stream brings it:
//! as the live panel showed it, so a reload changes nothing a visitor can see. Pure, so
//! the rules are tested on the host; `crate::chat` reads the message's JSON into
//! [`StoredMessage`] and draws the [`Shown`].
//!
//! - a handoff line (kind `handoff`, metadata `handoff` `requested` | `joined` |
//!   `released`) is a notice in the panel's own words, naming the person who joined;
//! - a person's reply (kind `human`) is marked "Nhân viên · <name>";
//! - anything else is the assistant's: stopped (metadata `stopped`) keeps its "Stopped"
//!   note, cut short (metadata `incomplete`) says it was interrupted, and a fixed text (a
//!   handoff notice, a refusal, the greeting: [`MessageKind::is_fixed`]) offers neither
//!   regenerate nor votes.

use concierge_core::conversation::MessageKind;
use concierge_core::handoff::Notice;

use crate::i18n::Strings;
use crate::turn::{Failure, Phase};

/// The parts of a stored message that decide how it looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StoredMessage<'a> {
    /// Its kind (`answer`, `handoff`, `human`, …).
    pub kind: &'a str,
    /// Metadata `handoff`: which handoff sentence it is.
    pub handoff: Option<&'a str>,
    /// A person's name: metadata `agent` on a handoff line, `author.name` on their reply.
    pub name: Option<&'a str>,
    /// Metadata `stopped`: the visitor stopped the answer.
    pub stopped: bool,
    /// Metadata `incomplete`: the answer was cut short by a failure.
    pub incomplete: bool,
}

/// How a stored message is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shown {
    /// A line about the conversation (the handoff's state), in the panel's words.
    Notice(String),
    /// A person's reply, with their name.
    Person(String),
    /// The assistant's message, where it ended, and whether it is a fixed text.
    Assistant {
        /// Done, stopped, or failed (interrupted).
        phase: Phase,
        /// No regenerate and no votes.
        fixed: bool,
    },
}

/// Whether a message (or a finished turn) of `kind` is a fixed text: no regenerate, no
/// votes. The rule is the core's ([`MessageKind::is_fixed`]); unknown kinds are answers.
pub(crate) fn is_fixed(kind: &str) -> bool {
    MessageKind::parse(kind).is_some_and(MessageKind::is_fixed)
}

/// How `message`, an assistant's stored message, is drawn in the panel's `strings`.
pub(crate) fn shown(message: StoredMessage<'_>, strings: &Strings) -> Shown {
    let [waiting, joined, back, _] = strings.handoff;
    let name = message
        .name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(strings.person);
    let notice = (message.kind == "handoff")
        .then_some(message.handoff)
        .flatten()
        .and_then(Notice::parse)
        .filter(|n| n.is_state());
    match (message.kind, notice) {
        (_, Some(Notice::Requested)) => Shown::Notice(waiting.into()),
        (_, Some(Notice::Joined)) => Shown::Notice(fill(joined, name)),
        (_, Some(_)) => Shown::Notice(back.into()),
        ("human", _) => Shown::Person(name.into()),
        (kind, _) => Shown::Assistant {
            phase: if message.stopped {
                Phase::Stopped
            } else if message.incomplete {
                Phase::Failed(Failure::Interrupted)
            } else {
                Phase::Done
            },
            fixed: is_fixed(kind),
        },
    }
}

/// `words` with its `{0}` replaced by `name` (a `char` search: `str::replace` would
/// bring a substring searcher into the download).
fn fill(words: &str, name: &str) -> String {
    match words.split_once('{') {
        Some((before, after)) => format!("{before}{name}{}", after.get(2..).unwrap_or_default()),
        None => words.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    fn message(kind: &str) -> StoredMessage<'_> {
        StoredMessage {
            kind,
            ..StoredMessage::default()
        }
    }

    #[test]
    fn handoff_lines_are_notices_in_the_panels_words() {
        let vi = Lang::Vi.strings();
        let line = |key, name| StoredMessage {
            handoff: Some(key),
            name,
            ..message("handoff")
        };
        assert_eq!(
            shown(line("requested", None), vi),
            Shown::Notice("Đang chờ nhân viên…".into())
        );
        assert_eq!(
            shown(line("joined", Some("Lan")), vi),
            Shown::Notice("Lan đã tham gia cuộc trò chuyện".into())
        );
        assert_eq!(
            shown(line("joined", None), vi),
            Shown::Notice("Nhân viên đã tham gia cuộc trò chuyện".into())
        );
        assert_eq!(
            shown(line("released", None), Lang::En.strings()),
            Shown::Notice("The assistant is back".into())
        );
        // The notices answering the visitor's request are the assistant's, fixed.
        for key in ["waiting", "still_waiting", "outside_hours", "timeout"] {
            assert_eq!(
                shown(line(key, None), vi),
                Shown::Assistant {
                    phase: Phase::Done,
                    fixed: true
                },
                "{key}"
            );
        }
    }

    #[test]
    fn a_persons_reply_is_theirs_and_old_rows_without_a_name_still_show_a_person() {
        let vi = Lang::Vi.strings();
        let reply = StoredMessage {
            name: Some("Lan"),
            ..message("human")
        };
        assert_eq!(shown(reply, vi), Shown::Person("Lan".into()));
        assert_eq!(
            shown(message("human"), vi),
            Shown::Person("Nhân viên".into())
        );
    }

    #[test]
    fn answers_keep_how_they_ended_and_fixed_texts_are_marked() {
        let vi = Lang::Vi.strings();
        let answer = |stopped, incomplete| {
            shown(
                StoredMessage {
                    stopped,
                    incomplete,
                    ..message("answer")
                },
                vi,
            )
        };
        let plain = |phase| Shown::Assistant {
            phase,
            fixed: false,
        };
        assert_eq!(answer(false, false), plain(Phase::Done));
        assert_eq!(answer(true, false), plain(Phase::Stopped));
        assert_eq!(
            answer(false, true),
            plain(Phase::Failed(Failure::Interrupted))
        );
        for kind in ["handoff", "refusal", "greeting"] {
            assert!(is_fixed(kind), "{kind}");
        }
        for kind in [
            "answer", "clarify", "warranty", "data", "held", "stopped", "",
        ] {
            assert!(!is_fixed(kind), "{kind}");
        }
    }
}
