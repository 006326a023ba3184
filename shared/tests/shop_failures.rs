//! Failure semantics the Worker relies on: the visitor's message stays stored, no half
//! answer is stored as complete, and every turn ends with exactly one terminal event.
#![allow(clippy::unwrap_used)]

mod common;

use common::{SITE, create, say, shop, stored};
use concierge_core::chat::UpstreamError;
use concierge_core::conversation::{MessageKind, Role};
use concierge_core::error::{ChatModelError, ChatModelErrorKind};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::memory::{MemoryBackend, Script};
use concierge_core::turn::TurnEvent;
use serde_json::json;

const GREETING: &str = "Xin chào quý khách! Em là trợ lý ảo của cửa hàng. Em có thể tư vấn lắp ráp máy, báo giá và thông tin sản phẩm, hoặc kiểm tra bảo hành cho quý khách ạ. Quý khách cần em hỗ trợ gì ạ?";
const MODEL_FAILED: &str = "The assistant could not answer right now. Please try again.";

fn failed(code: &'static str, message: &'static str) -> TurnEvent {
    TurnEvent::Failed { code, message }
}

fn started(user_message_id: &str, message_id: &str) -> TurnEvent {
    TurnEvent::Started {
        conversation_id: "id1".into(),
        user_message_id: user_message_id.into(),
        message_id: message_id.into(),
    }
}

fn assert_one_terminal(events: &[TurnEvent]) {
    assert_eq!(
        events.iter().filter(|e| e.is_terminal()).count(),
        1,
        "{events:?}"
    );
    assert!(events.last().unwrap().is_terminal(), "{events:?}");
}

#[test]
fn model_breaking_mid_stream_keeps_the_question_and_marks_the_partial_answer() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    let broken = ChatModelError::new(ChatModelErrorKind::Unreachable, "connection reset");
    backend.model.push(Script::BreakAfter(
        vec!["Dạ, RTX 4060 ".into()],
        broken.clone(),
    ));
    let (events, outcome) = say(&backend, &config, &id, "Giá RTX 4060 bao nhiêu?");
    assert_eq!(
        outcome.unwrap_err(),
        concierge_core::error::Error::ChatModel(broken)
    );
    assert_eq!(
        events,
        [
            started("id3", "id4"),
            TurnEvent::Chunk {
                text: "Dạ, RTX 4060 ".into()
            },
            failed("model_failed", MODEL_FAILED),
        ]
    );
    assert_one_terminal(&events);
    assert_eq!(
        stored(&backend, &id),
        [
            (
                Role::Assistant,
                MessageKind::Greeting,
                GREETING.to_string(),
                json!({})
            ),
            (
                Role::User,
                MessageKind::Text,
                "Giá RTX 4060 bao nhiêu?".to_string(),
                // The failed turn is marked on the visitor's message.
                json!({"answer_failed": "model_failed"})
            ),
            (
                Role::Assistant,
                MessageKind::Answer,
                "Dạ, RTX 4060 ".to_string(),
                json!({
                    "intent": "shopping", "confidence": 0.83, "passages": [], "incomplete": true, "error": "model_failed",
                })
            ),
        ]
    );
    // Nothing is queued for embedding: the question is inside the history window (memory
    // only returns what has left it), the half answer never is, nor the greeting.
    assert!(
        backend.queue.jobs().is_empty(),
        "{:?}",
        backend.queue.jobs()
    );

    // The next turn works, and the half answer is left out of the prompt.
    backend.model.reply(&["Dạ, 8.490.000 VND ạ."]);
    let (events, outcome) = say(&backend, &config, &id, "Giá RTX 4060 bao nhiêu?");
    assert_eq!(outcome.unwrap().reply.seq, 5);
    assert_one_terminal(&events);
    let history: Vec<String> = backend.model.last_request().unwrap().messages[1..]
        .iter()
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(
        history,
        [
            GREETING,
            "Giá RTX 4060 bao nhiêu?",
            "Giá RTX 4060 bao nhiêu?"
        ]
    );
}

#[test]
fn model_failing_without_text_stores_only_the_question() {
    let config = ShopConfig::default();
    let cases = [
        (
            "in-band error",
            Some(Script::ErrorAfter(
                vec![],
                UpstreamError {
                    code: Some("overloaded".into()),
                    message: "busy".into(),
                },
            )),
            "model_failed",
        ),
        ("unreachable", None, "model_failed"),
        ("empty answer", Some(Script::Reply(vec![])), "empty_answer"),
    ];
    for (name, script, code) in cases {
        let backend = MemoryBackend::demo(SITE);
        let id = create(&backend, &config, None).conversation.id;
        if let Some(script) = script {
            backend.model.push(script);
        }
        let (events, outcome) = say(&backend, &config, &id, "Giá RTX 4060 bao nhiêu?");
        assert_eq!(outcome.unwrap_err().code(), code, "{name}");
        assert_eq!(
            events,
            [started("id3", "id4"), failed(code, MODEL_FAILED)],
            "{name}"
        );
        let contents: Vec<String> = stored(&backend, &id).into_iter().map(|m| m.2).collect();
        assert_eq!(contents, [GREETING, "Giá RTX 4060 bao nhiêu?"], "{name}");
    }
}

