//! Classifies messages the way the `shop` template does — for merchants tuning keywords.
//!
//! Reads one message per line on stdin and prints one JSON object per line: intent,
//! confidence, need_retrieval, the clarifying question if one would be asked, whether a
//! live turn would ask the model to classify it (issue 48), the detected
//! language, the serial if any, and the rationale.
//!
//! ```text
//! cargo run -p concierge-core --features memory --example classify [-- OPTIONS] < messages.txt
//!   --keywords FILE   use this keyword file instead of prompts/shop_intent_keywords.md
//!   --context         treat the lines as one conversation (earlier lines are context)
//!   --catalog [SHOP=]FILE  classify with the catalog vocabulary learned from FILE (markdown
//!                     knowledge documents, `# Title` starting each), for the intent set's
//!                     shop SHOP, or for every message
//!   --intents FILE    score a labelled natural-question set instead
//!                     (shared/tests/data/shop/intents_natural.tsv)
//!   --serials FILE    score a labelled serial set instead (shared/tests/data/shop/serials.tsv)
//!   --languages FILE  score a labelled language set instead (shared/tests/data/shop/languages.tsv)
//! ```
//!
//! With `--intents` / `--serials` / `--languages` it reads no stdin: it prints the accuracy
//! and clarify rate of the rules on natural first questions (overall and per shop), the
//! precision and recall of the serials that reach the warranty lookup, the accuracy of
//! language detection, and every message got wrong (the formats are in
//! `concierge_core::flows::shop::evaluation`). For the project's own sets:
//!
//! ```text
//! cargo run -p concierge-core --features memory --example classify -- \
//!   --intents shared/tests/data/shop/intents_natural.tsv \
//!   --catalog computers=shared/tests/data/shop/catalog_computers.md \
//!   --catalog cosmetics=shared/tests/data/shop/catalog_cosmetics.md \
//!   --serials shared/tests/data/shop/serials.tsv --languages shared/tests/data/shop/languages.tsv
//! ```

use std::io::{BufRead, Write};
use std::process::ExitCode;

use concierge_core::flows::shop::evaluation::{
    Miss, catalog_of_markdown, parse_intent_set, parse_language_set, parse_serial_set,
    score_intents, score_languages, score_serials,
};
use concierge_core::flows::shop::{Context, ShopConfig, analyze};
use concierge_core::intent::{Classifier, KeywordLists};
use concierge_core::language;
use serde::Serialize;

/// One output line (fields in this order).
#[derive(Serialize)]
struct Record<'a> {
    message: &'a str,
    intent: &'static str,
    confidence: f32,
    need_retrieval: bool,
    clarify_question: Option<&'a str>,
    /// Whether a live turn would ask the model to classify it (the rules are uncertain).
    model_asked: bool,
    language: &'static str,
    serial: Option<&'a str>,
    rationale: &'a str,
}

