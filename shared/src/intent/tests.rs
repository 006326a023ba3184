use super::*;

fn classify(current: &str, previous: &[&str]) -> Classification {
    Classifier::default().classify(current, previous)
}

#[test]
fn keyword_file_has_every_section() {
    let lists = KeywordLists::parse(DEFAULT_KEYWORDS).unwrap_or_default();
    for section in [
        "assemble_pc",
        "shopping",
        "warranty",
        "assemble_pc.specific",
        "assemble_pc.general",
        "warranty.concept",
        "warranty.check",
    ] {
        assert!(!lists.section(section).is_empty(), "{section}");
    }
    assert_eq!(lists.section("assemble_pc").len(), 15 + 27);
    assert_eq!(lists.section("shopping").len(), 16 + 16);
    assert_eq!(lists.section("warranty").len(), 11 + 11);
}

#[test]
fn keyword_file_errors_name_the_line() {
    assert_eq!(
        KeywordLists::parse("vi: \"mua\"").map_err(|e| e.line),
        Err(1)
    );
    assert_eq!(
        KeywordLists::parse("# c\n[shop\n").map_err(|e| e.line),
        Err(2)
    );
}

#[test]
fn each_intent_by_its_keywords() {
    let cases = [
        (
            "Tư vấn giúp em cấu hình chơi game tầm 20 triệu",
            Intent::AssemblePc,
            0.83,
            true,
        ),
        ("build pc for photoshop", Intent::AssemblePc, 0.83, true),
        ("Giá RTX 4060 bao nhiêu?", Intent::Shopping, 0.83, true),
        ("gia rtx 4060 bao nhieu", Intent::Shopping, 0.83, true),
        ("Do you have it in stock?", Intent::Shopping, 0.71, true),
        ("kiểm tra bảo hành", Intent::Warranty, 0.83, true),
        ("kiem tra bao hanh", Intent::Warranty, 0.83, true),
        ("bảo hành là gì", Intent::Warranty, 0.71, false),
        ("what is RMA", Intent::Warranty, 0.71, false),
    ];
    for (text, intent, confidence, retrieve) in cases {
        let c = classify(text, &[]);
        assert_eq!(
            (c.intent, c.confidence, c.need_retrieval_hint),
            (intent, confidence, retrieve),
            "{text}: {c:?}"
        );
    }
}

#[test]
fn unknown_and_ambiguous() {
    let c = classify("xin chào", &[]);
    assert_eq!(
        (c.intent, c.confidence, c.need_retrieval_hint),
        (Intent::Unknown, 0.0, false)
    );
    // One shopping and one assemble_pc keyword: a tie stays under the threshold.
    let c = classify("I want to buy a GPU", &[]);
    assert!(c.confidence < 0.5, "{c:?}");
    // "mưa" (rain) is not "mua" (buy).
    assert_eq!(classify("trời mưa quá", &[]).intent, Intent::Unknown);
}

#[test]
fn context_weighs_less_than_the_current_message() {
    let c = classify("cái nào rẻ hơn?", &["mình muốn mua laptop"]);
    assert_eq!((c.intent, c.confidence), (Intent::Shopping, 0.56));
    let c = classify("cái nào rẻ hơn?", &["mình muốn mua laptop", "ok", "ừ"]);
    assert_eq!((c.intent, c.confidence), (Intent::Shopping, 0.33));
    // A clear switch of topic wins over older context.
    let c = classify(
        "giá RTX 4060 bao nhiêu?",
        &["kiểm tra bảo hành", "0979825281"],
    );
    assert_eq!(c.intent, Intent::Shopping);
    assert!(c.confidence >= 0.5, "{c:?}");
}

#[test]
fn the_current_message_decides_among_the_intents_it_mentions() {
    // Two earlier shopping messages do not outvote a clear warranty request.
    let c = classify(
        "I want to check the warranty of my phone",
        &["what is the price?", "free delivery?"],
    );
    assert_eq!((c.intent, c.confidence), (Intent::Warranty, 0.71));
    assert_eq!(
        c.rationale,
        "current warranty: warranty; score 1.00 vs 0.00"
    );
    // Earlier messages still add weight to an intent the current message mentions.
    let c = classify("giá bao nhiêu?", &["mình muốn mua laptop"]);
    assert_eq!((c.intent, c.confidence), (Intent::Shopping, 0.86));
}

#[test]
fn warranty_check_and_rationale() {
    let c = classify("check warranty please", &[]);
    assert!(c.warranty_check);
    assert_eq!(
        c.rationale,
        "current warranty: check warranty, warranty; score 2.00 vs 0.00"
    );
    assert!(!classify("chính sách bảo hành thế nào", &[]).warranty_check);
}

