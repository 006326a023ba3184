use super::*;

fn matches(text: &str, keyword: &str) -> bool {
    Phrase::new(keyword).occurs_in(&tokens(text))
}

#[test]
fn folds_vietnamese() {
    assert_eq!(fold("Bảo Hành  ĐƯỢC không?"), "bao hanh duoc khong");
    assert_eq!(fold("Kiểm tra: SN-123."), "kiem tra sn-123");
}

#[test]
fn matches_with_and_without_diacritics() {
    assert!(matches("tôi muốn kiểm tra bảo hành", "bảo hành"));
    assert!(matches("toi muon kiem tra bao hanh", "bảo hành"));
    assert!(matches("BẢO HÀNH", "bảo hành"));
    assert!(matches("bảo hanh", "bảo hành"));
    assert!(!matches("trời mưa", "mua"));
    assert!(matches("muốn mua", "mua"));
    assert!(matches("bao hành", "bảo hành"));
}

#[test]
fn tone_placement_and_combining_marks() {
    assert!(matches("hoá đơn", "hóa đơn"));
    // "hóa đơn" typed with combining marks (NFD).
    assert!(matches("ho\u{301}a đo\u{31b}n", "hóa đơn"));
    assert!(matches("gia\u{301} bao nhiêu", "giá"));
}

#[test]
fn word_hashes_match_the_folded_words() {
    for text in [
        "Bảo Hành  ĐƯỢC không?",
        "SN: ABC-123--, -x- mini-itx",
        "ho\u{301}a đo\u{31b}n ü Ü ß",
        "",
        "---",
    ] {
        let mut expected = Vec::new();
        for_each_word(text, |w| expected.push(word_hash(w.folded)));
        let mut hashes = Vec::new();
        for_each_word_hash(text, |h| hashes.push(h));
        assert_eq!(hashes, expected, "{text}");
    }
}

#[test]
fn words_and_phrases() {
    assert!(matches("case mini-itx nào đẹp", "mini-itx"));
    assert!(matches("need a new GPU", "gpu"));
    assert!(matches("what specs do I need", "spec"));
    assert!(!matches("specification", "spec"));
    assert!(matches("chính sách 1 đổi 1", "1 đổi 1"));
    assert!(!matches("đổi 1", "1 đổi 1"));
}
