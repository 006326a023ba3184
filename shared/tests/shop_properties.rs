//! Properties of the `shop` flow over arbitrary input: no panics, exactly one terminal
//! event, rules that always hold.
#![allow(clippy::unwrap_used)]

mod common;

use common::{SITE, create, say};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::flows::shop::warranty::{NOT_SERIALS, extract_serial, is_valid_serial};
use concierge_core::intent::Classifier;
use concierge_core::memory::{MemoryBackend, Script};
use concierge_core::turn::TurnEvent;
use proptest::prelude::*;

fn message() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,80}",
        "[a-zA-Z0-9 :.,-]{0,40}",
        // Vietnamese words, with and without diacritics, and combining marks.
        proptest::collection::vec(
            prop_oneof![
                Just("bảo hành"),
                Just("bao hanh"),
                Just("giá"),
                Just("mua"),
                Just("serial"),
                Just("SN:"),
                Just("0979825281"),
                Just("ABC123-XYZ"),
                Just("lắp ráp"),
                Just("GPU"),
                Just("\u{301}"),
                Just("check"),
                Just("là"),
                Just("?"),
                Just("in English"),
            ],
            0..8
        )
        .prop_map(|words| words.join(" ")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_turn_ends_with_exactly_one_terminal_event(
        texts in proptest::collection::vec(message(), 1..4),
        breaks in any::<bool>(),
    ) {
        let config = ShopConfig::default();
        let backend = MemoryBackend::demo(SITE);
        let id = create(&backend, &config, None).conversation.id;
        for text in &texts {
            let stored_before = backend.store.messages(concierge_core::conversation::Scope::new(SITE, &id)).len();
            if breaks {
                let error = concierge_core::error::ChatModelError::new(
                    concierge_core::error::ChatModelErrorKind::Unreachable, "reset");
                backend.model.push(Script::BreakAfter(vec!["Dạ".into()], error));
            } else {
                backend.model.reply(&["Dạ, ", "em hiểu ạ."]);
            }
            let (events, outcome) = say(&backend, &config, &id, text);
            prop_assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
            prop_assert!(events.last().unwrap().is_terminal());
            let stored_after = backend.store.messages(concierge_core::conversation::Scope::new(SITE, &id)).len();
            match outcome {
                Ok(outcome) => {
                    let started = matches!(events[0], TurnEvent::Started { .. });
                    prop_assert!(started, "first event {:?}", events[0]);
                    prop_assert!(outcome.confidence.is_some_and(|c| (0.0..=1.0).contains(&c)));
                    prop_assert_eq!(stored_after, stored_before + 2);
                    let streamed: String = events.iter().filter_map(|e| match e {
                        TurnEvent::Chunk { text } => Some(text.as_str()),
                        _ => None,
                    }).collect();
                    prop_assert_eq!(streamed, outcome.reply.content);
                }
                Err(error) if text.trim().is_empty() => {
                    prop_assert_eq!(error.code(), "empty_message");
                    prop_assert_eq!(stored_after, stored_before);
                }
                // The visitor's message is kept; a partial answer is stored marked incomplete.
                Err(_) => prop_assert!(stored_after == stored_before + 1 || stored_after == stored_before + 2),
            }
            // Drain unused scripts so the next turn starts clean.
            while backend.model.scripts_left() > 0 {
                let _ = concierge_core::graph::block_on(concierge_core::boundary::ChatModel::stream(
                    &backend.model, &concierge_core::boundary::ModelCall::new(&Default::default()), &mut |_| {}));
            }
        }
    }

    #[test]
    fn extracted_serials_obey_the_rule(text in message(), awaiting in any::<bool>()) {
        if let Some(serial) = extract_serial(&text, awaiting) {
            prop_assert!(is_valid_serial(&serial), "{}", serial);
            prop_assert!(!NOT_SERIALS.iter().any(|w| w.eq_ignore_ascii_case(&serial)));
            prop_assert!(text.contains(&serial));
        }
    }

    #[test]
    fn confidence_is_between_0_and_1(current in message(), previous in proptest::collection::vec(message(), 0..4)) {
        let previous: Vec<&str> = previous.iter().map(String::as_str).collect();
        let c = Classifier::default().classify(&current, &previous);
        prop_assert!((0.0..=1.0).contains(&c.confidence));
    }
}
