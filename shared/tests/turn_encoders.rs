//! The three [`TurnEncoder`]s on the same turns: each encoder's output for each fixture turn
//! is compared byte for byte with `tests/data/encoders/<turn>.<encoder>.sse`, and decoded
//! through the project's own decoders — whole and split at arbitrary points (proptest) —
//! back to the events the turn sent.
//!
//! `<turn>.ai_sdk.expected.json` is what the AI SDK must assemble from the AI SDK stream
//! (derived here from the turn's events, not from the encoder); `tests/ai-sdk/parse.mjs`
//! checks it with the `ai` package's own parser.
//!
//! `BLESS=1 cargo test -p concierge-core --test turn_encoders` rewrites the files; review
//! the diff.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use concierge_core::chat::{ChatEvent, FinishReason, UpstreamError, Usage};
use concierge_core::conversation::MessageKind;
use concierge_core::stream::ai_sdk::AiSdkEncoder;
use concierge_core::stream::native::{
    CLOSED_CODE, CLOSED_MESSAGE, NativeEncoder, NativeEvent, NativeStreamDecoder, from_turn,
};
use concierge_core::stream::openai::OpenAiStreamDecoder;
use concierge_core::stream::openai_out::OpenAiChunkEncoder;
use concierge_core::stream::sse::SseDecoder;
use concierge_core::stream::{ChatStreamDecoder, EncodeError, TurnEncoder};
use concierge_core::turn::TurnEvent;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

mod chunks;
use chunks::split;

const REQUEST_ID: &str = "req_fixture";

fn started() -> TurnEvent {
    TurnEvent::Started {
        conversation_id: "conv_1".into(),
        user_message_id: "msg_u1".into(),
        message_id: "msg_a1".into(),
    }
}

fn chunk(text: &str) -> TurnEvent {
    TurnEvent::Chunk { text: text.into() }
}

fn completed(kind: MessageKind, intent: Option<&'static str>, usage: Option<Usage>) -> TurnEvent {
    TurnEvent::Completed {
        message_id: "msg_a1".into(),
        kind,
        intent,
        confidence: intent.map(|_| 0.9),
        usage,
        reply: None,
    }
}

fn failed() -> TurnEvent {
    TurnEvent::Failed {
        code: "upstream_unavailable",
        message: "The assistant is busy. Please try again.",
    }
}

