//! Classifies messages the way the `shop` template does — for merchants tuning keywords.
//!
//! Reads one message per line on stdin and prints one JSON object per line: intent,
//! confidence, need_retrieval, the clarifying question if one would be asked, the detected
//! language, the serial if any, and the rationale.
//!
//! ```text
//! cargo run -p concierge-core --features memory --example classify [-- OPTIONS] < messages.txt
//!   --keywords FILE   use this keyword file instead of prompts/shop_intent_keywords.md
//!   --context         treat the lines as one conversation (earlier lines are context)
//! ```

use std::io::{BufRead, Write};
use std::process::ExitCode;

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
    language: &'static str,
    serial: Option<&'a str>,
    rationale: &'a str,
}

fn main() -> ExitCode {
    let mut config = ShopConfig::default();
    let mut conversation = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--context" => conversation = true,
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

fn usage(problem: &str) -> ExitCode {
    eprintln!("classify: {problem}\nusage: classify [--keywords FILE] [--context] < messages.txt");
    ExitCode::from(2)
}
