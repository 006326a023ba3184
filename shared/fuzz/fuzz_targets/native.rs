//! Native stream decoder: never panics, split-invariant, and whatever it decodes the
//! native encoder re-encodes into a stream that decodes to the same events.
#![no_main]

use concierge_core::stream::StreamError;
use concierge_core::stream::native::{NativeFrame, NativeStreamDecoder, encode_event};
use libfuzzer_sys::fuzz_target;

fn decode(chunks: &[&[u8]]) -> Vec<Result<NativeFrame, StreamError>> {
    let mut decoder = NativeStreamDecoder::new();
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

    let frames: Vec<NativeFrame> = whole.into_iter().filter_map(Result::ok).collect();
    let mut bytes = String::new();
    for (seq, frame) in (0..).zip(&frames) {
        encode_event(seq, &frame.event, &mut bytes);
    }
    let again: Vec<NativeFrame> = decode(&[bytes.as_bytes()])
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    let events = |f: &[NativeFrame]| f.iter().map(|f| f.event.clone()).collect::<Vec<_>>();
    assert_eq!(events(&again), events(&frames));
});