/// The fixture turns, by name.
fn turns() -> Vec<(&'static str, Vec<TurnEvent>)> {
    let usage = Some(Usage {
        prompt_tokens: 42,
        completion_tokens: 7,
    });
    vec![
        (
            "plain_answer",
            vec![
                started(),
                chunk("Xin chào"),
                chunk(" quý khách! \"Giá\" là 1\u{a0}000\u{a0}₫.\n"),
                completed(MessageKind::Answer, Some("product_info"), usage),
            ],
        ),
        (
            "tool_calls",
            vec![
                started(),
                chunk("Để em kiểm tra."),
                TurnEvent::ToolStart {
                    call_id: "call_1".into(),
                    name: "get_warranty".into(),
                    input: json!({"serial": "0979825281"}),
                },
                TurnEvent::ToolEnd {
                    call_id: "call_1".into(),
                    name: "get_warranty".into(),
                    ok: false,
                    output: json!("timeout after 5 s"),
                },
                TurnEvent::ToolStart {
                    call_id: "call_2".into(),
                    name: "get_warranty".into(),
                    input: json!({"serial": "0979825281"}),
                },
                TurnEvent::ToolEnd {
                    call_id: "call_2".into(),
                    name: "get_warranty".into(),
                    ok: true,
                    output: json!({"model": "S23 Ultra", "until": "2026-05-01"}),
                },
                chunk("Máy còn bảo hành đến 01/05/2026."),
                completed(MessageKind::Answer, None, None),
            ],
        ),
        (
            "progress_payload",
            vec![
                started(),
                TurnEvent::Progress {
                    message: "Plan ready: 2 tasks".into(),
                    percentage: Some(10.0),
                    stage: Some("plan_ready".into()),
                },
                TurnEvent::Progress {
                    message: "Task 1/2".into(),
                    percentage: Some(33.3),
                    stage: None,
                },
                TurnEvent::Payload {
                    kind: "table".into(),
                    data: json!({"columns": ["month", "revenue"], "rows": [["2026-01", 1200.5]]}),
                },
                chunk("Doanh thu tháng 1 là 1200,5."),
                TurnEvent::Payload {
                    kind: "sources".into(),
                    data: json!([{"url": "https://example.com/a", "title": "A"}]),
                },
                completed(MessageKind::Answer, None, usage),
            ],
        ),
        (
            "mid_stream_failure",
            vec![started(), chunk("Dạ, sản phẩm"), failed()],
        ),
        ("failure_before_text", vec![started(), failed()]),
        // The turn never sent a terminal event: `close` writes one.
        ("no_terminal", vec![started(), chunk("Dạ")]),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Native,
    OpenAi,
    AiSdk,
}

const KINDS: [(Kind, &str); 3] = [
    (Kind::Native, "native"),
    (Kind::OpenAi, "openai"),
    (Kind::AiSdk, "ai_sdk"),
];

fn encoder(kind: Kind) -> Box<dyn TurnEncoder> {
    match kind {
        Kind::Native => Box::new(NativeEncoder::new().with_request_id(REQUEST_ID)),
        Kind::OpenAi => Box::new(
            OpenAiChunkEncoder::new("chatcmpl-fixture", "shop", 1_700_000_000).include_usage(true),
        ),
        Kind::AiSdk => Box::new(AiSdkEncoder::new()),
    }
}

/// Encodes a whole turn as the Worker does: every event, then `close`.
fn encode(kind: Kind, events: &[TurnEvent]) -> String {
    let mut encoder = encoder(kind);
    let mut out = String::new();
    for event in events {
        encoder.encode(event, &mut out).unwrap();
    }
    let terminal = events.iter().any(TurnEvent::is_terminal);
    assert_eq!(encoder.close(&mut out), !terminal, "{kind:?}");
    assert!(encoder.is_ended());
    let before = out.len();
    assert_eq!(
        encoder.encode(&chunk("late"), &mut out),
        Err(EncodeError::AfterEnd)
    );
    assert!(!encoder.close(&mut out));
    assert_eq!(out.len(), before, "nothing is written after the end");
    out
}

/// The events the turn sent, with the failure `close` adds when it sent no terminal one.
fn closed(events: &[TurnEvent]) -> Vec<TurnEvent> {
    let mut events = events.to_vec();
    if !events.iter().any(TurnEvent::is_terminal) {
        events.push(TurnEvent::Failed {
            code: CLOSED_CODE,
            message: CLOSED_MESSAGE,
        });
    }
    events
}

fn decode_native(chunks: &[&[u8]]) -> Vec<(Option<u64>, NativeEvent)> {
    let mut decoder = NativeStreamDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        while let Some(frame) = decoder.next_event() {
            let frame = frame.unwrap();
            out.push((frame.seq, frame.event));
        }
    }
    decoder.finish();
    while let Some(frame) = decoder.next_event() {
        let frame = frame.unwrap();
        out.push((frame.seq, frame.event));
    }
    out
}

fn decode_openai(chunks: &[&[u8]]) -> Vec<ChatEvent> {
    let mut decoder = OpenAiStreamDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        while let Some(event) = decoder.next_event() {
            out.push(event.unwrap());
        }
    }
    decoder.finish();
    while let Some(event) = decoder.next_event() {
        out.push(event.unwrap());
    }
    out
}

