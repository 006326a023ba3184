//! Handoff to a person: the request phrases (vi/en), office hours and their wording, the
//! visitor-facing sentences, and the new message kinds.
#![allow(clippy::unwrap_used)]

use concierge_core::conversation::{
    EmbeddingStatus, Language, MessageKind, StoredMessage, embedding_policy,
};
use concierge_core::handoff::{
    ClockTime, HandoffState, HoursError, Notice, OfficeHours, Register, SENTENCES_EN, SENTENCES_VI,
    asks_for_person, check_hours, format_hours, open_at,
};

/// Real ways visitors ask for a person.
const ASKS: &[&str] = &[
    // Vietnamese, with and without diacritics, any case.
    "gặp nhân viên",
    "Gặp nhân viên",
    "GẶP NHÂN VIÊN!",
    "gap nhan vien",
    "Cho mình gặp nhân viên tư vấn với",
    "cho em nói chuyện với nhân viên được không ạ",
    "tôi muốn nói chuyện với người thật",
    "noi chuyen voi nguoi that",
    "kết nối với tư vấn viên giúp tôi",
    "chuyển cho nhân viên hỗ trợ đi",
    "có người thật không vậy",
    "nhân viên tư vấn",
    "Nhân viên tư vấn ơi",
    "nhân viên ơi",
    "cần tư vấn viên",
    "mình muốn chat với nhân viên",
    "liên hệ nhân viên cskh",
    "bot không hiểu gì cả, cho gặp nhân viên",
    "em muốn gặp quản lý",
    "cho tôi nói chuyện với con người",
    "có nhân viên tư vấn không",
    "Gặp nhân viên",
    // English.
    "talk to a human",
    "I want to talk to a human",
    "Can I speak with someone?",
    "speak to someone",
    "connect me to a live agent",
    "real person please",
    "HUMAN",
    "get me a human",
    "is there a real person I can talk to",
    "transfer me to customer service",
    "let me speak to your manager",
    "I'd like to talk to a representative",
    "Operator!",
    "talk to an agent",
    "can i talk to a person",
    "put me through to a real human please",
    "No, I want to speak to a person",
    "I need customer support",
    "không, em muốn gặp nhân viên",
    // What the widget's "Gặp nhân viên" / "Talk to a person" button sends.
    "Tôi muốn nói chuyện với nhân viên.",
    "I would like to talk to a person.",
];

/// Messages that mention people, or look like the phrases, and ask for no one.
const DOES_NOT_ASK: &[&str] = &[
    "nhân viên",
    "nhân viên giao hàng chưa tới",
    "the staff was rude",
    "nhân viên bán hàng rất nhiệt tình",
    "tôi đã nói chuyện với nhân viên rồi",
    "em không muốn gặp nhân viên",
    "không cần gặp nhân viên đâu",
    "giá bao nhiêu",
    "are you a human?",
    "shop có cần tuyển nhân viên không",
    "shop có cần nhân viên không",
    "shipper đâu rồi",
    "I need someone to explain this",
    "i don't need a human",
    "I don't want to talk to a person",
    "talk to human resources",
    "the human body",
    "tôi gặp nhân viên giao hàng rồi",
    "gặp lỗi khi thanh toán",
    "nhân viên tư vấn hôm qua nói sai giá",
    "cảm ơn nhân viên tư vấn nhiệt tình",
    "talk to you later",
    "my agent said the flat is free",
    "the person who sold me this laptop",
    "I already talked to an agent",
    "no need to talk to a human",
    "I do not want to speak to someone",
    "",
    "   ",
];

#[test]
fn recognises_real_requests_for_a_person() {
    let missed: Vec<&&str> = ASKS.iter().filter(|t| !asks_for_person(t)).collect();
    assert!(missed.is_empty(), "not recognised as a request: {missed:?}");
}

#[test]
fn leaves_other_mentions_of_people_alone() {
    let wrong: Vec<&&str> = DOES_NOT_ASK.iter().filter(|t| asks_for_person(t)).collect();
    assert!(wrong.is_empty(), "taken for a request: {wrong:?}");
}

