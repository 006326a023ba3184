//! `$regex` in `$match` field conditions (TEMPLATES.md §1.2.6 rule 4): a linear-time
//! engine (`regex-lite`'s PikeVM: no backtracking, time linear in the text for a given
//! pattern), behind the core's `analyst-regex` feature so the widget never links it.
//!
//! Semantics (Mongo's, for JSON rows): `{"field": {"$regex": "pattern", "$options": "i"}}`
//! matches when the field is a string (or an array holding one) in which the pattern
//! occurs anywhere (unanchored search; `^`/`$` anchor). `$options` may use `i` (case
//! insensitive, Unicode), `m` (multi-line anchors), `s` (`.` matches a newline) and `x`
//! (ignore whitespace and `#` comments). A pattern is at most [`MAX_PATTERN_CHARS`]
//! characters and its compiled automaton at most [`MAX_NFA_BYTES`], so a model cannot make
//! one condition cost more than a bounded amount per row.
//!
//! The engine folds case for ASCII only (it carries no Unicode tables: about 100 KB gzip
//! of the Worker). With `i`, Vietnamese and every other cased script are folded here
//! instead: the text is lower-cased, and so is every non-ASCII letter of the pattern (the
//! engine's own `i` then covers ASCII); `\w`, `\d`, `\s` and `\b` are ASCII.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;

use serde_json::Value;

use super::budget::{Budget, Exceeded};

/// The longest pattern accepted, in characters (decision).
pub const MAX_PATTERN_CHARS: usize = 256;
/// The largest compiled automaton accepted, in bytes (decision).
pub const MAX_NFA_BYTES: usize = 256 * 1024;
/// The `$options` letters accepted.
pub const OPTIONS: &str = "imsx";

/// A compiled `$regex` condition.
#[derive(Debug, Clone)]
pub struct Pattern {
    #[cfg(feature = "analyst-regex")]
    regex: regex_lite::Regex,
    /// `i`: the text is lower-cased before the search (see the module's documentation).
    #[cfg(feature = "analyst-regex")]
    fold: bool,
    /// Work units per byte of text scanned: the PikeVM's cost per byte grows with its
    /// automaton, so a bigger automaton weighs more (see [`weight`]).
    weight: u64,
}

/// Work units of starting one search (measured: about a microsecond).
pub const SEARCH_UNITS: u64 = 64;
/// Bytes of compiled automaton per extra unit of a pattern's weight (decision, measured
/// by `scripts/bench-pipelines.sh`).
pub const AUTOMATON_BYTES_PER_WEIGHT: usize = 4096;

/// The weight of a pattern whose compiled automaton takes `memory` bytes: 4 units per
/// byte of text, plus one per [`AUTOMATON_BYTES_PER_WEIGHT`] bytes of automaton.
pub fn weight(memory: usize) -> u64 {
    4 + (memory / AUTOMATON_BYTES_PER_WEIGHT) as u64
}

impl Pattern {
    /// Work units of matching against `len` bytes of text: a search's set-up, then its
    /// weight per byte.
    pub fn cost(&self, len: usize) -> u64 {
        SEARCH_UNITS + (len as u64).saturating_mul(self.weight)
    }

    /// Whether the pattern occurs in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        #[cfg(feature = "analyst-regex")]
        {
            if self.fold && !text.is_ascii() {
                return self.regex.is_match(&text.to_lowercase());
            }
            self.regex.is_match(text)
        }
        #[cfg(not(feature = "analyst-regex"))]
        {
            let _ = text;
            false
        }
    }
}

/// The `$regex` and `$options` of a condition object, checked: the error is the sentence
/// the model reads.
pub fn parts(condition: &serde_json::Map<String, Value>) -> Result<(&str, &str), String> {
    let pattern = match condition.get("$regex") {
        Some(Value::String(p)) => p.as_str(),
        Some(_) => return Err("$regex takes a pattern string".into()),
        None => return Err("$options goes only with $regex in the same condition".into()),
    };
    let options = match condition.get("$options") {
        None => "",
        Some(Value::String(o)) => o.as_str(),
        Some(_) => return Err("$options takes a string of the letters i, m, s, x".into()),
    };
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(format!(
            "$regex pattern is longer than {MAX_PATTERN_CHARS} characters"
        ));
    }
    if let Some(bad) = options.chars().find(|c| !OPTIONS.contains(*c)) {
        return Err(format!(
            "$options letter '{bad}' is not supported; use i, m, s or x"
        ));
    }
    Ok((pattern, options))
}

