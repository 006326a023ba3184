//! Throughput of the stream codecs on realistic input: the recorded llama.cpp stream's
//! content chunks, repeated to about 1 MiB and fed in 16 KiB pieces (a network read).
//!
//! `cargo bench -p concierge-core --bench stream_codecs`
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use concierge_core::stream::ChatStreamDecoder;
use concierge_core::stream::native::{NativeEncoder, NativeStreamDecoder};
use concierge_core::stream::ollama::OllamaStreamDecoder;
use concierge_core::stream::openai::OpenAiStreamDecoder;
use concierge_core::stream::sse::SseDecoder;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const TARGET: usize = 1 << 20;
const READ: usize = 16 << 10;

fn fixture(path: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    std::fs::read_to_string(format!("{root}/tests/data/{path}")).unwrap()
}

/// The recorded stream's first frame, its content frames repeated to ~1 MiB, its last frames.
fn openai_stream() -> String {
    let recorded = fixture("openai/llamacpp_text.sse");
    let frames: Vec<&str> = recorded.split_terminator("\n\n").collect();
    let content: Vec<&str> = frames
        .iter()
        .copied()
        .filter(|f| f.contains("\"content\":\"") && !f.contains("finish_reason\":\""))
        .collect();
    let tail: Vec<&str> = frames
        .iter()
        .copied()
        .filter(|f| f.contains("finish_reason\":\"") || f.contains("[DONE]"))
        .collect();
    let mut out = format!("{}\n\n", frames[0]);
    while out.len() < TARGET {
        for frame in &content {
            out.push_str(frame);
            out.push_str("\n\n");
        }
    }
    for frame in tail {
        out.push_str(frame);
        out.push_str("\n\n");
    }
    out
}

fn ollama_stream() -> String {
    let recorded = fixture("ollama/text.ndjson");
    let lines: Vec<&str> = recorded.lines().collect();
    let (last, content) = lines.split_last().unwrap();
    let mut out = String::new();
    while out.len() < TARGET {
        for line in content {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(last);
    out.push('\n');
    out
}

fn native_stream() -> String {
    let mut encoder = NativeEncoder::new();
    let mut out = String::new();
    let words = [
        "Xin", " chào", " quý", " khách", ",", " em", " có", " thể", " giúp", " gì", "?",
    ];
    while out.len() < TARGET {
        for word in words {
            encoder.chunk(word, &mut out).unwrap();
        }
    }
    out
}

fn drain_chat(mut decoder: impl ChatStreamDecoder, input: &[u8]) -> usize {
    let mut events = 0;
    for piece in input.chunks(READ) {
        decoder.feed(piece);
        while let Some(event) = decoder.next_event() {
            black_box(event.unwrap());
            events += 1;
        }
    }
    decoder.finish();
    while let Some(event) = decoder.next_event() {
        black_box(event.unwrap());
        events += 1;
    }
    events
}

fn benches(c: &mut Criterion) {
    let openai = openai_stream();
    let ollama = ollama_stream();
    let native = native_stream();
    let mut group = c.benchmark_group("stream_codecs");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));

    group.throughput(Throughput::Bytes(openai.len() as u64));
    group.bench_function("sse_decode", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::new();
            let mut bytes = 0;
            for piece in openai.as_bytes().chunks(READ) {
                decoder.feed(piece);
                while let Some(event) = decoder.next_event() {
                    bytes += event.unwrap().data.len();
                }
            }
            black_box(bytes)
        });
    });
    group.bench_function("openai_decode_to_chat_events", |b| {
        b.iter(|| drain_chat(OpenAiStreamDecoder::new(), openai.as_bytes()));
    });

    group.throughput(Throughput::Bytes(ollama.len() as u64));
    group.bench_function("ollama_decode_to_chat_events", |b| {
        b.iter(|| drain_chat(OllamaStreamDecoder::new(), ollama.as_bytes()));
    });

    group.throughput(Throughput::Bytes(native.len() as u64));
    group.bench_function("native_decode", |b| {
        b.iter(|| {
            let mut decoder = NativeStreamDecoder::new();
            let mut events = 0;
            for piece in native.as_bytes().chunks(READ) {
                decoder.feed(piece);
                while let Some(frame) = decoder.next_event() {
                    black_box(frame.unwrap());
                    events += 1;
                }
            }
            events
        });
    });
    group.bench_function("native_encode", |b| {
        let words = [
            "Xin", " chào", " quý", " khách", ",", " em", " có", " thể", " giúp", " gì", "?",
        ];
        b.iter(|| {
            let mut encoder = NativeEncoder::new();
            let mut out = String::with_capacity(native.len());
            while out.len() < native.len() {
                for word in words {
                    encoder.chunk(word, &mut out).unwrap();
                }
            }
            black_box(out.len())
        });
    });
    group.finish();
}

criterion_group!(stream_codecs, benches);
criterion_main!(stream_codecs);
