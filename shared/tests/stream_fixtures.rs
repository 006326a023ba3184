//! Recorded and hand-written streams under `tests/data/`, each with the decoded output it
//! must produce (`x.sse` + `x.expected.json`), fed whole, one byte at a time, and split at
//! arbitrary points (proptest): the decoded output never depends on the split.
//!
//! `BLESS=1 cargo test --test stream_fixtures` rewrites the expected files; review the diff.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use concierge_core::stream::native::{NativeEvent, NativeStreamDecoder};
use concierge_core::stream::ollama::OllamaStreamDecoder;
use concierge_core::stream::openai::OpenAiStreamDecoder;
use concierge_core::stream::sse::SseDecoder;
use concierge_core::stream::{ChatStreamDecoder, StreamError};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

mod chunks;
use chunks::split;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Sse,
    OpenAi,
    Ollama,
    Native,
}

const KINDS: [(Kind, &str, &str); 4] = [
    (Kind::Sse, "sse", "sse"),
    (Kind::OpenAi, "openai", "sse"),
    (Kind::Ollama, "ollama", "ndjson"),
    (Kind::Native, "native", "sse"),
];

fn fixtures() -> Vec<(Kind, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut out = Vec::new();
    for (kind, dir, ext) in KINDS {
        let mut paths: Vec<PathBuf> = fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "no fixtures in {dir}");
        out.extend(paths.into_iter().map(|p| (kind, p)));
    }
    out
}

fn chat_decode(mut decoder: impl ChatStreamDecoder, chunks: &[&[u8]]) -> Value {
    let mut out = Vec::new();
    let mut drain = |d: &mut dyn ChatStreamDecoder| {
        while let Some(item) = d.next_event() {
            out.push(match item {
                Ok(event) => serde_json::to_value(event).unwrap(),
                Err(err) => json!({ "decode_error": format!("{err:?}") }),
            });
        }
    };
    for chunk in chunks {
        decoder.feed(chunk);
        drain(&mut decoder);
    }
    decoder.finish();
    drain(&mut decoder);
    Value::Array(out)
}

fn sse_decode(chunks: &[&[u8]]) -> Value {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    let mut drain = |d: &mut SseDecoder| {
        while let Some(item) = d.next_event() {
            events.push(match item {
                Ok(ev) => json!({ "event": ev.event, "data": ev.data, "id": ev.id }),
                Err(err) => json!({ "decode_error": format!("{err:?}") }),
            });
        }
    };
    for chunk in chunks {
        decoder.feed(chunk);
        drain(&mut decoder);
    }
    decoder.finish();
    drain(&mut decoder);
    json!({ "events": events, "retry": decoder.retry(), "last_event_id": decoder.last_event_id() })
}

/// Through JSON text, so that `f32` fields read back as the decimals they are written as.
fn via_text(value: &impl serde::Serialize) -> Value {
    serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap()
}

fn native_json(event: &NativeEvent) -> Value {
    let (name, data) = match event {
        NativeEvent::Chunk(text) => ("chunk", json!(text)),
        NativeEvent::Started(d) => ("started", via_text(d)),
        NativeEvent::ToolStart(d) => ("tool_start", via_text(d)),
        NativeEvent::ToolEnd(d) => ("tool_end", via_text(d)),
        NativeEvent::Progress(d) => ("progress", via_text(d)),
        NativeEvent::Payload(d) => ("payload", d.clone()),
        NativeEvent::Completed(d) => ("completed", via_text(d)),
        NativeEvent::Failed(d) => ("failed", via_text(d)),
    };
    json!({ name: data })
}

fn native_decode(chunks: &[&[u8]]) -> Value {
    let mut decoder = NativeStreamDecoder::new();
    let mut out = Vec::new();
    let mut drain = |d: &mut NativeStreamDecoder| {
        while let Some(item) = d.next_event() {
            out.push(match item {
                Ok(frame) => json!({ "seq": frame.seq, "event": native_json(&frame.event) }),
                Err(err) => json!({ "decode_error": format!("{err:?}") }),
            });
        }
    };
    for chunk in chunks {
        decoder.feed(chunk);
        drain(&mut decoder);
    }
    decoder.finish();
    drain(&mut decoder);
    Value::Array(out)
}

fn decode(kind: Kind, chunks: &[&[u8]]) -> Value {
    match kind {
        Kind::Sse => sse_decode(chunks),
        Kind::OpenAi => chat_decode(OpenAiStreamDecoder::new(), chunks),
        Kind::Ollama => chat_decode(OllamaStreamDecoder::new(), chunks),
        Kind::Native => native_decode(chunks),
    }
}

fn expected_path(input: &Path) -> PathBuf {
    let stem = input.file_stem().unwrap().to_str().unwrap();
    input.with_file_name(format!("{stem}.expected.json"))
}

#[test]
fn every_fixture_decodes_to_its_expected_output() {
    let bless = std::env::var_os("BLESS").is_some();
    for (kind, path) in fixtures() {
        let bytes = fs::read(&path).unwrap();
        let got = decode(kind, &[&bytes]);
        let expected_file = expected_path(&path);
        if bless {
            let mut text = serde_json::to_string_pretty(&got).unwrap();
            text.push('\n');
            fs::write(&expected_file, text).unwrap();
            continue;
        }
        let expected: Value = serde_json::from_slice(
            &fs::read(&expected_file)
                .unwrap_or_else(|e| panic!("{}: {e}", expected_file.display())),
        )
        .unwrap();
        assert_eq!(got, expected, "{}", path.display());
    }
}

#[test]
fn every_fixture_decodes_the_same_fed_one_byte_at_a_time() {
    for (kind, path) in fixtures() {
        let bytes = fs::read(&path).unwrap();
        let whole = decode(kind, &[&bytes]);
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(kind, &bytewise), whole, "{}", path.display());
    }
}

#[test]
fn every_fixture_decodes_the_same_whatever_the_split() {
    for (kind, path) in fixtures() {
        let bytes = fs::read(&path).unwrap();
        let whole = decode(kind, &[&bytes]);
        let mut runner = TestRunner::new(Config {
            cases: 96,
            ..Config::default()
        });
        let cuts = proptest::collection::vec(any::<usize>(), 0..48);
        runner
            .run(&cuts, |cuts| {
                let chunks = split(&bytes, &cuts);
                prop_assert_eq!(decode(kind, &chunks), whole.clone(), "{}", path.display());
                Ok(())
            })
            .unwrap();
    }
}

#[test]
fn decode_errors_are_small_copy_values() {
    fn assert_copy<T: Copy + Send + Sync + 'static>() {}
    assert_copy::<StreamError>();
    assert!(std::mem::size_of::<StreamError>() <= 4);
}
