//! Handoff to a person: recognising a visitor's request for one ([`asks_for_person`]),
//! the site's office hours ([`OfficeHours`], [`open_at`], [`format_hours`]), what the
//! visitor is told ([`Notice`]) and the handoff states ([`HandoffState`]).
//!
//! The Worker runs the handoff (a conversation's Durable Object holds its state and its
//! timer); this module decides, with no I/O.
//!
//! ```
//! use concierge_core::conversation::Language;
//! use concierge_core::handoff::{asks_for_person, Notice};
//!
//! assert!(asks_for_person("Cho em gặp nhân viên tư vấn với"));
//! assert!(asks_for_person("can I talk to a real person?"));
//! assert!(!asks_for_person("nhân viên giao hàng chưa tới"));
//! assert!(!Notice::Timeout.text(Language::Vi, None).is_empty());
//! ```

use alloc::string::String;

use crate::conversation::Language;

mod hours;
mod phrases;

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
}

impl Notice {
    /// The sentence's key in the sentence files.
    pub fn key(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::StillWaiting => "still_waiting",
            Self::OutsideHours => "outside_hours",
            Self::Timeout => "timeout",
        }
    }

    /// The sentence in `language`; `{hours}` is filled from `hours` (formatted with
    /// [`format_hours`]).
    pub fn text(self, language: Language, hours: Option<&[OfficeHours]>) -> String {
        let sentences = match language {
            Language::Vi => SENTENCES_VI,
            Language::En => SENTENCES_EN,
        };
        let key = self.key();
        let text = sentences
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
            .map_or("", str::trim);
        match hours {
            Some(hours) if text.contains("{hours}") => {
                text.replace("{hours}", &format_hours(language, hours))
            }
            _ => text.replace(" ({hours})", ""),
        }
    }
}
