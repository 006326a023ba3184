//! Regenerating the last answer (issue 26, item 9) over the in-memory backend: the new
//! answer replaces the old one in the store and in every later prompt, the visitor's
//! question is kept once, and a regenerate that is not of the last, settled turn changes
//! nothing.
#![allow(clippy::unwrap_used)]

mod common;

use common::{SITE, create, say, shop, stored};
use concierge_core::conversation::{ANSWER_FAILED, Role, Scope};
use concierge_core::engine::{self, Admission, RegenerateInput, TurnOutcome};
use concierge_core::error::{ChatModelError, ChatModelErrorKind, Error};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryBackend, Script};
use concierge_core::turn::{TurnEvent, TurnInput};

const QUESTION: &str = "Giá RTX 4060 bao nhiêu?";

fn regenerate(
    backend: &MemoryBackend,
    config: &ShopConfig,
    site: &str,
    conversation_id: &str,
    expected: Option<&str>,
) -> (Vec<TurnEvent>, Result<TurnOutcome, Error>) {
    let input = RegenerateInput {
        site_id: site.into(),
        conversation_id: conversation_id.into(),
        expected: expected.map(String::from),
    };
    let mut events = Vec::new();
    let outcome = block_on(engine::regenerate(
        backend,
        &shop(backend, config),
        &input,
        Admission::open(),
        &mut events,
    ));
    (events, outcome)
}

fn contents(backend: &MemoryBackend, id: &str) -> Vec<String> {
    stored(backend, id).into_iter().map(|m| m.2).collect()
}

/// The texts of the last prompt after its system message.
fn last_prompt(backend: &MemoryBackend) -> Vec<String> {
    backend.model.last_request().unwrap().messages[1..]
        .iter()
        .map(|m| m.content.clone())
        .collect()
}

#[test]
fn regenerate_replaces_the_last_answer_and_keeps_one_copy_of_the_question() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    let greeting = contents(&backend, &id)[0].clone();
    backend.model.reply(&["Dạ, giá cũ ạ."]);
    let (_, first) = say(&backend, &config, &id, QUESTION);
    let first = first.unwrap();

    backend
        .model
        .reply(&["Dạ, RTX 4060 ", "giá 8.490.000 VND ạ."]);
    let (events, outcome) = regenerate(&backend, &config, SITE, &id, Some(&first.reply.id));
    let outcome = outcome.unwrap();
    // The same visitor's message, a new reply id, the new text, one terminal event.
    let TurnEvent::Started {
        user_message_id,
        message_id,
        ..
    } = &events[0]
    else {
        panic!("{events:?}");
    };
    assert_eq!(user_message_id, &first.user_message_id);
    assert_ne!(message_id, &first.reply.id);
    assert_eq!(message_id, &outcome.reply.id);
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Dạ, RTX 4060 giá 8.490.000 VND ạ.");
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    // The model was asked the question once, without the old answer.
    assert_eq!(last_prompt(&backend), [greeting.as_str(), QUESTION]);
    // Stored: the question once, the new answer, the old one gone.
    assert_eq!(
        contents(&backend, &id),
        [
            greeting.as_str(),
            QUESTION,
            "Dạ, RTX 4060 giá 8.490.000 VND ạ."
        ]
    );
    // The next turn's prompt holds the new answer, never the old one.
    backend.model.reply(&["Dạ, còn hàng ạ."]);
    let (_, next) = say(&backend, &config, &id, "Còn hàng không?");
    next.unwrap();
    assert_eq!(
        last_prompt(&backend),
        [
            greeting.as_str(),
            QUESTION,
            "Dạ, RTX 4060 giá 8.490.000 VND ạ.",
            "Còn hàng không?"
        ]
    );
}

