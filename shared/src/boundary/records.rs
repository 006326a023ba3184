//! Record lookups templates need: warranty records (seed 000).

use alloc::format;
use alloc::string::String;
use core::fmt;
use serde::{Deserialize, Serialize};

use crate::conversation::Language;
use crate::error::ServiceError;

/// A calendar date (no time zone: warranty end dates are days).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CalendarDate {
    /// Year, e.g. 2026.
    pub year: u16,
    /// Month, 1–12.
    pub month: u8,
    /// Day of the month, 1 to its last day.
    pub day: u8,
}

const MONTHS_EN: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

impl CalendarDate {
    /// A date; `None` unless it exists in the (proleptic Gregorian) calendar: year 1–9999,
    /// month 1–12, day 1 to the month's last day (29 February in leap years only).
    pub fn new(year: u16, month: u8, day: u8) -> Option<Self> {
        ((1..=9999).contains(&year) && (1..=days_in_month(year, month)).contains(&day))
            .then_some(Self { year, month, day })
    }

    /// Parses an ISO date, exactly `YYYY-MM-DD` (ten ASCII characters, no sign, no
    /// spaces) naming a day that exists. This is the rule for every date the service
    /// accepts and the D1 column's format.
    pub fn parse_iso(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let shape = bytes.len() == 10
            && bytes.iter().enumerate().all(|(i, b)| match i {
                4 | 7 => *b == b'-',
                _ => b.is_ascii_digit(),
            });
        if !shape {
            return None;
        }
        let number = |range: core::ops::Range<usize>| {
            bytes[range]
                .iter()
                .fold(0u16, |n, b| n * 10 + u16::from(b - b'0'))
        };
        let month = u8::try_from(number(5..7)).ok()?;
        let day = u8::try_from(number(8..10)).ok()?;
        Self::new(number(0..4), month, day)
    }

    /// `YYYY-MM-DD`.
    pub fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// The date as a visitor reads it: `12/8/2026` in Vietnamese (day/month/year, as the
    /// seed writes it), `12 August 2026` in English.
    pub fn display(self, language: Language) -> String {
        match language {
            Language::Vi => format!("{}/{}/{}", self.day, self.month, self.year),
            Language::En => {
                let month = MONTHS_EN
                    .get(usize::from(self.month) - 1)
                    .copied()
                    .unwrap_or("?");
                format!("{} {} {}", self.day, month, self.year)
            }
        }
    }
}

/// Whether `year` has a 29 February.
fn is_leap_year(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

/// The number of days in `month` of `year` (0 for a month that does not exist).
fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

impl fmt::Display for CalendarDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Serialize for CalendarDate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.iso())
    }
}

impl<'de> Deserialize<'de> for CalendarDate {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse_iso(&text).ok_or_else(|| serde::de::Error::custom("expected a YYYY-MM-DD date"))
    }
}

/// A product's warranty record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarrantyRecord {
    /// The serial number, as recorded.
    pub serial: String,
    /// Product name, e.g. "S23 Ultra".
    pub product: String,
    /// The last day of warranty.
    pub warranty_until: CalendarDate,
}

/// Looks up warranty records of a site.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait WarrantyRecords {
    /// The record for `serial` on `site_id`, if any. Implementations match serials
    /// case-insensitively.
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError>;
}

impl<T: WarrantyRecords + ?Sized> WarrantyRecords for &T {
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError> {
        (**self).find_warranty(site_id, serial).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_must_exist_in_the_calendar() {
        for valid in [
            "2026-08-12",
            "2028-02-29",
            "2000-02-29",
            "2026-12-31",
            "0001-01-01",
        ] {
            let date = CalendarDate::parse_iso(valid).expect(valid);
            assert_eq!(date.iso(), valid);
        }
        for invalid in [
            "2026-02-31",
            "2026-02-29",
            "1900-02-29",
            "2026-04-31",
            "2026-13-01",
            "2026-00-10",
            "2026-01-00",
            "0000-01-01",
        ] {
            assert_eq!(CalendarDate::parse_iso(invalid), None, "{invalid}");
        }
    }

    #[test]
    fn iso_dates_are_exactly_ten_ascii_characters() {
        for malformed in [
            "2026-+2-01",
            "2026-02-+1",
            "+026-02-01",
            "2026-2-01",
            "2026-02-1",
            " 2026-02-01",
            "2026-02-01 ",
            "2026/02/01",
            "20260201",
            "2026-02-01T00",
            "２０２６-02-01",
            "",
        ] {
            assert_eq!(CalendarDate::parse_iso(malformed), None, "{malformed:?}");
        }
    }

    #[test]
    fn new_checks_the_month_length() {
        assert!(CalendarDate::new(2024, 2, 29).is_some());
        assert!(CalendarDate::new(2023, 2, 29).is_none());
        assert!(CalendarDate::new(2026, 6, 31).is_none());
        assert!(CalendarDate::new(2026, 7, 31).is_some());
        assert!(CalendarDate::new(0, 1, 1).is_none());
    }
}