/// SSE `data` payloads: the parts as JSON, `[DONE]` as a string.
fn decode_ai_sdk(chunks: &[&[u8]]) -> Vec<Value> {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    let mut push = |data: &str| {
        out.push(if data == "[DONE]" {
            json!("[DONE]")
        } else {
            serde_json::from_str(data).unwrap()
        });
    };
    for chunk in chunks {
        decoder.feed(chunk);
        while let Some(event) = decoder.next_event() {
            let event = event.unwrap();
            assert_eq!(event.event, "message");
            assert_eq!(event.id, None);
            push(event.data);
        }
    }
    decoder.finish();
    while let Some(event) = decoder.next_event() {
        push(event.unwrap().data);
    }
    out
}

/// What decoding `bytes` (split into `chunks`) gives, as JSON, so that splits compare equal.
fn decode(kind: Kind, chunks: &[&[u8]]) -> Value {
    match kind {
        Kind::Native => {
            let frames = decode_native(chunks);
            json!(
                frames
                    .iter()
                    .map(|(seq, event)| json!([seq, format!("{event:?}")]))
                    .collect::<Vec<_>>()
            )
        }
        Kind::OpenAi => json!(decode_openai(chunks)),
        Kind::AiSdk => json!(decode_ai_sdk(chunks)),
    }
}

/// The decoded stream is the turn's events, as far as the format carries them.
fn assert_same_events(kind: Kind, bytes: &[u8], events: &[TurnEvent]) {
    let events = closed(events);
    match kind {
        Kind::Native => {
            let expected: Vec<_> = events
                .iter()
                .zip(0..)
                .map(|(event, seq)| (Some(seq), from_turn(event, Some(REQUEST_ID))))
                .collect();
            assert_eq!(decode_native(&[bytes]), expected);
        }
        Kind::OpenAi => {
            let mut expected: Vec<ChatEvent> = Vec::new();
            for event in &events {
                match event {
                    TurnEvent::Chunk { text } => expected.push(ChatEvent::text(text.clone())),
                    TurnEvent::Completed { usage, .. } => expected.push(ChatEvent::Finish {
                        reason: FinishReason::Stop,
                        usage: Some(usage.unwrap_or_default()),
                    }),
                    TurnEvent::Failed { code, message } => {
                        expected.push(ChatEvent::Error(UpstreamError {
                            code: Some((*code).into()),
                            message: (*message).into(),
                        }))
                    }
                    _ => {}
                }
            }
            assert_eq!(decode_openai(&[bytes]), expected);
            let text = String::from_utf8(bytes.to_vec()).unwrap();
            assert!(text.ends_with("data: [DONE]\n\n"));
            assert!(
                text.lines()
                    .all(|l| l.is_empty() || l.starts_with("data: "))
            );
            let finishes = text.matches("\"finish_reason\":").count();
            let failed = events.iter().any(|e| matches!(e, TurnEvent::Failed { .. }));
            assert_eq!(finishes, usize::from(!failed));
        }
        Kind::AiSdk => {
            let parts = decode_ai_sdk(&[bytes]);
            assert_eq!(parts.last(), Some(&json!("[DONE]")));
            let of_type = |t: &str| parts.iter().filter(|p| p["type"] == t).count();
            let failed = events.iter().any(|e| matches!(e, TurnEvent::Failed { .. }));
            assert_eq!(of_type("finish"), usize::from(!failed));
            assert_eq!(of_type("error"), usize::from(failed));
            let text: String = parts
                .iter()
                .filter(|p| p["type"] == "text-delta")
                .map(|p| p["delta"].as_str().unwrap())
                .collect();
            assert_eq!(text, expected_ai_sdk(&events)["text"]);
        }
    }
}