#[test]
fn only_the_last_settled_turn_is_regenerated_and_a_refusal_changes_nothing() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    // No visitor's message yet: nothing to regenerate.
    let (events, outcome) = regenerate(&backend, &config, SITE, &id, None);
    assert_eq!(outcome.unwrap_err(), Error::NotLastTurn);
    assert!(
        matches!(
            &events[..],
            [TurnEvent::Failed {
                code: "not_last_turn",
                ..
            }]
        ),
        "{events:?}"
    );
    backend.model.reply(&["Dạ, giá cũ ạ."]);
    let (_, first) = say(&backend, &config, &id, QUESTION);
    let first = first.unwrap();
    backend.model.reply(&["Dạ, giá mới ạ."]);
    let (_, second) = regenerate(&backend, &config, SITE, &id, Some(&first.reply.id));
    second.unwrap();
    let before = contents(&backend, &id);
    // The replaced answer again (a double click): 409, nothing changes, no model call.
    let calls = backend.model.requests().len();
    let (events, outcome) = regenerate(&backend, &config, SITE, &id, Some(&first.reply.id));
    assert_eq!(outcome.unwrap_err(), Error::NotLastTurn);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(contents(&backend, &id), before);
    assert_eq!(backend.model.requests().len(), calls);
    // Another site, or no such conversation: not found.
    for (site, conversation) in [("site-2", id.as_str()), (SITE, "nope")] {
        let (_, outcome) = regenerate(&backend, &config, site, conversation, None);
        assert_eq!(outcome.unwrap_err(), Error::ConversationNotFound);
    }
    // A turn still being answered (stored, no reply, no failure mark): 409, untouched.
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.clone(),
        text: "Còn hàng không?".into(),
        idempotency_key: Some("k-1".into()),
    };
    block_on(engine::receive(&backend, &shop(&backend, &config), &input)).unwrap();
    let pending = contents(&backend, &id);
    let (_, outcome) = regenerate(&backend, &config, SITE, &id, None);
    assert_eq!(outcome.unwrap_err(), Error::TurnInProgress);
    assert_eq!(contents(&backend, &id), pending);
    assert_eq!(backend.model.requests().len(), calls);
}

#[test]
fn a_failed_last_turn_is_answered_again_without_storing_the_question_twice() {
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    backend.model.push(Script::BreakAfter(
        vec!["Dạ, ".into()],
        ChatModelError::new(ChatModelErrorKind::Unreachable, "reset"),
    ));
    let (_, failed) = say(&backend, &config, &id, QUESTION);
    failed.unwrap_err();
    let question = backend
        .store
        .messages(Scope::new(SITE, &id))
        .into_iter()
        .find(|m| m.role == Role::User)
        .unwrap();
    assert!(question.metadata.contains_key(ANSWER_FAILED));
    backend.model.reply(&["Dạ, 8.490.000 VND ạ."]);
    let (_, outcome) = regenerate(&backend, &config, SITE, &id, Some(&question.id));
    assert_eq!(outcome.unwrap().user_message_id, question.id);
    let messages = backend.store.messages(Scope::new(SITE, &id));
    let texts: Vec<&str> = messages[1..].iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, [QUESTION, "Dạ, 8.490.000 VND ạ."]);
    assert!(!messages[1].metadata.contains_key(ANSWER_FAILED));
    assert!(!messages[2].is_incomplete());
}

#[test]
fn a_notice_or_a_persons_reply_as_the_last_message_is_not_regenerated() {
    use concierge_core::boundary::ConversationStore;
    use concierge_core::conversation::{MessageKind, Metadata, StoredMessage};
    let config = ShopConfig::default();
    let backend = MemoryBackend::demo(SITE);
    let id = create(&backend, &config, None).conversation.id;
    backend.model.reply(&["Dạ, còn hàng ạ."]);
    let (_, first) = say(&backend, &config, &id, QUESTION);
    let first = first.unwrap();
    for (n, kind) in [MessageKind::Handoff, MessageKind::Human]
        .into_iter()
        .enumerate()
    {
        // A timeout notice or a person's reply, stored after the answer.
        let message = StoredMessage {
            id: format!("fixed-{n}"),
            seq: 0,
            role: Role::Assistant,
            kind,
            content: "Xin lỗi, hiện chưa có nhân viên nào rảnh.".into(),
            metadata: Metadata::new(),
            created_at: 1,
            tool_steps: Vec::new(),
            payloads: Vec::new(),
        };
        block_on(
            backend
                .store
                .append_message(Scope::new(SITE, &id), &message),
        )
        .unwrap();
        let before = contents(&backend, &id);
        let calls = backend.model.requests().len();
        for expected in [None, Some(first.reply.id.as_str())] {
            let (events, outcome) = regenerate(&backend, &config, SITE, &id, expected);
            assert_eq!(outcome.unwrap_err(), Error::FixedAnswer, "{kind:?}");
            assert!(
                matches!(
                    &events[..],
                    [TurnEvent::Failed {
                        code: "fixed_answer",
                        ..
                    }]
                ),
                "{events:?}"
            );
        }
        assert_eq!(contents(&backend, &id), before, "nothing changes");
        assert_eq!(backend.model.requests().len(), calls, "no model call");
    }
    assert_eq!(
        Error::FixedAnswer.class(),
        concierge_core::error::ErrorClass::Conflict
    );
}