/// Compiles `pattern` with `options` (already checked by [`parts`]).
pub fn compile(pattern: &str, options: &str) -> Result<Pattern, String> {
    #[cfg(feature = "analyst-regex")]
    {
        let fold = options.contains('i');
        let folded;
        let pattern = if fold && !pattern.is_ascii() {
            folded = lower_non_ascii(pattern);
            folded.as_str()
        } else {
            pattern
        };
        let build = |limit: usize| {
            regex_lite::RegexBuilder::new(pattern)
                .case_insensitive(fold)
                .multi_line(options.contains('m'))
                .dot_matches_new_line(options.contains('s'))
                .ignore_whitespace(options.contains('x'))
                .nest_limit(32)
                .size_limit(limit)
                .build()
        };
        // The engine does not report its automaton's size: the smallest of these limits
        // it compiles under stands for it (a pattern's weight, see [`weight`]).
        let mut limit = AUTOMATON_BYTES_PER_WEIGHT;
        loop {
            match build(limit) {
                Ok(regex) => {
                    let weight = weight(limit);
                    return Ok(Pattern {
                        regex,
                        fold,
                        weight,
                    });
                }
                Err(e) => {
                    let detail = alloc::string::ToString::to_string(&e);
                    if !detail.contains("size limit") {
                        let first = detail.lines().last().unwrap_or("").trim();
                        return Err(format!("$regex pattern is invalid: {first}"));
                    }
                    if limit >= MAX_NFA_BYTES {
                        return Err(format!(
                            "$regex pattern is too complex (its automaton exceeds {MAX_NFA_BYTES} bytes); simplify it"
                        ));
                    }
                    limit = (limit * 4).min(MAX_NFA_BYTES);
                }
            }
        }
    }
    #[cfg(not(feature = "analyst-regex"))]
    {
        let _ = (pattern, options);
        Err("$regex is not available in this build of the data tools; use $eq, $in or equality filters".into())
    }
}

/// `pattern` with its non-ASCII characters lower-cased (`Á` → `á`), escapes and ASCII
/// kept as they are (`\W` is not `\w`).
#[cfg(feature = "analyst-regex")]
fn lower_non_ascii(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Checks a condition object holding `$regex` and/or `$options` (the validator's step).
pub fn check(condition: &serde_json::Map<String, Value>) -> Result<(), String> {
    let (pattern, options) = parts(condition)?;
    compile(pattern, options).map(|_| ())
}

/// The compiled patterns of one evaluation, keyed by (pattern, options): each is compiled
/// once, however many rows it is matched against.
#[derive(Debug, Default)]
pub struct Patterns(BTreeMap<String, BTreeMap<String, Option<Pattern>>>);

impl Patterns {
    /// The patterns of every `$regex` condition in `value`.
    pub fn of(value: &Value) -> Self {
        let mut out = Self::default();
        out.collect(value);
        out
    }

    /// Adds the patterns of `value`.
    pub fn collect(&mut self, value: &Value) {
        match value {
            Value::Object(map) => {
                if let Ok((p, o)) = parts(map) {
                    self.0
                        .entry(p.into())
                        .or_default()
                        .entry(o.into())
                        .or_insert_with(|| compile(p, o).ok());
                }
                map.values().for_each(|v| self.collect(v));
            }
            Value::Array(items) => items.iter().for_each(|v| self.collect(v)),
            _ => {}
        }
    }

    /// Whether `value` matches the `$regex` condition `condition` (Mongo: a string, or an
    /// array with a matching string; nothing else matches).
    pub fn matches(
        &self,
        value: Option<&Value>,
        condition: &serde_json::Map<String, Value>,
    ) -> bool {
        self.matches_within(value, condition, &mut Budget::unlimited())
            .unwrap_or(false)
    }

    /// [`Self::matches`], charging `budget` for the text scanned before scanning it.
    pub fn matches_within(
        &self,
        value: Option<&Value>,
        condition: &serde_json::Map<String, Value>,
        budget: &mut Budget,
    ) -> Result<bool, Exceeded> {
        let Ok((p, o)) = parts(condition) else {
            return Ok(false);
        };
        let Some(Some(pattern)) = self.0.get(p).and_then(|by| by.get(o)) else {
            return Ok(false);
        };
        let mut test = |s: &str| -> Result<bool, Exceeded> {
            budget.work(pattern.cost(s.len()))?;
            Ok(pattern.is_match(s))
        };
        match value {
            Some(Value::String(s)) => test(s),
            Some(Value::Array(items)) => {
                for s in items.iter().filter_map(Value::as_str) {
                    if test(s)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            _ => Ok(false),
        }
    }
}
