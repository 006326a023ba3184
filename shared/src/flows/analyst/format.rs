//! Vietnamese number formatting (seed formatter rules 2–3, TEMPLATES.md §1.2.4) and the
//! streaming normaliser that applies it to model text whatever the chunking.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::eval::round;
use crate::engine::TextFilter;

/// `digits` (ASCII digits) with `sep` between groups of three: `group("1500000", '.')` is
/// `1.500.000`.
pub fn group(digits: &str, sep: char) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

fn money(amount: f64, sep: char) -> String {
    let n = round(amount, 0);
    let digits = format!("{}", (n as i64).unsigned_abs());
    let sign = if n < 0.0 { "-" } else { "" };
    format!("{sign}{} VND", group(&digits, sep))
}

/// `150000000` → `150.000.000 VND` (rounded to an integer; `-` for negatives).
pub fn format_vnd(amount: f64) -> String {
    money(amount, '.')
}

/// `150000000` → `150,000,000 VND` (English conversations).
pub fn format_vnd_en(amount: f64) -> String {
    money(amount, ',')
}

fn percent(value: f64, decimal: char) -> String {
    let r = round(value, 1);
    let tenths = (round(r * 10.0, 0) as i64).unsigned_abs();
    let sign = if r < 0.0 && tenths != 0 { "-" } else { "" };
    if tenths.is_multiple_of(10) {
        format!("{sign}{}%", tenths / 10)
    } else {
        format!("{sign}{}{decimal}{}%", tenths / 10, tenths % 10)
    }
}

/// `15.5` → `15,5%` (half away from zero to one decimal; `,0` dropped).
pub fn format_percent(value: f64) -> String {
    percent(value, ',')
}

/// `15.5` → `15.5%` (English conversations).
pub fn format_percent_en(value: f64) -> String {
    percent(value, '.')
}

const UNITS: [&str; 4] = ["VND", "đồng", "đ", "₫"];

fn is_num(c: char) -> bool {
    c.is_ascii_digit() || c == '.' || c == ','
}

/// What follows a number run, as far as the text goes: the unit it decides, or whether
/// more text is needed.
enum After {
    Unit,
    Percent,
    Other,
    Undecided,
}

fn after(rest: &[char], last: bool) -> After {
    if rest.first() == Some(&'%') {
        return After::Percent;
    }
    let rest = if rest.first() == Some(&' ') {
        &rest[1..]
    } else {
        rest
    };
    if rest.is_empty() {
        return After::Undecided;
    }
    for unit in UNITS {
        let u: Vec<char> = unit.chars().collect();
        if rest.len() < u.len() {
            if u.starts_with(rest) && !last {
                return After::Undecided;
            }
            continue;
        }
        if rest[..u.len()] == u[..] {
            return match rest.get(u.len()) {
                None if last => After::Unit,
                None => After::Undecided,
                Some(c) if c.is_alphanumeric() => After::Other,
                Some(_) => After::Unit,
            };
        }
    }
    After::Other
}

/// Rewrites `text` (whole): money integers of ≥ 4 digits before a unit get dot grouping
/// (`1500000 VND` → `1.500.000 VND`, also `1,500,000 VND`), and a `.` decimal right
/// before `%` becomes a comma (`15.5%` → `15,5%`). Years, ids and bare numbers stay.
/// A number at the very end is treated as followed by nothing.
pub fn normalise(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let (out, _) = rewrite(&chars, None, true);
    out
}

/// Rewrites as [`normalise`]; unless `last`, stops before a number whose meaning the
/// following text decides, returning how many chars were consumed. `before` is the char
/// released just before `chars` (a number glued to it is not a number of its own).
fn rewrite(chars: &[char], before: Option<char>, last: bool) -> (String, usize) {
    let mut out = String::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i == 0 { before } else { Some(chars[i - 1]) };
        let starts = c.is_ascii_digit() && !prev.is_some_and(|p| is_num(p) || p.is_alphanumeric());
        if !starts {
            out.push(c);
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && is_num(chars[end]) {
            end += 1;
        }
        // Trailing separators are punctuation, not part of the number.
        let mut core_end = end;
        while core_end > i && !chars[core_end - 1].is_ascii_digit() {
            core_end -= 1;
        }
        let number: String = chars[i..core_end].iter().collect();
        let rest = &chars[end..];
        let decided = if end == chars.len() {
            After::Undecided
        } else if core_end < end {
            After::Other
        } else {
            after(rest, last)
        };
        if matches!(decided, After::Undecided) && !last {
            return (out, i);
        }
        match decided {
            After::Unit => out.push_str(&money_digits(&number)),
            After::Percent => out.push_str(&percent_digits(&number)),
            _ => out.push_str(&number),
        }
        out.extend(&chars[core_end..end]);
        i = end;
    }
    (out, chars.len())
}

fn money_digits(number: &str) -> String {
    let plain = number.chars().all(|c| c.is_ascii_digit());
    let commas = number.contains(',')
        && !number.contains('.')
        && number.split(',').skip(1).all(|g| g.len() == 3)
        && number
            .split(',')
            .next()
            .is_some_and(|g| (1..=3).contains(&g.len()));
    if plain && number.len() >= 4 {
        group(number, '.')
    } else if commas {
        number.replace(',', ".")
    } else {
        number.into()
    }
}

fn percent_digits(number: &str) -> String {
    match number.split_once('.') {
        Some((a, b)) if !b.contains(['.', ',']) && !a.contains(',') => format!("{a},{b}"),
        _ => number.into(),
    }
}

/// The streaming normaliser: feed chunks, get rewritten text out; the concatenation is
/// the same however the text was split.
#[derive(Debug, Default, Clone)]
pub struct Normaliser {
    held: String,
    /// The last char released, which decides whether held digits start a number.
    released: Option<char>,
}

impl Normaliser {
    /// A normaliser with nothing held.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes `chunk`; returns what can be released now.
    pub fn push(&mut self, chunk: &str) -> String {
        self.held.push_str(chunk);
        let chars: Vec<char> = self.held.chars().collect();
        let (out, used) = rewrite(&chars, self.released, false);
        if used > 0 {
            self.released = Some(chars[used - 1]);
        }
        self.held = chars[used..].iter().collect();
        out
    }

    /// Releases everything held.
    pub fn finish(&mut self) -> String {
        let chars: Vec<char> = core::mem::take(&mut self.held).chars().collect();
        let out = rewrite(&chars, self.released, true).0;
        self.released = chars.last().copied().or(self.released);
        out
    }
}

impl TextFilter for Normaliser {
    fn push(&mut self, delta: &str) -> String {
        Normaliser::push(self, delta)
    }

    fn finish(&mut self) -> String {
        Normaliser::finish(self)
    }

    /// Held digits are the model's text, held only to be rewritten: shown.
    fn abandon(&mut self) -> String {
        Normaliser::finish(self)
    }
}
