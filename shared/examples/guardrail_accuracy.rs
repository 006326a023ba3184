//! Measures the `guarded` guardrail: every question of `tests/guardrail/questions.tsv`
//! through the template's own guardrail request ([`guardrail_request`]) and parser
//! ([`parse_verdict`]) on a real model behind an OpenAI-compatible endpoint; prints each
//! mistake, then the accuracy overall, per language and per kind.
//!
//! ```text
//! cargo run -p concierge-core --features std,memory --example guardrail_accuracy -- \
//!     http://127.0.0.1:8080/v1 [model] [questions.tsv]
//! ```
//! `scripts/guardrail-accuracy.sh` starts the small llama.cpp model and runs this.
//! `GUARDRAIL_DOMAIN_VI` / `GUARDRAIL_DOMAIN_EN` set the domain's wording (default
//! `NHA KHOA` / `DENTISTRY`).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a measurement prints its figures"
)]

use std::collections::BTreeMap;
use std::time::Instant;

use concierge_core::flows::guarded::{
    GuardedConfig, Verdict, guardrail_request, parse_verdict, turn_language,
};
use serde_json::{Value, json};

fn main() {
    let mut args = std::env::args().skip(1);
    let base = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:8080/v1".into());
    let model = args.next().unwrap_or_else(|| "default".into());
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/guardrail/questions.tsv"
        )
        .into()
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The domain as a merchant names it (`GUARDRAIL_DOMAIN_VI` / `GUARDRAIL_DOMAIN_EN`),
    // to compare wordings.
    let domain = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let config = GuardedConfig::with_domain(
        &domain("GUARDRAIL_DOMAIN_VI", "NHA KHOA"),
        &domain("GUARDRAIL_DOMAIN_EN", "DENTISTRY"),
    );
    let agent = ureq::AgentBuilder::new()
        .timeout(std::time::Duration::from_secs(120))
        .build();
    let mut totals: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut confusion = [[0u32; 2]; 2];
    let started = Instant::now();
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.splitn(4, '\t').collect();
        let [expected, lang, kind, question] = fields[..] else {
            panic!("malformed line: {line}");
        };
        let expected = if expected == "YES" {
            Verdict::Passed
        } else {
            Verdict::Rejected
        };
        let language = turn_language(question);
        let request = guardrail_request(&config, language, "", question);
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        let body = json!({"model": model, "messages": messages, "temperature": 0,
                          "max_tokens": request.max_tokens, "stream": false});
        let response = agent
            .post(&format!("{base}/chat/completions"))
            .set("content-type", "application/json")
            .send_string(&body.to_string())
            .unwrap_or_else(|e| panic!("the model at {base}: {e}"))
            .into_string()
            .expect("an answer");
        let reply: Value = serde_json::from_str(&response).expect("JSON answer");
        let answer = reply["choices"][0]["message"]["content"]
            .as_str()
            .unwrap_or_default();
        let verdict = parse_verdict(answer);
        let ok = verdict == expected;
        if !ok {
            println!(
                "MISS  expected {:<8} got {:<8} [{lang} {kind}] {question}  (model: {answer:?})",
                expected.as_str(),
                verdict.as_str()
            );
        }
        let row = (expected == Verdict::Passed) as usize;
        let col = (verdict == Verdict::Passed) as usize;
        confusion[row][col] += 1;
        for key in [
            "all".to_string(),
            format!("lang={lang}"),
            format!("kind={kind}"),
        ] {
            let entry = totals.entry(key).or_default();
            entry.0 += u32::from(ok);
            entry.1 += 1;
        }
    }
    println!();
    for (key, (right, all)) in &totals {
        println!(
            "{key:<10} accuracy {:>5.1}%  ({right}/{all})",
            100.0 * f64::from(*right) / f64::from(*all)
        );
    }
    println!(
        "in-domain passed {} / refused {};  off-domain refused {} / passed {}",
        confusion[1][1], confusion[1][0], confusion[0][0], confusion[0][1]
    );
    println!(
        "model {model} at {base}; {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
