//! Encoder → decoder round trips (proptest), split arbitrarily on the way.
#![allow(clippy::unwrap_used)]

use concierge_core::chat::{ChatEvent, FinishReason, ToolCall, Usage};
use concierge_core::stream::native::{
    Completed, Failed, NativeEncoder, NativeEvent, NativeFrame, NativeStreamDecoder, Progress,
    Started, ToolEnd, ToolStart,
};
use concierge_core::stream::openai::OpenAiStreamDecoder;
use concierge_core::stream::openai_out::OpenAiChunkEncoder;
use concierge_core::stream::sse::{OwnedSseEvent, SseDecoder, SseFrame};
use concierge_core::stream::{ChatStreamDecoder, EncodeError, TurnEncoder};
use proptest::prelude::*;
use serde_json::json;

/// Splits at the given cut points (modulo the length).
fn split(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut start = 0;
    let mut chunks = Vec::new();
    for cut in cuts {
        chunks.push(bytes[start..cut].to_vec());
        start = cut;
    }
    chunks.push(bytes[start..].to_vec());
    chunks
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        "[a-zA-Z0-9 ,.!?\\n\\r\\t\"\\\\{}:]{0,40}",
        Just("Xin chào quý khách".to_string()),
        Just(String::new()),
    ]
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::Value::Null),
        any::<i64>().prop_map(|n| json!(n)),
        text().prop_map(|s| json!(s)),
        (text(), any::<bool>()).prop_map(|(k, b)| json!({ k: b, "list": [1, "two", null] })),
    ]
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(text())
}

fn native_event() -> impl Strategy<Value = NativeEvent> {
    prop_oneof![
        (opt_text(), opt_text(), opt_text()).prop_map(
            |(conversation_id, message_id, request_id)| {
                NativeEvent::Started(Started {
                    conversation_id,
                    message_id,
                    request_id,
                })
            }
        ),
        text().prop_map(NativeEvent::Chunk),
        (text(), text(), json_value()).prop_map(|(call_id, name, input)| NativeEvent::ToolStart(
            ToolStart {
                call_id,
                name,
                input
            }
        )),
        (text(), text(), any::<bool>(), json_value()).prop_map(|(call_id, name, ok, output)| {
            NativeEvent::ToolEnd(ToolEnd {
                call_id,
                name,
                ok,
                output,
            })
        }),
        (text(), proptest::option::of(0.0f32..=100.0), opt_text()).prop_map(
            |(message, percentage, stage)| NativeEvent::Progress(Progress {
                message,
                percentage,
                stage
            })
        ),
        json_value().prop_map(NativeEvent::Payload),
    ]
}

fn terminal_event() -> impl Strategy<Value = NativeEvent> {
    prop_oneof![
        (
            text(),
            text(),
            opt_text(),
            proptest::option::of(any::<f32>().prop_filter("finite", |f| f.is_finite()))
        )
            .prop_map(|(message_id, kind, intent, confidence)| {
                NativeEvent::Completed(Completed {
                    message_id,
                    kind,
                    intent,
                    confidence,
                    usage: None,
                    reply: None,
                })
            }),
        (text(), text())
            .prop_map(|(code, message)| NativeEvent::Failed(Failed::new(code, message))),
    ]
}

