//! A way to call a visitor back (issue 45, "when nobody is free"): the phone number or
//! e-mail address a visitor leaves with their question. [`Contact::parse`] decides what
//! the Worker accepts; the widget's form checks the same shapes before it sends.
//!
//! - a phone number: digits with optional spaces, dots, dashes and brackets, either
//!   Vietnamese (`0` and 9 or 10 more digits: `0901 234 567`, `028 3822 1234`; or
//!   `+84`/`84` and those 9 or 10) or
//!   international (`+` and 8 to 15 digits, E.164); kept as `+` and digits
//!   (`+84901234567`, a Vietnamese number in its international form);
//! - an e-mail address: `local@domain.tld`, no spaces, at most [`MAX_CONTACT_CHARS`];
//!   kept as written (trimmed). Letters beyond ASCII are accepted as letters (no Unicode
//!   tables in the Worker for them).
//!
//! ```
//! use concierge_core::handoff::Contact;
//!
//! assert_eq!(Contact::parse("0901 234 567"), Some(Contact::Phone("+84901234567".into())));
//! assert_eq!(Contact::parse("+44 20 7946 0958"), Some(Contact::Phone("+442079460958".into())));
//! assert_eq!(Contact::parse(" an@shop.vn "), Some(Contact::Email("an@shop.vn".into())));
//! assert_eq!(Contact::parse("gọi em nhé"), None);
//! ```

use alloc::string::{String, ToString};

/// The longest contact accepted, in characters (an e-mail address's limit).
pub const MAX_CONTACT_CHARS: usize = 254;

/// A validated way to call a visitor back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contact {
    /// A phone number: `+` and its digits.
    Phone(String),
    /// An e-mail address, as written.
    Email(String),
}

impl Contact {
    /// `text` as a phone number or an e-mail address, or `None` when it is neither.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_CONTACT_CHARS {
            return None;
        }
        if text.contains('@') {
            return email(text).then(|| Self::Email(text.to_string()));
        }
        phone(text).map(Self::Phone)
    }

    /// `phone` or `email`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Phone(_) => "phone",
            Self::Email(_) => "email",
        }
    }

    /// The contact as kept.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Phone(text) | Self::Email(text) => text,
        }
    }
}

fn phone(text: &str) -> Option<String> {
    let plus = text.starts_with('+');
    let rest = if plus { &text[1..] } else { text };
    // Kept as `+` and the digits (a Vietnamese number's leading 0 becomes 84).
    let mut kept = String::from("+");
    for c in rest.chars() {
        match c {
            '0'..='9' => kept.push(c),
            ' ' | '.' | '-' | '(' | ')' => {}
            _ => return None,
        }
    }
    // A mobile number has 9 digits after the 0 (or +84), a landline 10 (its area code 2x).
    let vietnamese =
        |national: &str| (9..=10).contains(&national.len()) && !national.starts_with('0');
    if !plus && kept.starts_with("+0") && vietnamese(&kept[2..]) {
        kept.replace_range(1..2, "84");
        return Some(kept);
    }
    let digits = &kept[1..];
    if let Some(national) = digits.strip_prefix("84") {
        // Vietnam's numbers all have the shape above (not `+84 0901…`).
        return vietnamese(national).then_some(kept);
    }
    (plus && (8..=15).contains(&digits.len()) && !digits.starts_with('0')).then_some(kept)
}

fn email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    let labels_ok = domain.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || !c.is_ascii())
    });
    let tld_ok = domain.rsplit('.').next().is_some_and(|tld| {
        tld.chars().count() >= 2
            && tld
                .chars()
                .all(|c| c.is_ascii_alphabetic() || !c.is_ascii())
    });
    !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local.chars().all(|c| {
            c.is_ascii_alphanumeric() || !c.is_ascii() || "!#$%&'*+-/=?^_`{|}~.".contains(c)
        })
        && domain.contains('.')
        && labels_ok
        && tld_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phone_numbers() {
        for (typed, kept) in [
            ("0901234567", "+84901234567"),
            ("090 123 4567", "+84901234567"),
            ("090.123.4567", "+84901234567"),
            ("(028) 3822-1234", "+842838221234"),
            ("+84 901 234 567", "+84901234567"),
            ("84901234567", "+84901234567"),
            ("+1 (415) 555-0100", "+14155550100"),
            ("+33 1 23 45 67 89", "+33123456789"),
        ] {
            assert_eq!(
                Contact::parse(typed),
                Some(Contact::Phone(kept.into())),
                "{typed}"
            );
        }
        for bad in [
            "090123456",
            "090123456789",
            "0012345678",
            "+0123456789",
            "+1234567",
            "12345678",
            "0901 234 56a",
            "+84 0901 234 567",
            "+1234567890123456",
            "++84901234567",
        ] {
            assert_eq!(Contact::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn email_addresses() {
        for good in [
            "an@shop.vn",
            "an.nguyen+shop@mail.example.com",
            "lan@cửahàng.vn",
        ] {
            assert_eq!(
                Contact::parse(good),
                Some(Contact::Email(good.into())),
                "{good}"
            );
        }
        for bad in [
            "an@",
            "@shop.vn",
            "an@shop",
            "an shop@x.vn",
            "an@@shop.vn",
            "an@shop..vn",
            "an@-shop.vn",
            ".an@shop.vn",
            "an@shop.v1",
            "<script>@x.vn",
        ] {
            assert_eq!(Contact::parse(bad), None, "{bad}");
        }
        let long = alloc::format!("{}@x.vn", "a".repeat(250));
        assert_eq!(Contact::parse(&long), None);
    }

    #[test]
    fn neither() {
        for text in ["", "   ", "gọi em nhé", "javascript:alert(1)"] {
            assert_eq!(Contact::parse(text), None, "{text}");
        }
        assert_eq!(
            Contact::parse("0901234567").map(|c| c.kind()),
            Some("phone")
        );
    }
}
