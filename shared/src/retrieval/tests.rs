use super::*;
use crate::boundary::VectorMatch;
use crate::conversation::Metadata;

fn hit(id: &str, score: f32, text: &str, message_id: Option<&str>) -> VectorMatch {
    let mut metadata = Metadata::new();
    metadata.insert("text".into(), text.into());
    metadata.insert(
        "source".into(),
        if message_id.is_some() {
            "conversation"
        } else {
            "knowledge"
        }
        .into(),
    );
    if let Some(id) = message_id {
        metadata.insert("message_id".into(), id.into());
    }
    VectorMatch {
        id: id.into(),
        score,
        metadata,
    }
}

#[test]
fn chunk_ids_and_chunks() {
    assert_eq!(chunk_id("m1", 0), "m1#chunk_0");
    assert_eq!(
        chunk_id(&document_vector_parent("s1", "faq"), 2),
        "doc_738347d071e772cdc88cb25b911c61677c54c9b5#chunk_2"
    );
    assert_eq!(stale_chunk_ids("m1", 3, 1), ["m1#chunk_1", "m1#chunk_2"]);
    assert!(stale_chunk_ids("m1", 1, 3).is_empty());
    let long = "từ ".repeat(CHUNK_WORDS + 5);
    assert_eq!(chunks(&long).len(), 2);
    assert!(chunks("   ").is_empty());
}

#[test]
fn every_document_vector_id_fits_vectorize() {
    let site = "site_0123456789abcdef";
    let longest = "a".repeat(40);
    for document in ["x", "faq", longest.as_str()] {
        let parent = document_vector_parent(site, document);
        assert_eq!(parent.len(), 44);
        // 30 000 characters make at most 15 000 words: 50 chunks of 300 words.
        for id in document_chunk_ids(site, document, 10_000) {
            assert!(id.len() <= MAX_VECTOR_ID_BYTES, "{id}");
        }
    }
    // Distinct per site and per document, and stable.
    assert_ne!(
        document_vector_parent(site, "faq"),
        document_vector_parent("site_other", "faq")
    );
    assert_ne!(
        document_vector_parent("a/b", "c"),
        document_vector_parent("a", "b/c")
    );
    assert_eq!(
        document_vector_parent(site, "faq"),
        document_vector_parent(site, "faq")
    );
}

#[test]
fn the_longest_document_fits_the_chunk_bound() {
    assert_eq!(MAX_DOCUMENT_CHUNKS, 50);
    let densest = "a ".repeat(MAX_DOCUMENT_CHARS / 2);
    assert_eq!(densest.chars().count(), MAX_DOCUMENT_CHARS);
    assert_eq!(chunks(&densest).len(), MAX_DOCUMENT_CHUNKS);
    let stale = document_stale_ids("s1", "faq", 48);
    assert_eq!(stale.len(), 2);
    assert!(stale[1].ends_with("#chunk_49"));
}

#[test]
fn legacy_ids_are_the_old_scheme_within_the_limit() {
    assert_eq!(
        legacy_document_chunk_ids("s1", "faq", 2),
        ["s1/faq#chunk_0", "s1/faq#chunk_1"]
    );
    let long = "a".repeat(40);
    assert!(legacy_document_chunk_ids("site_0123456789abcdef", &long, 3).is_empty());
}

#[test]
fn rerank_prefers_word_overlap_skips_history_and_duplicates() {
    let options = RetrievalOptions {
        top_k: 2,
        ..RetrievalOptions::default()
    };
    let matches = vec![
        hit("a#chunk_0", 0.50, "Chính sách đổi trả trong 7 ngày", None),
        hit("b#chunk_0", 0.52, "Giờ mở cửa 8h-21h", None),
        hit("a#chunk_0", 0.50, "Chính sách đổi trả trong 7 ngày", None),
        hit("m1#chunk_0", 0.99, "đổi trả", Some("m1")),
    ];
    let passages = rerank("chính sách đổi trả", matches, &options, &["m1"]);
    let ids: Vec<&str> = passages.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["a#chunk_0", "b#chunk_0"]);
    assert_eq!(passages[0].source, PassageSource::Knowledge);
}
