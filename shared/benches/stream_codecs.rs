//! Throughput of the stream codecs on realistic input: the recorded llama.cpp stream's
//! content chunks, repeated to about 1 MiB and fed in 16 KiB pieces (a network read).
//!
//! Then one answer of 1000 text chunks through each [`TurnEncoder`] (the cost per streamed
//! answer of each wire format).
//!
//! `cargo bench -p concierge-core --bench stream_codecs`
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use concierge_core::conversation::MessageKind;
use concierge_core::stream::ai_sdk::AiSdkEncoder;
use concierge_core::stream::native::{NativeEncoder, NativeStreamDecoder};
use concierge_core::stream::ollama::OllamaStreamDecoder;
use concierge_core::stream::openai::OpenAiStreamDecoder;
use concierge_core::stream::openai_out::OpenAiChunkEncoder;
use concierge_core::stream::sse::SseDecoder;
use concierge_core::stream::{ChatStreamDecoder, TurnEncoder};
use concierge_core::turn::TurnEvent;
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

/// Encodes `events` with a fresh encoder from `make`, as the Worker does per turn.
fn encode_turn<E: TurnEncoder>(make: impl Fn() -> E, events: &[TurnEvent]) -> usize {
    let mut encoder = make();
    let (mut out, mut sent) = (String::new(), 0);
    for event in events {
        out.clear();
        encoder.encode(event, &mut out).unwrap();
        sent += out.len();
    }
    out.clear();
    encoder.close(&mut out);
    sent + out.len()
}

fn turn_encoders(c: &mut Criterion) {
    let words = [
        "Xin", " chào", " quý", " khách", ",", " em", " có", " thể", " giúp", " gì", "?",
    ];
    let mut events = vec![TurnEvent::Started {
        conversation_id: "conv_1".into(),
        user_message_id: "msg_u".into(),
        message_id: "msg_a".into(),
    }];
    events.extend((0..1000).map(|i| TurnEvent::Chunk {
        text: words[i % words.len()].into(),
    }));
    events.push(TurnEvent::Completed {
        message_id: "msg_a".into(),
        kind: MessageKind::Answer,
        intent: None,
        confidence: None,
        usage: None,
        reply: None,
    });
    let mut group = c.benchmark_group("turn_encoders");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("native", |b| {
        b.iter(|| encode_turn(|| NativeEncoder::new().with_request_id("req"), &events));
    });
    group.bench_function("openai", |b| {
        b.iter(|| encode_turn(|| OpenAiChunkEncoder::new("chatcmpl-1", "shop", 0), &events));
    });
    group.bench_function("ai_sdk", |b| {
        b.iter(|| encode_turn(AiSdkEncoder::new, &events));
    });
    group.finish();
}

criterion_group!(stream_codecs, benches, turn_encoders);
criterion_main!(stream_codecs);
