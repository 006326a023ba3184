//! The warranty branch's rules (seed 000, "Nhánh chuyên biệt: Warranty"): which words are
//! serials, and when the assistant is awaiting one.
//!
//! A serial is 3–32 characters of `[A-Za-z0-9-]` with no inner whitespace. Ordinary words
//! are never serials: a candidate must contain a digit or be written in capitals, and is
//! not one of the [`NOT_SERIALS`]. A serial is taken
//! - after a marker (`SN`, `S/N`, `serial`, `seri`, `IMEI`) within the next four words:
//!   `SN: ABC123-XYZ`, `serial là 0979825281.`;
//! - when the message is nothing but the serial: `0979825281`;
//! - while awaiting a serial, also anywhere in the message, if it contains a digit (dates
//!   such as `12-08-2024` excepted).

use alloc::string::String;

use crate::conversation::{MessageKind, Role, StoredMessage};

/// Shortest serial.
pub const SERIAL_MIN_CHARS: usize = 3;
/// Longest serial.
pub const SERIAL_MAX_CHARS: usize = 32;

/// Words that are never serials, whatever their case.
pub const NOT_SERIALS: &[&str] = &[
    "check", "warranty", "serial", "seri", "model", "number", "code", "imei", "product", "please",
    "hello", "thanks", "okay", "yes", "the", "and", "for", "sku", "cpu", "gpu", "ssd", "hdd",
    "psu", "ram", "rma", "doa", "atx", "bios", "fps", "usb", "led", "lcd", "hdmi", "vga", "wifi",
    "oled", "nvme", "sata", "ddr4", "ddr5", "rtx", "gtx", "amd", "intel", "asus", "msi", "acer",
    "dell", "ok", "sn", "pc",
];

const MARKERS: &[&str] = &["sn", "s/n", "serial", "seri", "imei"];

/// The metadata key of a warranty message's step.
pub const STEP_KEY: &str = "warranty_step";

/// What a warranty message did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarrantyStep {
    /// Asked for the serial.
    AskSerial,
    /// Reminded the serial rule after an invalid answer.
    RemindRule,
    /// Found the record.
    Found,
    /// No such serial.
    NotFound,
}

impl WarrantyStep {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AskSerial => "ask_serial",
            Self::RemindRule => "remind_rule",
            Self::Found => "found",
            Self::NotFound => "not_found",
        }
    }
}

/// Whether `word` obeys the serial rule: 3–32 characters of `[A-Za-z0-9-]`.
pub fn is_valid_serial(word: &str) -> bool {
    (SERIAL_MIN_CHARS..=SERIAL_MAX_CHARS).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Whether `word` is a serial and not an ordinary word.
fn is_serial_like(word: &str) -> bool {
    let has_digit = word.bytes().any(|b| b.is_ascii_digit());
    let capitals = word.bytes().all(|b| b.is_ascii_uppercase() || b == b'-');
    is_valid_serial(word)
        && (has_digit || capitals)
        && !NOT_SERIALS
            .iter()
            .any(|stop| stop.eq_ignore_ascii_case(word))
}

fn is_date(word: &str) -> bool {
    let mut parts = word.split('-');
    let lengths = [parts.next(), parts.next(), parts.next(), parts.next()].map(|p| p.map(str::len));
    let numeric = word
        .split('-')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    numeric && matches!(lengths, [Some(1..=2), Some(1..=2), Some(2..=4), None])
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || ",.;:!?()[]{}\"'“”‘’<>|=#*".contains(c)
}

/// The serial in `text`, if any (see the module docs for the rules).
pub fn extract_serial(text: &str, awaiting_serial: bool) -> Option<String> {
    let words = || {
        text.split(is_separator)
            .map(|w| w.trim_matches('-'))
            .filter(|w| !w.is_empty())
    };
    let mut after_marker = 0;
    for word in words() {
        if MARKERS
            .iter()
            .any(|marker| marker.eq_ignore_ascii_case(word))
        {
            after_marker = 4;
            continue;
        }
        if after_marker > 0 {
            if is_serial_like(word) {
                return Some(word.into());
            }
            after_marker -= 1;
        }
    }
    let mut all = words();
    if let (Some(only), None) = (all.next(), all.next())
        && is_serial_like(only)
    {
        return Some(only.into());
    }
    if awaiting_serial {
        return words()
            .find(|w| w.bytes().any(|b| b.is_ascii_digit()) && is_serial_like(w) && !is_date(w))
            .map(String::from);
    }
    None
}

/// The step of a warranty message, from its metadata.
pub fn step_of(message: &StoredMessage) -> Option<&str> {
    (message.kind == MessageKind::Warranty)
        .then(|| message.meta_str(STEP_KEY))
        .flatten()
}

/// Seed 000: "awaiting serial" holds only if the assistant's message right before the
/// visitor's current one asked for the serial or reminded its rule. A lookup result does
/// not keep it.
pub fn awaiting_serial(history_before_current: &[StoredMessage]) -> bool {
    history_before_current.last().is_some_and(|message| {
        message.role == Role::Assistant
            && matches!(step_of(message), Some(step) if step == WarrantyStep::AskSerial.as_str()
                || step == WarrantyStep::RemindRule.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serials_after_markers_alone_or_awaited() {
        let cases = [
            ("SN: ABC123-XYZ", false, Some("ABC123-XYZ")),
            ("serial là 0979825281.", false, Some("0979825281")),
            ("0979825281", false, Some("0979825281")),
            ("  ABC123-XYZ. ", false, Some("ABC123-XYZ")),
            (
                "Kiểm tra bảo hành giúp em, S/N: r58m123abcd",
                false,
                Some("r58m123abcd"),
            ),
            ("serial number: R58M123ABCD", false, Some("R58M123ABCD")),
            ("serial của mình là abc123 nhé", false, Some("abc123")),
            ("máy của em mã 0979825281 ạ", true, Some("0979825281")),
            ("máy của em mã 0979825281 ạ", false, None),
            ("mua ngày 12-08-2024", true, None),
        ];
        for (text, awaiting, serial) in cases {
            assert_eq!(extract_serial(text, awaiting).as_deref(), serial, "{text}");
        }
    }

    #[test]
    fn ordinary_words_are_never_serials() {
        for text in [
            "check",
            "warranty",
            "serial",
            "model",
            "CHECK",
            "check warranty",
            "what is the serial for",
            "serial: check",
            "SN",
            "kiểm tra bảo hành",
            "hello",
            "ok",
        ] {
            assert_eq!(extract_serial(text, true), None, "{text}");
            assert_eq!(extract_serial(text, false), None, "{text}");
        }
        // A model number is not taken unless a serial is awaited.
        assert_eq!(extract_serial("bảo hành RTX 4060 bao lâu", false), None);
    }

    #[test]
    fn the_serial_rule() {
        assert!(is_valid_serial("AB1"));
        assert!(is_valid_serial(&"A".repeat(32)));
        assert!(!is_valid_serial("A1"));
        assert!(!is_valid_serial(&"A".repeat(33)));
        assert!(!is_valid_serial("AB 12"));
        assert!(!is_valid_serial("AB_12"));
        assert_eq!(extract_serial(&"9".repeat(33), true), None);
        assert_eq!(extract_serial("A@1", true), None);
    }
}
