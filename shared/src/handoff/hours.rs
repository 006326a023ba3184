//! Office hours: when a person may answer. Days are 1 = Monday … 7 = Sunday; times are
//! local `HH:MM` in the site's time zone (the Worker works out the local day and time).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::conversation::Language;

/// A time of day, in minutes after midnight (`00:00` to `24:00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClockTime(u16);

/// Minutes in a day.
const DAY_MINUTES: u16 = 24 * 60;

impl ClockTime {
    /// Parses `H:MM` or `HH:MM`, `00:00` to `24:00`.
    pub fn parse(text: &str) -> Option<Self> {
        let (hours, minutes) = text.split_once(':')?;
        let digits = |s: &str, max_len: usize| {
            (!s.is_empty() && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u16>().ok())
                .flatten()
        };
        if minutes.len() != 2 {
            return None;
        }
        let (hours, minutes) = (digits(hours, 2)?, digits(minutes, 2)?);
        let total = hours.checked_mul(60)?.checked_add(minutes)?;
        (minutes < 60 && total <= DAY_MINUTES).then_some(Self(total))
    }

    /// At `minutes` after midnight (`None` past `24:00`).
    pub fn from_minutes(minutes: u16) -> Option<Self> {
        (minutes <= DAY_MINUTES).then_some(Self(minutes))
    }

    /// Minutes after midnight.
    pub fn minutes(self) -> u16 {
        self.0
    }
}

/// `HH:MM`, the stored form.
impl fmt::Display for ClockTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

impl Serialize for ClockTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ClockTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{text}` is not a time: write HH:MM, 00:00 to 24:00"
            ))
        })
    }
}

/// One span of office hours: on each of `days`, from `start` to `end` (local time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfficeHours {
    /// 1 = Monday … 7 = Sunday.
    pub days: Vec<u8>,
    /// Opening time.
    pub start: ClockTime,
    /// Closing time (after `start`; `24:00` is midnight at the day's end).
    pub end: ClockTime,
}

/// Why office hours were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoursError {
    /// The list is empty (`null` means always open).
    Empty,
    /// More spans than [`MAX_SPANS`].
    TooMany,
    /// Span `index` (from 0) lists no day.
    NoDays(usize),
    /// Span `index` has a day outside 1..=7.
    BadDay(usize, u8),
    /// Span `index` lists a day twice.
    RepeatedDay(usize, u8),
    /// Span `index` does not end after it starts.
    EndsBeforeStart(usize),
}

/// The most spans office hours may have.
pub const MAX_SPANS: usize = 14;

impl fmt::Display for HoursError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => f.write_str(
                "`office_hours` must list at least one span, or be null (a person may answer at any time)",
            ),
            Self::TooMany => write!(f, "`office_hours` may list at most {MAX_SPANS} spans"),
            Self::NoDays(i) => write!(f, "`office_hours[{i}].days` must list at least one day"),
            Self::BadDay(i, day) => write!(
                f,
                "`office_hours[{i}].days`: {day} is not a day (1 = Monday … 7 = Sunday)"
            ),
            Self::RepeatedDay(i, day) => {
                write!(f, "`office_hours[{i}].days` lists {day} twice")
            }
            Self::EndsBeforeStart(i) => write!(
                f,
                "`office_hours[{i}]`: `end` must be after `start` (split a span past midnight in two)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for HoursError {}

/// Checks office hours as a site sets them.
pub fn check_hours(hours: &[OfficeHours]) -> Result<(), HoursError> {
    if hours.is_empty() {
        return Err(HoursError::Empty);
    }
    if hours.len() > MAX_SPANS {
        return Err(HoursError::TooMany);
    }
    for (i, span) in hours.iter().enumerate() {
        if span.days.is_empty() {
            return Err(HoursError::NoDays(i));
        }
        for (j, &day) in span.days.iter().enumerate() {
            if !(1..=7).contains(&day) {
                return Err(HoursError::BadDay(i, day));
            }
            if span.days[..j].contains(&day) {
                return Err(HoursError::RepeatedDay(i, day));
            }
        }
        if span.end <= span.start {
            return Err(HoursError::EndsBeforeStart(i));
        }
    }
    Ok(())
}

/// Whether a person may answer on local `weekday` (1 = Monday … 7 = Sunday) at `minutes`
/// after local midnight. `None`: always.
pub fn open_at(weekday: u8, minutes: u16, hours: Option<&[OfficeHours]>) -> bool {
    let Some(hours) = hours else {
        return true;
    };
    hours
        .iter()
        .any(|span| span.days.contains(&weekday) && span.start.0 <= minutes && minutes < span.end.0)
}

const DAYS_VI: [&str; 7] = [
    "thứ Hai",
    "thứ Ba",
    "thứ Tư",
    "thứ Năm",
    "thứ Sáu",
    "thứ Bảy",
    "Chủ nhật",
];
const DAYS_EN: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Office hours as the visitor reads them: `8:00–17:30, thứ Hai – thứ Sáu`; several spans
/// joined by `; `. Three or more days in a row are a range; every day is "hằng ngày" /
/// "every day".
pub fn format_hours(language: Language, hours: &[OfficeHours]) -> String {
    let mut out = String::new();
    for span in hours {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&format!(
            "{}–{}, {}",
            short_time(span.start),
            short_time(span.end),
            format_days(language, &span.days)
        ));
    }
    out
}

/// `8:00`, `17:30`: the hour without a leading zero.
fn short_time(time: ClockTime) -> String {
    format!("{}:{:02}", time.0 / 60, time.0 % 60)
}

fn format_days(language: Language, days: &[u8]) -> String {
    let names = match language {
        Language::Vi => &DAYS_VI,
        Language::En => &DAYS_EN,
    };
    let mut sorted: Vec<u8> = days
        .iter()
        .copied()
        .filter(|d| (1..=7).contains(d))
        .collect();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() == 7 {
        return String::from(match language {
            Language::Vi => "hằng ngày",
            Language::En => "every day",
        });
    }
    let name = |day: u8| names[usize::from(day - 1)];
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{} – {}", name(sorted[i]), name(sorted[j])));
        } else {
            parts.extend(sorted[i..=j].iter().map(|&d| String::from(name(d))));
        }
        i = j + 1;
    }
    parts.join(", ")
}
