//! Chunking helpers for the stream tests: the same bytes cut at arbitrary points, so a
//! decoder's output can be checked not to depend on how a stream arrives.

/// Splits `bytes` at the given cut points (taken modulo the length, sorted).
pub fn split<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(&bytes[start..cut]);
        start = cut;
    }
    chunks.push(&bytes[start..]);
    chunks
}