fn decode_native(chunks: &[Vec<u8>]) -> Vec<NativeFrame> {
    let mut decoder = NativeStreamDecoder::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        while let Some(frame) = decoder.next_event() {
            frames.push(frame.unwrap());
        }
    }
    decoder.finish();
    while let Some(frame) = decoder.next_event() {
        frames.push(frame.unwrap());
    }
    frames
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn sse_frames_round_trip(
        frames in proptest::collection::vec(
            (proptest::option::of("[a-z_]{1,12}"), proptest::option::of("[0-9a-zA-Z-]{0,8}"), text()),
            0..8,
        ),
        cuts in proptest::collection::vec(any::<usize>(), 0..16),
    ) {
        let mut bytes = String::new();
        let mut expected = Vec::new();
        let mut last_id = None;
        for (event, id, data) in &frames {
            let mut frame = SseFrame::new(data);
            if let Some(event) = event { frame = frame.event(event); }
            if let Some(id) = id { frame = frame.id(id); last_id = Some(id.clone()); }
            frame.encode_into(&mut bytes).unwrap();
            expected.push(OwnedSseEvent {
                event: event.clone().unwrap_or_else(|| "message".into()),
                data: data.replace("\r\n", "\n").replace('\r', "\n"),
                id: last_id.clone(),
            });
        }
        let mut decoder = SseDecoder::new();
        let mut got = Vec::new();
        for chunk in split(bytes.as_bytes(), &cuts) {
            decoder.feed(&chunk);
            while let Some(ev) = decoder.next_event() {
                got.push(ev.unwrap().to_owned());
            }
        }
        decoder.finish();
        prop_assert!(decoder.next_event().is_none());
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn native_streams_round_trip(
        events in proptest::collection::vec(native_event(), 0..12),
        terminal in terminal_event(),
        cuts in proptest::collection::vec(any::<usize>(), 0..24),
    ) {
        let mut encoder = NativeEncoder::new();
        let mut bytes = String::new();
        for event in events.iter().chain([&terminal]) {
            encoder.encode_native(event, &mut bytes).unwrap();
        }
        prop_assert_eq!(encoder.encode_native(&NativeEvent::Chunk("late".into()), &mut bytes), Err(EncodeError::AfterEnd));
        prop_assert!(!encoder.close(&mut bytes));
        let frames = decode_native(&split(bytes.as_bytes(), &cuts));
        let expected: Vec<NativeFrame> = events
            .into_iter()
            .chain([terminal])
            .zip(0..)
            .map(|(event, seq)| NativeFrame { seq: Some(seq), event })
            .collect();
        prop_assert_eq!(frames, expected);
    }

    #[test]
    fn openai_chunks_round_trip(
        texts in proptest::collection::vec(text(), 0..8),
        calls in proptest::collection::vec((text(), "[a-z_]{1,12}", json_value()), 0..3),
        usage in proptest::option::of((0u32..100_000, 0u32..100_000)),
        cuts in proptest::collection::vec(any::<usize>(), 0..24),
    ) {
        let mut encoder = OpenAiChunkEncoder::new("chatcmpl-x", "shop", 1).include_usage(usage.is_some());
        let mut bytes = String::new();
        let mut expected = Vec::new();
        for text in &texts {
            encoder.text(text, &mut bytes).unwrap();
            if !text.is_empty() {
                expected.push(ChatEvent::text(text.clone()));
            }
        }
        let calls: Vec<ToolCall> = calls
            .into_iter()
            .enumerate()
            .map(|(i, (id, name, args))| ToolCall {
                id: if id.is_empty() { format!("call_{i}") } else { id },
                name,
                arguments: json!({ "value": args }).to_string(),
            })
            .collect();
        for call in &calls {
            encoder.tool_call(call, &mut bytes).unwrap();
            expected.push(ChatEvent::ToolCall(call.clone()));
        }
        let usage = usage.map(|(p, c)| Usage { prompt_tokens: p, completion_tokens: c });
        let reason = if calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
        encoder.finish(reason, usage, &mut bytes).unwrap();
        expected.push(ChatEvent::Finish { reason, usage });
        prop_assert_eq!(encoder.text("late", &mut bytes), Err(EncodeError::AfterEnd));

        let mut decoder = OpenAiStreamDecoder::new();
        let mut got = Vec::new();
        for chunk in split(bytes.as_bytes(), &cuts) {
            decoder.feed(&chunk);
            while let Some(ev) = decoder.next_event() {
                got.push(ev.unwrap());
            }
        }
        decoder.finish();
        while let Some(ev) = decoder.next_event() {
            got.push(ev.unwrap());
        }
        prop_assert_eq!(got, expected);
    }
}

#[test]
fn native_close_without_terminal_writes_one_failed() {
    let mut encoder = NativeEncoder::new();
    let mut bytes = String::new();
    encoder.chunk("Xin", &mut bytes).unwrap();
    assert!(encoder.close(&mut bytes));
    assert!(!encoder.close(&mut bytes));
    assert_eq!(
        bytes,
        "id: 0\ndata: {\"chunk\":\"Xin\"}\n\n\
         event: failed\nid: 1\ndata: {\"error\":{\"code\":\"stream_closed\",\"message\":\"The answer was interrupted.\"}}\n\n"
    );
    let frames = decode_native(&[bytes.into_bytes()]);
    assert_eq!(frames.len(), 2);
    assert!(matches!(&frames[1].event, NativeEvent::Failed(f) if f.error.code == "stream_closed"));
}

#[test]
fn native_encoder_resumes_numbering() {
    let mut encoder = NativeEncoder::resume_at(7);
    let mut bytes = String::new();
    assert_eq!(encoder.chunk("a", &mut bytes), Ok(7));
    assert_eq!(encoder.next_seq(), 8);
    assert!(bytes.starts_with("id: 7\n"));
}

#[test]
fn openai_error_ends_the_stream_and_decodes_as_upstream_error() {
    let mut encoder = OpenAiChunkEncoder::new("c", "m", 0);
    let mut bytes = String::new();
    encoder.text("a", &mut bytes).unwrap();
    encoder
        .error("upstream_unavailable", "busy", &mut bytes)
        .unwrap();
    assert!(!encoder.close(&mut bytes));
    let mut decoder = OpenAiStreamDecoder::new();
    decoder.feed(bytes.as_bytes());
    decoder.finish();
    let events: Vec<_> = std::iter::from_fn(|| decoder.next_event()).collect();
    assert_eq!(events.len(), 2);
    assert!(
        matches!(&events[1], Ok(ChatEvent::Error(e)) if e.code.as_deref() == Some("upstream_unavailable") && e.message == "busy")
    );
}