/// A visitor whose own product is broken needs its warranty checked (the branch asks for
/// the serial); a question about the policy in general does not.
#[test]
fn a_broken_product_is_a_warranty_check() {
    for text in [
        "Máy giặt nhà em bị lỗi, bảo hành thế nào?",
        "tủ lạnh bị hỏng rồi, bảo hành ra sao shop?",
        "may loc nuoc nha minh bi hu, bao hanh sao a",
        "My washing machine is broken, how does the warranty work?",
        "the screen stopped working, what about the warranty?",
        "Máy lọc nước bị rò rỉ, em muốn bảo hành",
        "em cần bảo hành cái laptop",
        "I'd like to make a warranty claim for my phone",
    ] {
        let c = classify(text, &[]);
        assert_eq!(c.intent, Intent::Warranty, "{text}");
        assert!(c.warranty_check, "{text}");
    }
    for text in [
        "sản phẩm lỗi thì chính sách bảo hành thế nào?",
        "how does your warranty policy work?",
    ] {
        assert!(!classify(text, &[]).warranty_check, "{text}");
    }
}

#[test]
fn log_line_has_the_seeds_fields() {
    let log = ClassificationLog {
        intent: Intent::Unknown,
        confidence: 0.0,
        need_retrieval: false,
        clarify_needed: true,
        first_clarify_question: Some("?".into()),
        conversation_id: "c1".into(),
        by: None,
    };
    assert_eq!(
        log.to_json_line(),
        r#"{"intent":"unknown","confidence":0.0,"need_retrieval":false,"clarify_needed":true,"first_clarify_question":"?","conversation_id":"c1"}"#
    );
}

/// Issue 48: the visitors' ordinary first questions, and a site's catalog terms.
#[test]
fn product_questions_are_shopping() {
    for text in [
        "Bên shop còn Asus Vivobook 14 không?",
        "Tư vấn giúp em máy tính cho kế toán",
        "tai nghe bluetooth loai nao tot vay shop",
        "Cần tìm router wifi 6 cho nhà 3 tầng",
        "Do you sell gaming chairs?",
    ] {
        assert_eq!(classify(text, &[]).intent, Intent::Shopping, "{text}");
    }
    assert_eq!(
        classify("Tư vấn cấu hình PC chơi game tầm 20 triệu", &[]).intent,
        Intent::AssemblePc
    );
    for text in ["alo", "xin chào shop", "cảm ơn", "123"] {
        let c = classify(text, &[]);
        assert_eq!((c.intent, c.small_talk), (Intent::Unknown, true), "{text}");
    }
    assert!(!classify("Hôm nay trời đẹp quá", &[]).small_talk);
}

#[test]
fn catalog_terms_name_products_but_never_replace_keywords() {
    let plain = Classifier::default();
    assert_eq!(
        plain.classify("Có Anthelios không?", &[]).intent,
        Intent::Unknown
    );
    let shop = plain.with_catalog(["Anthelios", "Gaming", "PC Gaming AP-4060"]);
    let c = shop.classify("Có Anthelios không?", &[]);
    assert_eq!(
        (c.intent, c.product.as_deref()),
        (Intent::Shopping, Some("Anthelios"))
    );
    // "Gaming" stays the seed's assemble_pc keyword; the full product name hides it.
    assert_eq!(shop.phrases(), plain.phrases() + 2);
    assert_eq!(
        shop.classify("PC Gaming AP-4060 bao nhiêu tiền?", &[])
            .intent,
        Intent::Shopping
    );
}

#[test]
fn greetings_typed_without_marks_are_not_taken_for_one_syllable_products() {
    // "bạn ơi", "tôi muốn hỏi", "hôm qua", "anh ơi": folded, they read as "bàn" (a desk),
    // "túi" (a bag), "quà" (a gift); a one-syllable product noun counts only with its marks.
    for message in [
        "ban oi",
        "tui muon hoi",
        "hom qua",
        "anh oi",
        "chao shop",
        "ban oi shop",
    ] {
        let verdict = classify(message, &[]);
        assert_eq!(verdict.intent, Intent::Unknown, "{message}: {verdict:?}");
    }
    // Typed with its marks, the noun names the product; a longer name matches either way.
    assert_eq!(
        classify("có bàn làm việc không", &[]).intent,
        Intent::Shopping
    );
    assert_eq!(
        classify("co ban ghe gaming khong", &[]).intent,
        Intent::Shopping
    );
}

#[test]
fn catalog_terms_too_short_or_of_small_talk_are_not_product_names() {
    // A shop's copy gives "Q" and "A" (its FAQ), "Shop" and "Bạn" (its greetings).
    let classifier =
        Classifier::default().with_catalog(["Q", "A", "Shop", "Bạn", "Son dưỡng môi", "X1"]);
    for message in ["I have a question", "chào shop", "bạn ơi", "Q?"] {
        let verdict = classifier.classify(message, &[]);
        assert_eq!(verdict.intent, Intent::Unknown, "{message}: {verdict:?}");
    }
    for message in ["co son duong moi khong", "X1 còn hàng không"] {
        let verdict = classifier.classify(message, &[]);
        assert_eq!(verdict.intent, Intent::Shopping, "{message}: {verdict:?}");
    }
}
