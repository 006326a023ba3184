//! Node 2's understanding on labelled sets the rules were not tuned on (issue 31, and
//! issue 48's natural first questions, `data/shop/intents_natural.tsv`):
//! serials written after a label, ordinary words that look like serials, and the language of
//! first messages (English with Vietnamese place and people names, Vietnamese without
//! diacritics or with English product names, short greetings).
//!
//! The sets are `data/shop/serials.tsv` and `data/shop/languages.tsv`; the figures are printed
//! (`--nocapture`) and the tests fail under the thresholds. The `classify` example prints
//! the same figures for any set: `classify --serials FILE --languages FILE`.
// The figures are this test's output.
#![allow(clippy::print_stdout)]

use concierge_core::flows::shop::ShopConfig;
use concierge_core::flows::shop::evaluation::{
    Miss, catalog_of_markdown, parse_intent_set, parse_language_set, parse_serial_set,
    score_intents, score_languages, score_serials,
};
use concierge_core::intent::Intent;

const SERIALS: &str = include_str!("data/shop/serials.tsv");
const LANGUAGES: &str = include_str!("data/shop/languages.tsv");
const INTENTS: &str = include_str!("data/shop/intents_natural.tsv");
const HOLDOUT: &str = include_str!("data/shop/intents_holdout.tsv");
const CATALOG_COMPUTERS: &str = include_str!("data/shop/catalog_computers.md");
const CATALOG_COSMETICS: &str = include_str!("data/shop/catalog_cosmetics.md");

/// The `shop` config of a site whose knowledge documents are `catalog` (its learned
/// vocabulary, as the edge feeds it at turn time).
fn shop_with_catalog(catalog: &str) -> ShopConfig {
    let mut config = ShopConfig::default();
    let terms = catalog_of_markdown(catalog);
    config.classifier = config
        .classifier
        .with_catalog(terms.iter().map(String::as_str));
    config
}

/// Issue 48: natural first questions to two kinds of shop (computers, cosmetics), each
/// classified with its own catalog vocabulary, get the right intent; the clarifying
/// question only when a message really is ambiguous or off-topic.
#[test]
fn natural_questions_are_at_least_95_percent_right_with_at_most_3_percent_clarify() {
    let cases = parse_intent_set(INTENTS).expect("intents_natural.tsv");
    assert!(cases.len() >= 150, "{} cases", cases.len());
    let shops: Vec<&str> = cases.iter().map(|c| c.shop).collect();
    assert!(shops.contains(&"computers") && shops.contains(&"cosmetics"));
    assert!(cases.iter().any(|c| c.expected == Intent::Unknown));
    let computers = shop_with_catalog(CATALOG_COMPUTERS);
    let cosmetics = shop_with_catalog(CATALOG_COSMETICS);
    let score = score_intents(
        |shop| {
            if shop == "cosmetics" {
                &cosmetics
            } else {
                &computers
            }
        },
        &cases,
    );
    println!(
        "intents (natural): {} messages, {} right: accuracy {:.1}%; clarify on {} of {} clear questions: {:.1}%",
        score.cases,
        score.correct,
        100.0 * score.accuracy(),
        score.clarified_clear,
        score.clear,
        100.0 * score.clarify_rate(),
    );
    for (shop, n, right) in &score.per_shop {
        println!(
            "  {shop}: {n} messages, {right} right: {:.1}%",
            100.0 * *right as f64 / *n as f64
        );
    }
    print!("{}", misses(&score.misses));
    assert!(
        score.accuracy() >= 0.95 && score.clarify_rate() <= 0.03,
        "accuracy {:.3}, clarify rate {:.3}; wrong:\n{}",
        score.accuracy(),
        score.clarify_rate(),
        misses(&score.misses)
    );
}

fn misses(misses: &[Miss]) -> String {
    misses
        .iter()
        .map(|m| {
            format!(
                "  line {}: {:?} expected {}, got {}\n",
                m.line, m.message, m.expected, m.got
            )
        })
        .collect()
}

/// A held-out set written after the rules were tuned and never tuned on: printed, so a
/// reader sees how far the natural set's figure carries; it fails only on a clear
/// regression (under 90%).
#[test]
fn held_out_questions_are_mostly_right() {
    let cases = parse_intent_set(HOLDOUT).expect("intents_holdout.tsv");
    let computers = shop_with_catalog(CATALOG_COMPUTERS);
    let cosmetics = shop_with_catalog(CATALOG_COSMETICS);
    let score = score_intents(
        |shop| {
            if shop == "cosmetics" {
                &cosmetics
            } else {
                &computers
            }
        },
        &cases,
    );
    println!(
        "intents (held out): {} messages, {} right: accuracy {:.1}%; clarify on {} of {} clear questions: {:.1}%",
        score.cases,
        score.correct,
        100.0 * score.accuracy(),
        score.clarified_clear,
        score.clear,
        100.0 * score.clarify_rate(),
    );
    print!("{}", misses(&score.misses));
    assert!(score.accuracy() >= 0.9, "{}", misses(&score.misses));
}

#[test]
fn serials_precision_and_recall_are_100_percent() {
    let cases = parse_serial_set(SERIALS).expect("serials.tsv");
    // The set covers what the issue asks: labelled serials while awaiting one and in a
    // first message, and messages without a serial (ordinary words that look like one).
    let awaiting_with = cases
        .iter()
        .filter(|c| c.awaiting && c.expected.is_some())
        .count();
    let fresh_with = cases
        .iter()
        .filter(|c| !c.awaiting && c.expected.is_some())
        .count();
    let without = cases.iter().filter(|c| c.expected.is_none()).count();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    assert!(awaiting_with >= 20 && fresh_with >= 5 && without >= 20);

    let score = score_serials(&ShopConfig::default(), &cases);
    println!(
        "serials: {} messages ({} with a serial), {} lookups, {} correct: precision {:.1}%, recall {:.1}%",
        score.cases,
        score.expected,
        score.looked_up,
        score.correct,
        100.0 * score.precision(),
        100.0 * score.recall(),
    );
    print!("{}", misses(&score.misses));
    assert!(
        score.precision() == 1.0 && score.recall() == 1.0,
        "serial precision {:.3}, recall {:.3}; wrong:\n{}",
        score.precision(),
        score.recall(),
        misses(&score.misses)
    );
}

#[test]
fn language_detection_is_at_least_98_percent() {
    let cases = parse_language_set(LANGUAGES).expect("languages.tsv");
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let score = score_languages(&cases);
    println!(
        "languages: {} messages, {} right: accuracy {:.1}%",
        score.cases,
        score.correct,
        100.0 * score.accuracy()
    );
    print!("{}", misses(&score.misses));
    assert!(
        score.accuracy() >= 0.98,
        "language accuracy {:.3}; wrong:\n{}",
        score.accuracy(),
        misses(&score.misses)
    );
}
