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

use alloc::string::String;
use alloc::vec::Vec;

use crate::conversation::{MessageKind, Role, StoredMessage};
use crate::normalize::fold;

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

/// Labels that announce a number that is not a serial: phone, order, price, invoice,
/// account, voucher.
const OTHER_LABELS: &[&[&str]] = &[
    &["so", "dien", "thoai"],
    &["dien", "thoai"],
    &["sdt"],
    &["dt"],
    &["phone"],
    &["tel"],
    &["hotline"],
    &["zalo"],
    &["goi"],
    &["call"],
    &["don", "hang"],
    &["ma", "don"],
    &["order"],
    &["gia"],
    &["price"],
    &["hoa", "don"],
    &["invoice"],
    &["stk"],
    &["tai", "khoan"],
    &["account"],
    &["voucher"],
    &["coupon"],
    &["ma", "giam", "gia"],
];

/// Words that may stand between a label and its value (folded).
const FILLERS: &[&str] = &[
    "la", "cua", "em", "e", "minh", "toi", "anh", "chi", "ban", "may", "nay", "no", "do", "day",
    "a", "da", "thi", "nhu", "sau", "so", "ma", "cho", "shop", "ad", "oi", "nhe", "nha", "ne",
    "ha", "vay", "voi", "qua", "san", "pham", "sp", "con", "cai", "chiec", "ben", "is", "my",
    "the", "number", "nr", "num", "of", "this", "it", "its", "s", "here", "an", "i", "product",
    "device", "mine", "as", "follows", "code", "please", "pls", "ok", "okay", "yes", "thanks",
    "thank", "you", "hi", "hello", "m", "am",
];

/// Words that may surround a serial sent alone: politeness and "here it is" (folded).
const POLITE: &[&str] = &[
    "la", "cua", "em", "e", "minh", "toi", "day", "a", "da", "nhe", "nha", "ne", "shop", "oi",
    "ad", "ok", "okay", "here", "it", "is", "its", "s", "my", "mine", "this", "thanks", "thank",
    "you", "please", "pls",
];

/// Product lines and well-known codes: followed by digits they name a model or a code
/// (`RTX4090`, `iphone15`, `COVID19`), and a word right after them is part of the name.
const PRODUCT_WORDS: &[&str] = &[
    "rtx",
    "gtx",
    "gt",
    "rx",
    "arc",
    "radeon",
    "geforce",
    "quadro",
    "iphone",
    "ipad",
    "ipod",
    "imac",
    "macbook",
    "galaxy",
    "note",
    "pixel",
    "redmi",
    "poco",
    "xperia",
    "ryzen",
    "xeon",
    "core",
    "celeron",
    "pentium",
    "athlon",
    "ddr",
    "lpddr",
    "gddr",
    "ps",
    "xbox",
    "thinkpad",
    "ideapad",
    "yoga",
    "zenbook",
    "vivobook",
    "rog",
    "tuf",
    "strix",
    "legion",
    "nitro",
    "predator",
    "aspire",
    "swift",
    "omen",
    "pavilion",
    "victus",
    "envy",
    "spectre",
    "xps",
    "inspiron",
    "vostro",
    "latitude",
    "alienware",
    "surface",
    "windows",
    "win",
    "office",
    "android",
    "ios",
    "usb",
    "wifi",
    "hdmi",
    "mp",
    "covid",
    "intel",
    "amd",
    "nvidia",
    "asus",
    "msi",
    "acer",
    "dell",
    "hp",
    "lenovo",
    "samsung",
    "apple",
    "gigabyte",
    "logitech",
    "sony",
];

/// Units and currencies: a number followed by one is a quantity (`16GB`, `500 k`).
const UNITS: &[&str] = &[
    "gb", "tb", "mb", "kb", "g", "ghz", "mhz", "hz", "w", "kw", "wh", "mah", "v", "k", "tr",
    "trieu", "p", "fps", "inch", "in", "cm", "mm", "m", "kg", "ms", "x", "th", "st", "nd", "rd",
    "d", "dong", "vnd", "usd", "nits", "bit", "nghin", "ngan", "h", "am", "pm", "min", "s",
];

/// How many filler words may stand between a label and its value.
const MAX_FILLERS: usize = 6;
/// The most words in a label.
const MAX_LABEL_WORDS: usize = 3;
/// How many words back a product name may reach (`Ryzen 7 7800X3D`).
const MAX_NAME_WORDS: usize = 3;

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
    let capitals = word.bytes().all(|b| b.is_ascii_uppercase() || b == b'-');
    is_valid_serial(word)
        && (has_digit(word) || capitals)
        && !NOT_SERIALS
            .iter()
            .any(|stop| stop.eq_ignore_ascii_case(word))
}

fn has_digit(word: &str) -> bool {
    word.bytes().any(|b| b.is_ascii_digit())
}