#[test]
fn refused_turns_emit_only_failed_and_store_nothing() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    let something_wrong = "Something went wrong. Please try again.";
    let too_long = "a".repeat(4001);
    let cases = [
        ("   ", id.as_str(), "empty_message", "The message is empty."),
        (
            too_long.as_str(),
            id.as_str(),
            "message_too_long",
            "The message is too long.",
        ),
        (
            "xin chào",
            "no-such-conversation",
            "conversation_not_found",
            "No such conversation.",
        ),
    ];
    for (text, conversation, code, message) in cases {
        let (events, outcome) = say(&backend, &config, conversation, text);
        assert_eq!(outcome.unwrap_err().code(), code);
        assert_eq!(events, [failed(code, message)]);
    }
    backend.store.set_unavailable(true);
    let (events, _) = say(&backend, &config, &id, "xin chào");
    assert_eq!(events, [failed("store_unavailable", something_wrong)]);
    backend.store.set_unavailable(false);
    assert_eq!(stored(&backend, &id).len(), 1, "only the greeting");
}

#[test]
fn conversations_are_scoped_to_their_site() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    let input = concierge_core::turn::TurnInput {
        site_id: "site-2".into(),
        conversation_id: id.clone(),
        text: "xin chào".into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = concierge_core::graph::block_on(concierge_core::engine::run_turn(
        &backend,
        &shop(&backend, &config),
        &input,
        &mut events,
    ));
    assert_eq!(outcome.unwrap_err().code(), "conversation_not_found");
    assert_eq!(stored(&backend, &id).len(), 1);
}

#[test]
fn a_failing_warranty_lookup_fails_the_turn_once() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    backend.warranty.set_unavailable(true);
    let services = &backend;
    let input = concierge_core::turn::TurnInput {
        site_id: SITE.into(),
        conversation_id: id.clone(),
        text: "serial là 0979825281".into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = concierge_core::graph::block_on(concierge_core::engine::run_turn(
        services,
        &shop(&backend, &config),
        &input,
        &mut events,
    ));
    assert_eq!(outcome.unwrap_err().code(), "records_unavailable");
    assert_eq!(
        events,
        [
            started("id3", "id4"),
            failed(
                "records_unavailable",
                "Something went wrong. Please try again."
            )
        ]
    );
}

#[test]
fn an_answer_cut_by_the_token_limit_is_stored_and_marked() {
    use concierge_core::chat::{ChatEvent, FinishReason, Usage};
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    backend.model.push(Script::Events(vec![
        ChatEvent::text("Dạ, RTX 4060 giá"),
        ChatEvent::Finish {
            reason: FinishReason::Length,
            usage: Some(Usage {
                prompt_tokens: 812,
                completion_tokens: 5,
            }),
        },
    ]));
    let (events, outcome) = say(&backend, &config, &id, "Giá RTX 4060 bao nhiêu?");
    assert_one_terminal(&events);
    let usage = Some(Usage {
        prompt_tokens: 812,
        completion_tokens: 5,
    });
    assert!(matches!(events.last(), Some(TurnEvent::Completed { usage: u, .. }) if *u == usage));
    let reply = outcome.unwrap().reply;
    assert_eq!(reply.content, "Dạ, RTX 4060 giá");
    assert_eq!(
        serde_json::Value::Object(reply.metadata),
        json!({"intent": "shopping", "confidence": 0.83, "passages": [], "finish_reason": "length"})
    );
}

#[test]
fn a_language_update_failing_after_the_answer_does_not_fail_the_turn() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    backend.store.set_language_unavailable(true);
    backend.model.reply(&["The RTX 4060 is 8,490,000 VND."]);
    // An English first message switches the conversation from Vietnamese.
    let (events, outcome) = say(
        &backend,
        &config,
        &id,
        "I want to buy an RTX 4060 graphics card, what is the price?",
    );
    let outcome = outcome.expect("the turn completes");
    assert_one_terminal(&events);
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    assert_eq!(outcome.reply.content, "The RTX 4060 is 8,490,000 VND.");
    assert!(
        backend
            .logger
            .lines()
            .iter()
            .any(|l| l.contains("\"warning\":\"language_not_saved\"")),
        "{:?}",
        backend.logger.lines()
    );
}
