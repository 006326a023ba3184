//! The warranty branch's rules (seed 000, "Nhánh chuyên biệt: Warranty"): which words are
//! serials, and when the assistant is awaiting one.
//!
//! A serial is 3–32 characters of `[A-Za-z0-9-]` with no inner whitespace. Ordinary words
//! are never serials: a candidate must contain a digit or be written in capitals, and is
//! not one of the [`NOT_SERIALS`]. A serial is taken, in this order:
//! - after a label ([`SERIAL_LABELS`]: `SN`, `S/N`, `serial`, `seri`, `sê-ri`, `IMEI`,
//!   `số máy`, `mã máy`, `service tag`), in any case, with or without a colon, past filler
//!   words (`là`, `của em`, `number is`, `ạ`): `SN: ABC123-XYZ`, `Số serial của máy em là
//!   abc123 nhé`, `my s/n is DLXJ2K3M`;
//! - when the message is nothing but the serial and politeness: `0979825281`,
//!   `của em là SN-8841-QX ạ` (here a digit is required, and a bare number of four digits
//!   or fewer, `4060`, may be a model number: it waits for the next rule);
//! - while awaiting a serial, also anywhere in the message, if it contains a digit.
//!
//! Outside a label, a word that is something else is not taken: a model name (`iPhone15`,
//! `RTX4090`, `4090` after `RTX`, `G16` after `Strix`, `i7-13700K`), a quantity (`16GB`,
//! `500k`), an amount (`2500000`), a year, a date (`12-08-2024`), a time (`10h30`), a
//! number a label names as something else (`sđt 0912345678`, `mã đơn hàng DH2024`,
//! `hotline 19001234`), or one piece of a code written with spaces (`F2LX K9P0 Q1`, which
//! the seed's rule refuses whole).
//!
//! The word lists are in `words`, the scan of a message's words in `scan`.

use alloc::string::String;

use crate::conversation::{MessageKind, Role, StoredMessage};

mod scan;
mod words;

use scan::{after_label, alone, anywhere, tokenize};

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

/// Labels that announce a serial, as folded words (`Số máy` → `so may`, `S/N` → `s n`).
pub const SERIAL_LABELS: &[&[&str]] = &[
    &["serial"],
    &["serials"],
    &["seri"],
    &["se-ri"],
    &["se", "ri"],
    &["sn"],
    &["s n"],
    &["imei"],
    &["so", "may"],
    &["ma", "may"],
    &["service", "tag"],
];
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

/// The serial in `text`, if any (see the module docs for the rules).
pub fn extract_serial(text: &str, awaiting_serial: bool) -> Option<String> {
    let tokens = tokenize(text);
    after_label(&tokens)
        .or_else(|| alone(&tokens))
        .or_else(|| awaiting_serial.then(|| anywhere(&tokens)).flatten())
        .map(|i| tokens[i].text.into())
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
    fn serials_after_labels_in_any_case_past_filler_words() {
        let cases = [
            ("số máy: F2LXK9P0Q1", "F2LXK9P0Q1"),
            ("SỐ MÁY F2LXK9P0Q1", "F2LXK9P0Q1"),
            ("Mã Máy Là MXQ-7781-B", "MXQ-7781-B"),
            ("so may cua em la 5CD1234XYZ nhe", "5CD1234XYZ"),
            ("số sê-ri: W8812345", "W8812345"),
            ("Serial của máy em là ABC123", "ABC123"),
            ("my s/n is DLXJ2K3M, thanks", "DLXJ2K3M"),
            ("Service tag: 4HJK8812", "4HJK8812"),
            ("SERIAL: QWERTYUI", "QWERTYUI"),
            ("của em là SN-8841-QX ạ", "SN-8841-QX"),
        ];
        for (text, serial) in cases {
            assert_eq!(
                extract_serial(text, false).as_deref(),
                Some(serial),
                "{text}"
            );
        }
    }

    #[test]
    fn words_that_are_something_else_are_not_serials() {
        for text in [
            "iPhone15 của em bị lỗi màn hình",
            "card RTX 4090 của em bị lỗi",
            "my laptop is an ASUS ROG Strix G16",
            "Core i7-13700K bị nóng quá",
            "máy 16GB RAM, ổ 512GB ạ",
            "em trả 2500000 cho con chuột này",
            "mua năm 2024 ạ",
            "sđt 0987654321 ạ",
            "0912345678 là số điện thoại của em",
            "mã đơn hàng DH20240917 ạ",
            "số máy: F2LX K9P0 Q1",
            "giá 2.500.000đ",
            "ALO",
            "RTX4090",
        ] {
            assert_eq!(extract_serial(text, true), None, "{text}");
        }
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