#[test]
fn requests_are_recognised_without_diacritics_and_in_any_case() {
    for text in ASKS {
        let folded = concierge_core::normalize::fold(text);
        assert!(asks_for_person(&folded), "folded: {folded}");
        assert!(asks_for_person(&text.to_uppercase()), "upper: {text}");
    }
    for text in DOES_NOT_ASK {
        assert!(!asks_for_person(&text.to_uppercase()), "upper: {text}");
    }
}

/// Words the matcher looks at, to build texts that exercise it.
const VOCABULARY: &[&str] = &[
    "gặp", "gap", "nhân", "viên", "tư", "vấn", "người", "thật", "không", "muốn", "cho", "em",
    "giao", "hàng", "ơi", "với", "talk", "speak", "to", "a", "human", "someone", "don't", "real",
    "person", "need", "the", "staff", "was", "agent", "please", "đã", "rồi", "giá",
];

proptest::proptest! {
    /// Punctuation and letter case between and around the words change nothing, and any
    /// text (any characters) is decided without a panic.
    #[test]
    fn punctuation_and_case_change_nothing(
        picks in proptest::collection::vec(0..VOCABULARY.len(), 0..12),
        noise in "\\PC{0,40}",
    ) {
        let words: Vec<&str> = picks.iter().map(|&i| VOCABULARY[i]).collect();
        let plain = words.join(" ");
        let decided = asks_for_person(&plain);
        proptest::prop_assert_eq!(asks_for_person(&words.join(" , ")), decided, "{}", plain);
        proptest::prop_assert_eq!(asks_for_person(&format!("¿{}?!", words.join("  "))), decided, "{}", plain);
        proptest::prop_assert_eq!(asks_for_person(&plain.to_uppercase()), decided, "{}", plain);
        let _ = asks_for_person(&noise);
        let _ = asks_for_person(&format!("{noise} {plain}"));
    }
}

#[test]
fn a_request_inside_a_longer_message_counts() {
    assert!(asks_for_person(
        "Mình hỏi mãi mà bot trả lời không đúng. Cho mình gặp nhân viên nhé, cảm ơn."
    ));
    assert!(asks_for_person(
        "This isn't helping at all. Can I please speak to a real person about my order?"
    ));
}

#[test]
fn a_very_long_message_is_decided_quickly() {
    let text = "nhân viên ".repeat(2_000) + "gặp";
    assert!(!asks_for_person(&text));
}

fn span(days: &[u8], start: &str, end: &str) -> OfficeHours {
    OfficeHours {
        days: days.to_vec(),
        start: ClockTime::parse(start).unwrap(),
        end: ClockTime::parse(end).unwrap(),
    }
}

