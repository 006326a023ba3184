//! SSE decoder: never panics, and the events do not depend on how the input is split.
#![no_main]

use concierge_core::stream::sse::SseDecoder;
use libfuzzer_sys::fuzz_target;

fn decode(
    chunks: &[&[u8]],
) -> (
    Vec<Result<(String, String, Option<String>), String>>,
    Option<u32>,
) {
    let mut decoder = SseDecoder::with_limits(256, 1024);
    let mut out = Vec::new();
    let mut drain = |d: &mut SseDecoder| {
        while let Some(item) = d.next_event() {
            out.push(
                item.map(|e| {
                    (
                        e.event.to_owned(),
                        e.data.to_owned(),
                        e.id.map(str::to_owned),
                    )
                })
                .map_err(|e| format!("{e:?}")),
            );
        }
    };
    for chunk in chunks {
        decoder.feed(chunk);
        drain(&mut decoder);
    }
    decoder.finish();
    drain(&mut decoder);
    (out, decoder.retry())
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
    let bytewise: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(decode(&bytewise), whole);
});