/// `12-08-2024`, `12-8`.
fn is_date(word: &str) -> bool {
    let mut parts = word.split('-');
    let lengths = [parts.next(), parts.next(), parts.next(), parts.next()].map(|p| p.map(str::len));
    let numeric = word
        .split('-')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    numeric
        && matches!(
            lengths,
            [Some(1..=2), Some(1..=2), Some(2..=4) | None, None]
        )
}

/// `10h`, `10h30`, `9g15` (Vietnamese clock times).
fn is_time(word: &str) -> bool {
    let hours = word.bytes().take_while(u8::is_ascii_digit).count();
    let rest = word.as_bytes().get(hours + 1..).unwrap_or_default();
    (1..=2).contains(&hours)
        && matches!(word.as_bytes().get(hours), Some(b'h' | b'H' | b'g' | b'G'))
        && rest.len() <= 2
        && rest.iter().all(u8::is_ascii_digit)
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || ",.;:!?()[]{}\"'“”‘’<>|=#*+".contains(c)
}

/// One word of the message as written.
#[derive(Debug)]
struct Token<'a> {
    /// As written (hyphens at its ends trimmed).
    text: &'a str,
    /// Lower-case, without diacritics, its parts joined by spaces (`S/N` → `s n`).
    folded: String,
    /// Only whitespace separates it from the previous word.
    glued: bool,
}

/// The words of `text`. Punctuation separates words, except `.` and `,` between digits
/// (`2.500.000` stays one word, which is no serial).
fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut punctuated = false;
    let mut glued = true;
    let mut previous = ' ';
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map_or(' ', |&(_, n)| n);
        let grouping = matches!(c, '.' | ',') && previous.is_ascii_digit() && next.is_ascii_digit();
        previous = c;
        if is_separator(c) && !grouping {
            if let Some(from) = start.take() {
                add(text, from, at, glued, &mut out);
            }
            punctuated |= !c.is_whitespace();
        } else if start.is_none() {
            start = Some(at);
            glued = !punctuated;
            punctuated = false;
        }
    }
    if let Some(from) = start {
        add(text, from, text.len(), glued, &mut out);
    }
    out
}

fn add<'a>(text: &'a str, from: usize, to: usize, glued: bool, out: &mut Vec<Token<'a>>) {
    let word = text[from..to].trim_matches('-');
    if !word.is_empty() {
        out.push(Token {
            text: word,
            folded: fold(word),
            glued,
        });
    }
}