#[test]
fn clock_times_parse_strictly() {
    assert_eq!(ClockTime::parse("08:00").map(ClockTime::minutes), Some(480));
    assert_eq!(ClockTime::parse("8:00").map(ClockTime::minutes), Some(480));
    assert_eq!(
        ClockTime::parse("17:30").map(ClockTime::minutes),
        Some(1050)
    );
    assert_eq!(
        ClockTime::parse("24:00").map(ClockTime::minutes),
        Some(1440)
    );
    for bad in [
        "24:01", "25:00", "8", "8:5", "08:60", "-1:00", "08:00:00", "", "aa:bb", "+8:00",
    ] {
        assert_eq!(ClockTime::parse(bad), None, "{bad}");
    }
    let hours: OfficeHours =
        serde_json::from_str(r#"{"days":[1,2],"start":"8:00","end":"17:30"}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&hours).unwrap(),
        r#"{"days":[1,2],"start":"08:00","end":"17:30"}"#
    );
    let error =
        serde_json::from_str::<OfficeHours>(r#"{"days":[1],"start":"25:00","end":"26:00"}"#)
            .unwrap_err()
            .to_string();
    assert!(error.contains("`25:00` is not a time"), "{error}");
    assert!(
        serde_json::from_str::<OfficeHours>(r#"{"days":[1],"start":"08:00","end":"17:00","x":1}"#)
            .is_err()
    );
}

#[test]
fn office_hours_are_checked() {
    assert_eq!(check_hours(&[]), Err(HoursError::Empty));
    assert_eq!(
        check_hours(&[span(&[], "08:00", "17:00")]),
        Err(HoursError::NoDays(0))
    );
    assert_eq!(
        check_hours(&[span(&[1], "08:00", "17:00"), span(&[8], "08:00", "17:00")]),
        Err(HoursError::BadDay(1, 8))
    );
    assert_eq!(
        check_hours(&[span(&[0], "08:00", "17:00")]),
        Err(HoursError::BadDay(0, 0))
    );
    assert_eq!(
        check_hours(&[span(&[2, 2], "08:00", "17:00")]),
        Err(HoursError::RepeatedDay(0, 2))
    );
    assert_eq!(
        check_hours(&[span(&[1], "17:00", "08:00")]),
        Err(HoursError::EndsBeforeStart(0))
    );
    assert_eq!(
        check_hours(&[span(&[1], "08:00", "08:00")]),
        Err(HoursError::EndsBeforeStart(0))
    );
    assert!(check_hours(&[span(&[1, 2, 3, 4, 5], "08:00", "17:30")]).is_ok());
    assert!(check_hours(&[span(&[6], "00:00", "24:00")]).is_ok());
    let message = HoursError::BadDay(1, 8).to_string();
    assert!(
        message.contains("office_hours[1]") && message.contains("1 = Monday"),
        "{message}"
    );
}

#[test]
fn open_within_the_hours_of_the_day_only() {
    let hours = [
        span(&[1, 2, 3, 4, 5], "08:00", "17:30"),
        span(&[6], "09:00", "12:00"),
    ];
    let at = |day, h: u16, m: u16| open_at(day, h * 60 + m, Some(&hours));
    assert!(at(1, 8, 0));
    assert!(at(5, 17, 29));
    assert!(!at(5, 17, 30), "the end is exclusive");
    assert!(!at(3, 7, 59));
    assert!(at(6, 11, 0));
    assert!(!at(6, 13, 0));
    assert!(!at(7, 10, 0), "Sunday is closed");
    assert!(open_at(7, 3 * 60, None), "no hours: always open");
}

#[test]
fn hours_read_naturally_in_both_languages() {
    let weekdays = [span(&[1, 2, 3, 4, 5], "08:00", "17:30")];
    assert_eq!(
        format_hours(Language::Vi, &weekdays),
        "8:00–17:30, thứ Hai – thứ Sáu"
    );
    assert_eq!(
        format_hours(Language::En, &weekdays),
        "8:00–17:30, Monday – Friday"
    );
    let mixed = [
        span(&[5, 1, 3], "09:00", "12:00"),
        span(&[6, 7], "10:00", "24:00"),
    ];
    assert_eq!(
        format_hours(Language::Vi, &mixed),
        "9:00–12:00, thứ Hai, thứ Tư, thứ Sáu; 10:00–24:00, thứ Bảy, Chủ nhật"
    );
    let all = [span(&[1, 2, 3, 4, 5, 6, 7], "07:00", "22:00")];
    assert_eq!(format_hours(Language::Vi, &all), "7:00–22:00, hằng ngày");
    assert_eq!(format_hours(Language::En, &all), "7:00–22:00, every day");
}

/// The sentence of `key` in a sentence file, as written there.
fn line<'a>(file: &'a str, key: &str) -> &'a str {
    file.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no `{key}` line"))
}