fn main() -> ExitCode {
    let mut config = ShopConfig::default();
    let mut conversation = false;
    let (mut serials, mut languages, mut intents) = (None, None, None);
    // Catalogs by shop ("" for every message), applied once the keywords are read.
    let mut catalogs: Vec<(String, Vec<String>)> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--context" => conversation = true,
            "--serials" | "--languages" | "--intents" => {
                let Some(path) = args.next() else {
                    return usage(&format!("{arg} needs a file"));
                };
                match std::fs::read_to_string(&path) {
                    Ok(text) if arg == "--serials" => serials = Some((path, text)),
                    Ok(text) if arg == "--intents" => intents = Some((path, text)),
                    Ok(text) => languages = Some((path, text)),
                    Err(error) => return usage(&format!("cannot read {path}: {error}")),
                }
            }
            "--catalog" => {
                let Some(value) = args.next() else {
                    return usage("--catalog needs a file");
                };
                let (shop, path) = match value.split_once('=') {
                    Some((shop, path)) => (shop.to_string(), path.to_string()),
                    None => (String::new(), value),
                };
                match std::fs::read_to_string(&path) {
                    Ok(text) => catalogs.push((shop, catalog_of_markdown(&text))),
                    Err(error) => return usage(&format!("cannot read {path}: {error}")),
                }
            }
            "--keywords" => {
                let Some(path) = args.next() else {
                    return usage("--keywords needs a file");
                };
                let text = match std::fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(error) => return usage(&format!("cannot read {path}: {error}")),
                };
                match KeywordLists::parse(&text) {
                    Ok(lists) => config.classifier = Classifier::new(&lists),
                    Err(error) => {
                        return usage(&format!("{path}:{}: {}", error.line, error.reason));
                    }
                }
            }
            _ => return usage(&format!("unknown argument {arg}")),
        }
    }

    let with_catalog = |config: &ShopConfig, terms: &[String]| {
        let mut config = config.clone();
        config.classifier = config
            .classifier
            .with_catalog(terms.iter().map(String::as_str));
        config
    };
    let every: Vec<String> = catalogs
        .iter()
        .filter(|(shop, _)| shop.is_empty())
        .flat_map(|(_, terms)| terms.iter().cloned())
        .collect();
    let config = with_catalog(&config, &every);
    let shops: Vec<(String, ShopConfig)> = catalogs
        .iter()
        .filter(|(shop, _)| !shop.is_empty())
        .map(|(shop, terms)| (shop.clone(), with_catalog(&config, terms)))
        .collect();

    let scored_intents = intents.is_some();
    if let Some((path, text)) = intents {
        let cases = match parse_intent_set(&text) {
            Ok(cases) => cases,
            Err(error) => return usage(&format!("{path}:{}: {}", error.line, error.reason)),
        };
        let s = score_intents(
            |shop| {
                shops
                    .iter()
                    .find(|(name, _)| name == shop)
                    .map_or(&config, |(_, c)| c)
            },
            &cases,
        );
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "intents ({path}): {} messages, {} right: accuracy {:.1}%; clarify on {} of {} clear questions: {:.1}%",
            s.cases,
            s.correct,
            100.0 * s.accuracy(),
            s.clarified_clear,
            s.clear,
            100.0 * s.clarify_rate()
        );
        for (shop, n, right) in &s.per_shop {
            let _ = writeln!(
                out,
                "  {shop}: {n} messages, {right} right: {:.1}%",
                100.0 * *right as f64 / *n as f64
            );
        }
        for m in &s.misses {
            let _ = writeln!(
                out,
                "  line {}: {:?} expected {}, got {}",
                m.line, m.message, m.expected, m.got
            );
        }
    }
    if serials.is_some() || languages.is_some() {
        return score(&config, serials, languages);
    }
    if scored_intents {
        return ExitCode::SUCCESS;
    }

    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut previous: Vec<String> = Vec::new();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        // A conversation's language comes from its first message, unless asked for.
        let first = if conversation {
            previous.first().map_or(text, String::as_str)
        } else {
            text
        };
        let language = language::requested(text).unwrap_or_else(|| language::detect(first));
        let context_lines: Vec<&str> = previous.iter().map(String::as_str).collect();
        let context = Context {
            language,
            previous: &context_lines,
            ..Context::default()
        };
        let analysis = analyze(&config, text, context);
        let record = Record {
            message: text,
            intent: analysis.intent.as_str(),
            confidence: analysis.confidence,
            need_retrieval: analysis.need_retrieval_hint,
            clarify_question: analysis.clarify_questions.first().map(String::as_str),
            model_asked: analysis.ask_model,
            language: language.as_str(),
            serial: analysis.serial.as_deref(),
            rationale: &analysis.rationale,
        };
        let line = serde_json::to_string(&record).unwrap_or_default();
        if writeln!(out, "{line}").is_err() {
            break;
        }
        if conversation {
            previous.push(text.to_string());
        }
    }
    ExitCode::SUCCESS
}

/// Prints the figures of the labelled sets and the messages got wrong.
fn score(
    config: &ShopConfig,
    serials: Option<(String, String)>,
    languages: Option<(String, String)>,
) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let print_misses = |out: &mut std::io::StdoutLock<'_>, misses: &[Miss]| {
        for m in misses {
            let _ = writeln!(
                out,
                "  line {}: {:?} expected {}, got {}",
                m.line, m.message, m.expected, m.got
            );
        }
    };
    if let Some((path, text)) = serials {
        let cases = match parse_serial_set(&text) {
            Ok(cases) => cases,
            Err(error) => return usage(&format!("{path}:{}: {}", error.line, error.reason)),
        };
        let s = score_serials(config, &cases);
        let _ = writeln!(
            out,
            "serials: {} messages ({} with a serial), {} lookups, {} correct: precision {:.1}%, recall {:.1}%",
            s.cases,
            s.expected,
            s.looked_up,
            s.correct,
            100.0 * s.precision(),
            100.0 * s.recall()
        );
        print_misses(&mut out, &s.misses);
    }
    if let Some((path, text)) = languages {
        let cases = match parse_language_set(&text) {
            Ok(cases) => cases,
            Err(error) => return usage(&format!("{path}:{}: {}", error.line, error.reason)),
        };
        let s = score_languages(&cases);
        let _ = writeln!(
            out,
            "languages: {} messages, {} right: accuracy {:.1}%",
            s.cases,
            s.correct,
            100.0 * s.accuracy()
        );
        print_misses(&mut out, &s.misses);
    }
    ExitCode::SUCCESS
}

fn usage(problem: &str) -> ExitCode {
    eprintln!(
        "classify: {problem}\nusage: classify [--keywords FILE] [--context] < messages.txt\n       classify [--keywords FILE] [--catalog [SHOP=]FILE]... [--intents FILE] [--serials FILE] [--languages FILE]"
    );
    ExitCode::from(2)
}
