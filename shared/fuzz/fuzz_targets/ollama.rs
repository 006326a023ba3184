//! OllamaStreamDecoder: never panics, and the events do not depend on how the input is split.
#![no_main]

use concierge_core::chat::ChatEvent;
use concierge_core::stream::ollama::OllamaStreamDecoder;
use concierge_core::stream::{ChatStreamDecoder, StreamError};
use libfuzzer_sys::fuzz_target;

fn decode(chunks: &[&[u8]]) -> Vec<Result<ChatEvent, StreamError>> {
    let mut decoder = OllamaStreamDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        out.extend(std::iter::from_fn(|| decoder.next_event()));
    }
    decoder.finish();
    out.extend(std::iter::from_fn(|| decoder.next_event()));
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = decode(&[data]);
    let cut = if data.is_empty() {
        0
    } else {
        usize::from(data[0]) % data.len()
    };
    let (a, b) = data.split_at(cut);
    assert_eq!(decode(&[a, b]), whole);
});