/// What the AI SDK should assemble from the turn: its text, tool calls, payloads, progress
/// reports and end (`finish` metadata, or the error's text).
fn expected_ai_sdk(events: &[TurnEvent]) -> Value {
    let (mut text, mut tools, mut data, mut progress) =
        (String::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut message_id, mut finish, mut error) = (Value::Null, Value::Null, Value::Null);
    for event in closed(events) {
        match &event {
            TurnEvent::Started { message_id: id, .. } => message_id = json!(id),
            TurnEvent::Chunk { text: piece } => text.push_str(piece),
            TurnEvent::ToolStart {
                call_id,
                name,
                input,
            } => tools.push(json!({"toolCallId": call_id, "toolName": name, "input": input})),
            TurnEvent::ToolEnd {
                call_id,
                ok,
                output,
                ..
            } => {
                let tool = tools
                    .iter_mut()
                    .find(|t| t["toolCallId"] == *call_id)
                    .unwrap();
                if *ok {
                    tool["state"] = json!("output-available");
                    tool["output"] = output.clone();
                } else {
                    tool["state"] = json!("output-error");
                    tool["errorText"] = match output {
                        Value::String(s) => json!(s),
                        other => json!(other.to_string()),
                    };
                }
            }
            TurnEvent::Progress { .. } => {
                progress.push(via_text(&event));
            }
            TurnEvent::Payload { kind, data: d } => data.push(json!({"kind": kind, "data": d})),
            TurnEvent::Completed { .. } => {
                let mut metadata = via_text(&event);
                metadata.as_object_mut().unwrap().remove("event");
                finish = metadata;
            }
            TurnEvent::Failed { message, .. } => error = json!(message),
        }
    }
    for p in &mut progress {
        p.as_object_mut().unwrap().remove("event");
    }
    json!({
        "message_id": message_id, "text": text, "tools": tools, "data": data,
        "progress": progress, "finish": finish, "error": error,
    })
}

/// Through JSON text, so that `f32` fields read back as the decimals they are written as.
fn via_text(value: &impl serde::Serialize) -> Value {
    serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap()
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/encoders")
}

/// Compares `got` with the file, or writes it under `BLESS`.
fn check_file(path: &Path, got: &str) {
    if std::env::var_os("BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, got).unwrap();
        return;
    }
    let expected = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with BLESS=1)", path.display()));
    assert_eq!(got, expected, "{}", path.display());
}

#[test]
fn every_encoder_writes_its_blessed_fixture() {
    for (name, events) in turns() {
        for (kind, suffix) in KINDS {
            let out = encode(kind, &events);
            check_file(&data_dir().join(format!("{name}.{suffix}.sse")), &out);
            assert_same_events(kind, out.as_bytes(), &events);
        }
        let mut expected = serde_json::to_string_pretty(&expected_ai_sdk(&events)).unwrap();
        expected.push('\n');
        check_file(
            &data_dir().join(format!("{name}.ai_sdk.expected.json")),
            &expected,
        );
    }
}

#[test]
fn every_encoder_decodes_the_same_whatever_the_split() {
    for (name, events) in turns() {
        for (kind, _) in KINDS {
            let out = encode(kind, &events);
            let bytes = out.as_bytes();
            let whole = decode(kind, &[bytes]);
            let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
            assert_eq!(decode(kind, &bytewise), whole, "{name} {kind:?}");
            let mut runner = TestRunner::new(Config {
                cases: 64,
                ..Config::default()
            });
            let cuts = proptest::collection::vec(any::<usize>(), 0..48);
            runner
                .run(&cuts, |cuts| {
                    let chunks = split(bytes, &cuts);
                    prop_assert_eq!(decode(kind, &chunks), whole.clone(), "{} {:?}", name, kind);
                    Ok(())
                })
                .unwrap();
        }
    }
}

#[test]
fn the_native_stream_keeps_the_seed_chunk_format() {
    let out = encode(Kind::Native, &[chunk("Xin chào"), failed()]);
    assert!(
        out.starts_with("id: 0\ndata: {\"chunk\":\"Xin chào\"}\n\n"),
        "{out}"
    );
}