#[test]
fn notices_are_in_the_conversation_language_with_the_hours() {
    let hours = [span(&[1, 2, 3, 4, 5], "08:00", "17:30")];
    for notice in [
        Notice::Waiting,
        Notice::StillWaiting,
        Notice::OutsideHours,
        Notice::Timeout,
    ] {
        for (language, file) in [(Language::Vi, SENTENCES_VI), (Language::En, SENTENCES_EN)] {
            let text = notice.text(language, Register::Friendly, Some(&hours));
            let written = line(file, notice.key());
            assert!(!text.is_empty());
            assert!(!text.contains("{hours}"), "{text}");
            assert_eq!(
                text,
                written.replace("{hours}", &format_hours(language, &hours))
            );
        }
        assert_ne!(
            notice.text(Language::Vi, Register::Friendly, None),
            notice.text(Language::En, Register::Friendly, None)
        );
    }
    let outside = Notice::OutsideHours.text(Language::Vi, Register::Friendly, Some(&hours));
    assert!(
        outside.contains("8:00–17:30, thứ Hai – thứ Sáu"),
        "{outside}"
    );
    let english = Notice::OutsideHours.text(Language::En, Register::Friendly, Some(&hours));
    assert!(english.contains("8:00–17:30, Monday – Friday"), "{english}");
}

#[test]
fn handoff_states_and_kinds_round_trip() {
    for state in [
        HandoffState::None,
        HandoffState::Waiting,
        HandoffState::Held,
    ] {
        assert_eq!(HandoffState::parse(state.as_str()), Some(state));
        assert_eq!(
            serde_json::to_value(state).unwrap(),
            serde_json::Value::from(state.as_str())
        );
    }
    assert_eq!(HandoffState::parse("maybe"), None);
    for (kind, text) in [
        (MessageKind::Human, "human"),
        (MessageKind::Handoff, "handoff"),
    ] {
        assert_eq!(kind.as_str(), text);
        assert_eq!(MessageKind::parse(text), Some(kind));
        assert_eq!(
            serde_json::to_value(kind).unwrap(),
            serde_json::Value::from(text)
        );
    }
}

fn message(kind: MessageKind, content: &str) -> StoredMessage {
    StoredMessage {
        id: "m".into(),
        seq: 1,
        role: concierge_core::conversation::Role::Assistant,
        kind,
        content: content.into(),
        metadata: Default::default(),
        created_at: 0,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    }
}

#[test]
fn a_persons_reply_is_remembered_and_a_notice_is_not() {
    assert_eq!(
        embedding_policy(&message(MessageKind::Human, "Dạ, em là Lan")),
        EmbeddingStatus::Pending
    );
    assert_eq!(
        embedding_policy(&message(MessageKind::Handoff, "Mình đã báo nhân viên.")),
        EmbeddingStatus::Skipped
    );
}

mod prompt_history {
    //! What the model is shown after a handoff: a person's replies, not the notices.
    use std::cell::RefCell;

    use concierge_core::boundary::ConversationStore;
    use concierge_core::conversation::{
        Language, MessageKind, Metadata, Role, Scope, StoredMessage,
    };
    use concierge_core::engine::{
        self, Answer, Assistant, NewConversation, Platform, Turn, TurnConfig,
    };
    use concierge_core::error::Error;
    use concierge_core::graph::block_on;
    use concierge_core::memory::MemoryBackend;
    use concierge_core::turn::TurnInput;

    /// A template that remembers the history it was given and answers "ok".
    #[derive(Default)]
    struct Recorder {
        config: TurnConfig,
        seen: RefCell<Vec<(MessageKind, String)>>,
    }

    impl Assistant for Recorder {
        fn config(&self) -> &TurnConfig {
            &self.config
        }
        fn greeting(&self, _language: Language) -> &str {
            "Xin chào"
        }
        async fn answer<P: Platform>(
            &self,
            platform: &P,
            turn: &mut Turn<'_>,
        ) -> Result<Answer, Error> {
            *self.seen.borrow_mut() = turn
                .history
                .iter()
                .map(|m| (m.kind, m.content.clone()))
                .collect();
            let now = platform.clock().now_ms();
            let reply = StoredMessage {
                id: turn.reply_id.clone(),
                seq: 0,
                role: Role::Assistant,
                kind: MessageKind::Answer,
                content: "ok".into(),
                metadata: Metadata::new(),
                created_at: now,
                tool_steps: Vec::new(),
                payloads: Vec::new(),
            };
            Ok(Answer {
                reply,
                intent: None,
                confidence: None,
                usage: None,
                route: vec!["answer"],
            })
        }
    }