/// The length in words of the label of `labels` starting at word `at`, if one does.
fn label_at(tokens: &[Token<'_>], at: usize, labels: &[&[&str]]) -> Option<usize> {
    labels
        .iter()
        .filter(|label| {
            label.len() <= tokens.len().saturating_sub(at)
                && label
                    .iter()
                    .zip(&tokens[at..])
                    .all(|(word, token)| token.folded == *word)
        })
        .map(|label| label.len())
        .max()
}

/// The first serial after a serial label.
fn after_label(tokens: &[Token<'_>]) -> Option<usize> {
    let mut at = 0;
    while at < tokens.len() {
        let Some(length) = label_at(tokens, at, SERIAL_LABELS) else {
            at += 1;
            continue;
        };
        let mut value = at + length;
        let mut fillers = 0;
        while value < tokens.len() {
            if let Some(length) = label_at(tokens, value, SERIAL_LABELS) {
                value += length;
            } else if fillers < MAX_FILLERS && FILLERS.contains(&tokens[value].folded.as_str()) {
                value += 1;
                fillers += 1;
            } else {
                break;
            }
        }
        if value < tokens.len() && is_serial_like(tokens[value].text) && !spaced(tokens, value) {
            return Some(value);
        }
        at = value;
    }
    None
}

/// The serial of a message that is nothing but one (and politeness).
fn alone(tokens: &[Token<'_>]) -> Option<usize> {
    let mut others = (0..tokens.len()).filter(|&i| !POLITE.contains(&tokens[i].folded.as_str()));
    let (Some(only), None) = (others.next(), others.next()) else {
        return None;
    };
    let word = tokens[only].text;
    // Four digits or fewer alone may as well be a model number (`4060`): taken only when a
    // serial is awaited.
    let short_number = word.len() < 5 && word.bytes().all(|b| b.is_ascii_digit());
    (has_digit(word) && !short_number && is_serial_like(word) && !something_else(tokens, only))
        .then_some(only)
}

/// The first word with a digit that can be a serial, anywhere.
fn anywhere(tokens: &[Token<'_>]) -> Option<usize> {
    (0..tokens.len()).find(|&i| {
        let word = tokens[i].text;
        has_digit(word) && is_serial_like(word) && !something_else(tokens, i)
    })
}

/// Whether word `i`, outside a label, is something other than a serial (see the module
/// docs).
fn something_else(tokens: &[Token<'_>], i: usize) -> bool {
    let word = tokens[i].text;
    is_date(word)
        || is_time(word)
        || product_name(tokens, i)
        || quantity(tokens, i)
        || amount_or_year(word)
        || named_otherwise(tokens, i)
        || spaced(tokens, i)
}

/// `iPhone15`, `RTX4090`, `i7-13700K`, `COVID19`; `4090` in `RTX 4090`, `G16` in
/// `ROG Strix G16`, `7800X3D` in `Ryzen 7 7800X3D`.
fn product_name(tokens: &[Token<'_>], i: usize) -> bool {
    product_shape(tokens[i].text) || follows_product_word(tokens, i, MAX_NAME_WORDS)
}

/// `iPhone15` (a capital after a lower-case letter), `RTX4090` (a product word, then
/// digits), `i7-13700K`.
fn product_shape(word: &str) -> bool {
    let bytes = word.as_bytes();
    let camel = bytes
        .windows(2)
        .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
    let letters = bytes.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let lower = word.to_ascii_lowercase();
    let product_prefix = letters > 0
        && bytes.get(letters).is_some_and(u8::is_ascii_digit)
        && PRODUCT_WORDS.contains(&&lower[..letters]);
    let intel = matches!(lower.as_bytes(), [b'i', b'3' | b'5' | b'7' | b'9', rest @ ..]
        if rest.is_empty() || rest[0] == b'-');
    camel || product_prefix || intel
}

/// Whether word `i` (with a digit) continues a product name: right after a product word, a
/// capitalised word that is no filler or label (`Strix G16`), or another part of the name
/// (looking at most `reach` words back).
fn follows_product_word(tokens: &[Token<'_>], i: usize, reach: usize) -> bool {
    if reach == 0 || i == 0 || !tokens[i].glued || !has_digit(tokens[i].text) {
        return false;
    }
    let previous = &tokens[i - 1];
    let folded = previous.folded.as_str();
    let capitalised = previous.text.bytes().all(|b| b.is_ascii_alphabetic())
        && previous.text.as_bytes()[0].is_ascii_uppercase()
        && !FILLERS.contains(&folded)
        && !POLITE.contains(&folded)
        && label_at(tokens, i - 1, SERIAL_LABELS).is_none();
    PRODUCT_WORDS.contains(&folded)
        || capitalised
        || product_shape(previous.text)
        || follows_product_word(tokens, i - 1, reach - 1)
}

/// `16GB`, `500k`, `2500000 đ`.
fn quantity(tokens: &[Token<'_>], i: usize) -> bool {
    let word = tokens[i].text;
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let unit = word[digits..].to_ascii_lowercase();
    if UNITS.contains(&unit.as_str()) {
        return true;
    }
    unit.is_empty()
        && tokens
            .get(i + 1)
            .is_some_and(|next| next.glued && UNITS.contains(&next.folded.as_str()))
}

/// A round amount (`2500000`, four digits or more ending in `000`) or a year (`2024`).
fn amount_or_year(word: &str) -> bool {
    if !word.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let round = word.len() >= 4 && word.ends_with("000");
    let year = word.len() == 4 && (word.starts_with("19") || word.starts_with("20"));
    round || year
}

/// Whether a label of something else (phone, order, price…) names word `i`: it stands
/// right before it, or right after it, past filler words.
fn named_otherwise(tokens: &[Token<'_>], i: usize) -> bool {
    let is_filler = |t: &Token<'_>| FILLERS.contains(&t.folded.as_str());
    let label_ends_at = |end: usize| {
        (end.saturating_sub(MAX_LABEL_WORDS)..end).any(|start| {
            label_at(tokens, start, OTHER_LABELS).is_some_and(|length| start + length == end)
        })
    };
    // Before: `sđt 0912345678`, `số điện thoại em là 0912345678`.
    for end in (1..=i).rev().take(MAX_FILLERS + 1) {
        if label_ends_at(end) {
            return true;
        }
        if !is_filler(&tokens[end - 1]) {
            break;
        }
    }
    // After: `0912345678 là sđt của em`.
    for start in (i + 1..tokens.len()).take(MAX_FILLERS + 1) {
        if label_at(tokens, start, OTHER_LABELS).is_some() {
            return true;
        }
        if !is_filler(&tokens[start]) {
            break;
        }
    }
    false
}

/// Whether word `i` is one piece of a code written with spaces: a neighbour (only
/// whitespace between) also looks like a piece of code (`F2LX K9P0 Q1`).
fn spaced(tokens: &[Token<'_>], i: usize) -> bool {
    let piece = |t: &Token<'_>| {
        let digits = t.text.bytes().take_while(u8::is_ascii_digit).count();
        let unit = t.text[digits..].to_ascii_lowercase();
        has_digit(t.text)
            && t.text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !(digits > 0 && UNITS.contains(&unit.as_str()))
    };
    let next = tokens.get(i + 1).is_some_and(|n| n.glued && piece(n));
    let previous = i > 0 && tokens[i].glued && piece(&tokens[i - 1]);
    next || previous
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
