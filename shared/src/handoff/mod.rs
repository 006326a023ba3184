//! Handoff to a person: recognising a visitor's request for one ([`asks_for_person`]),
//! the site's office hours ([`OfficeHours`], [`open_at`], [`format_hours`]), what the
//! visitor is told ([`Notice`]) and the handoff states ([`HandoffState`]).
//!
//! The Worker runs the handoff (a conversation's Durable Object holds its state and its
//! timer); this module decides, with no I/O.
//!
//! ```
//! use concierge_core::conversation::Language;
//! use concierge_core::handoff::{asks_for_person, Notice, Register};
//!
//! assert!(asks_for_person("Cho em gặp nhân viên tư vấn với"));
//! assert!(asks_for_person("can I talk to a real person?"));
//! assert!(!asks_for_person("nhân viên giao hàng chưa tới"));
//! let register = Register::of("Xin chào quý khách! Em là trợ lý ảo của cửa hàng.");
//! assert!(Notice::Timeout.text(Language::Vi, register, None).contains("quý khách"));
//! ```

use alloc::string::String;

use crate::conversation::Language;

mod contact;
mod hours;
mod phrases;

pub use contact::{Contact, MAX_CONTACT_CHARS};

pub use hours::{
    ClockTime, HoursError, MAX_SPANS, OfficeHours, check_hours, format_hours, open_at,
};
pub use phrases::asks_for_person;

/// The shortest wait for a person a site may set, in seconds.
pub const MIN_WAIT_SECONDS: u32 = 10;
/// The longest wait for a person a site may set, in seconds.
pub const MAX_WAIT_SECONDS: u32 = 3600;
/// The wait for a person when a site sets none, in seconds.
pub const DEFAULT_WAIT_SECONDS: u32 = 120;
/// The time zone office hours are read in when a site sets none.
pub const DEFAULT_TIME_ZONE: &str = "Asia/Ho_Chi_Minh";

/// Where a conversation stands with a person.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum HandoffState {
    /// The assistant answers.
    #[default]
    None,
    /// The visitor asked for a person; nobody has taken it yet (the assistant still answers).
    Waiting,
    /// A person holds the conversation: the assistant does not answer.
    Held,
}

impl HandoffState {
    /// The stored string form: `none`, `waiting`, `held`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Waiting => "waiting",
            Self::Held => "held",
        }
    }

    /// Parses the stored string form.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "none" => Self::None,
            "waiting" => Self::Waiting,
            "held" => Self::Held,
            _ => return None,
        })
    }
}

/// How the assistant addresses the visitor in Vietnamese, as the site's persona does: the
/// notices speak the same way as the answers around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Register {
    /// "mình" and "bạn" (the sentences' plain keys).
    #[default]
    Friendly,
    /// "em" and "quý khách", as a shop's persona speaks (the `.em` keys).
    Polite,
}

impl Register {
    /// The register of `persona` (a persona, or the greeting it opens with): polite when it
    /// calls the visitor "quý khách", friendly otherwise.
    pub fn of(persona: &str) -> Self {
        if persona.to_lowercase().contains("quý khách") {
            Self::Polite
        } else {
            Self::Friendly
        }
    }
}

/// The handoff sentences, Vietnamese (`prompts/handoff_fixed_vi.md`).
pub const SENTENCES_VI: &str = include_str!("../../../prompts/handoff_fixed_vi.md");
/// The handoff sentences, English (`prompts/handoff_fixed_en.md`).
pub const SENTENCES_EN: &str = include_str!("../../../prompts/handoff_fixed_en.md");

/// What the visitor is told about a handoff (stored as a message of kind
/// [`Handoff`](crate::conversation::MessageKind::Handoff)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// Asked within office hours: a person will answer here.
    Waiting,
    /// Asked again while waiting.
    StillWaiting,
    /// Asked outside office hours: nobody can answer now; the assistant carries on.
    OutsideHours,
    /// Nobody took it within the site's wait; the assistant carries on.
    Timeout,
    /// The conversation started waiting for a person (a line in the log, not an answer).
    Requested,
    /// A person took the conversation over (`{agent}`: their name).
    Joined,
    /// The person handed the conversation back to the assistant.
    Released,
}

impl Notice {
    /// The sentence's key in the sentence files.
    pub fn key(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::StillWaiting => "still_waiting",
            Self::OutsideHours => "outside_hours",
            Self::Timeout => "timeout",
            Self::Requested => "requested",
            Self::Joined => "joined",
            Self::Released => "released",
        }
    }

    /// Whether this notice says how the conversation's handoff changed (a line in the log)
    /// rather than answering the visitor's message.
    pub fn is_state(self) -> bool {
        matches!(self, Self::Requested | Self::Joined | Self::Released)
    }

    /// The notice whose [`key`](Self::key) is `key`.
    pub fn parse(key: &str) -> Option<Self> {
        [
            Self::Waiting,
            Self::StillWaiting,
            Self::OutsideHours,
            Self::Timeout,
            Self::Requested,
            Self::Joined,
            Self::Released,
        ]
        .into_iter()
        .find(|notice| notice.key() == key)
    }

    /// [`Joined`](Self::Joined)'s sentence in `language`, naming `agent`.
    pub fn joined(language: Language, agent: &str) -> String {
        Self::Joined
            .text(language, Register::Friendly, None)
            .replace("{agent}", agent)
    }

    /// The sentence in `language`, in Vietnamese in `register` (its `.em` line when polite
    /// and the file has one); `{hours}` is filled from `hours` (formatted with
    /// [`format_hours`]).
    pub fn text(
        self,
        language: Language,
        register: Register,
        hours: Option<&[OfficeHours]>,
    ) -> String {
        let sentences = match language {
            Language::Vi => SENTENCES_VI,
            Language::En => SENTENCES_EN,
        };
        let line = |key: &str| {
            sentences
                .lines()
                .find_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
                .map(str::trim)
        };
        let polite = (register == Register::Polite)
            .then(|| line(&alloc::format!("{}.em", self.key())))
            .flatten();
        let text = polite.or_else(|| line(self.key())).unwrap_or("");
        match hours {
            Some(hours) if text.contains("{hours}") => {
                text.replace("{hours}", &format_hours(language, hours))
            }
            _ => text.replace(" ({hours})", ""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_notice_has_a_sentence_in_both_languages_and_parses_back() {
        for notice in [
            Notice::Waiting,
            Notice::StillWaiting,
            Notice::OutsideHours,
            Notice::Timeout,
            Notice::Requested,
            Notice::Joined,
            Notice::Released,
        ] {
            assert_eq!(Notice::parse(notice.key()), Some(notice));
            for language in [Language::Vi, Language::En] {
                assert!(
                    !notice.text(language, Register::Friendly, None).is_empty(),
                    "{notice:?}"
                );
            }
        }
        assert_eq!(Notice::parse("nonsense"), None);
        assert_eq!(
            Notice::joined(Language::Vi, "Lan"),
            "Lan đã tham gia cuộc trò chuyện."
        );
        assert!(Notice::Joined.is_state() && !Notice::Timeout.is_state());
    }
}