    fn stored(id: &str, role: Role, kind: MessageKind, content: &str) -> StoredMessage {
        StoredMessage {
            id: id.into(),
            seq: 0,
            role,
            kind,
            content: content.into(),
            metadata: Metadata::new(),
            created_at: 1,
            tool_steps: Vec::new(),
            payloads: Vec::new(),
        }
    }

    #[test]
    fn the_model_sees_a_persons_replies_but_not_handoff_notices() {
        let backend = MemoryBackend::demo("site-1");
        let assistant = Recorder::default();
        let new = NewConversation {
            site_id: "site-1".into(),
            ..NewConversation::default()
        };
        let id = block_on(engine::create_conversation(&backend, &assistant, new))
            .unwrap()
            .conversation
            .id;
        let scope = Scope::new("site-1", &id);
        for message in [
            stored("u1", Role::User, MessageKind::Text, "gặp nhân viên"),
            stored(
                "h1",
                Role::Assistant,
                MessageKind::Handoff,
                "Mình đã báo nhân viên.",
            ),
            stored(
                "p1",
                Role::Assistant,
                MessageKind::Human,
                "Dạ em là Lan, em giúp gì ạ?",
            ),
        ] {
            block_on(backend.store.append_message(scope, &message)).unwrap();
        }
        let input = TurnInput {
            site_id: "site-1".into(),
            conversation_id: id.clone(),
            text: "cảm ơn, còn hàng không?".into(),
            idempotency_key: None,
        };
        let mut events = Vec::new();
        backend
            .timer
            .run(engine::run_turn(&backend, &assistant, &input, &mut events))
            .unwrap();
        let seen = assistant.seen.borrow();
        let kinds: Vec<MessageKind> = seen.iter().map(|(k, _)| *k).collect();
        assert!(kinds.contains(&MessageKind::Human), "{seen:?}");
        assert!(!kinds.contains(&MessageKind::Handoff), "{seen:?}");
        assert_eq!(
            seen.last().map(|(_, c)| c.as_str()),
            Some("cảm ơn, còn hàng không?")
        );
    }
}

#[test]
fn notices_speak_in_the_personas_register() {
    let hours = [span(&[1, 2, 3, 4, 5], "08:00", "17:30")];
    let shop = Register::of("Greeting: Xin chào Quý khách! Em là trợ lý ảo của cửa hàng.");
    assert_eq!(shop, Register::Polite);
    assert_eq!(
        Register::of("Chào bạn! Mình là trợ lý tìm phòng."),
        Register::Friendly
    );
    for notice in [
        Notice::Waiting,
        Notice::StillWaiting,
        Notice::OutsideHours,
        Notice::Timeout,
    ] {
        let polite = notice.text(Language::Vi, Register::Polite, Some(&hours));
        let written = line(SENTENCES_VI, &format!("{}.em", notice.key()));
        assert_eq!(
            polite,
            written.replace("{hours}", &format_hours(Language::Vi, &hours))
        );
        assert!(polite.contains("quý khách"), "{polite}");
        let lower = polite.to_lowercase();
        assert!(
            !lower.contains("mình") && !lower.contains(" bạn"),
            "{polite}"
        );
        let friendly = notice.text(Language::Vi, Register::Friendly, Some(&hours));
        assert!(
            friendly.contains("bạn") && !friendly.contains("quý khách"),
            "{friendly}"
        );
        // English has one register.
        assert_eq!(
            notice.text(Language::En, Register::Polite, None),
            notice.text(Language::En, Register::Friendly, None)
        );
    }
    // The lines in the log have one wording.
    assert_eq!(
        Notice::Requested.text(Language::Vi, Register::Polite, None),
        Notice::Requested.text(Language::Vi, Register::Friendly, None)
    );
}
