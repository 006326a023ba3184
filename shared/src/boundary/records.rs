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
    /// Day, 1–31.
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
    /// A date; `None` unless month is 1–12 and day 1–31.
    pub fn new(year: u16, month: u8, day: u8) -> Option<Self> {
        ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some(Self { year, month, day })
    }

    /// Parses an ISO date, `YYYY-MM-DD` (the D1 column's format).
    pub fn parse_iso(text: &str) -> Option<Self> {
        let mut parts = text.trim().splitn(3, '-');
        let year = parts.next()?.parse().ok()?;
        let month = parts.next()?.parse().ok()?;
        let day = parts.next()?.parse().ok()?;
        Self::new(year, month, day)
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
