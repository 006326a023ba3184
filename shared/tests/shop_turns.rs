//! Turns over time: concurrent turns in one conversation, background turns retried by the
//! caller, and idempotent repeats of a message (never stored twice).
#![allow(clippy::unwrap_used)]

mod common;

use common::{SITE, create, shop, stored};
use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::{MessageKind, Role, Scope};
use concierge_core::engine::Received;
use concierge_core::error::{ChatModelError, ChatModelErrorKind, Error};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryBackend, Script};
use concierge_core::turn::{TurnEvent, TurnInput, TurnJob};
use serde_json::json;

const QUESTION: &str = "Giá RTX 4060 bao nhiêu?";
const ANSWER: &str = "Dạ, 8.490.000 VND ạ.";

fn input(conversation_id: &str, text: &str, key: Option<&str>) -> TurnInput {
    TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: text.into(),
        idempotency_key: key.map(Into::into),
    }
}

fn turn(backend: &MemoryBackend, input: &TurnInput) -> (Vec<TurnEvent>, Result<String, Error>) {
    let mut events = Vec::new();
    let outcome = block_on(concierge_core::engine::run_turn(
        &backend,
        &shop(backend, &ShopConfig::default()),
        input,
        &mut events,
    ));
    (events, outcome.map(|o| o.reply.id))
}

fn job(received: &Received, conversation_id: &str) -> TurnJob {
    TurnJob {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        user_message_id: received.user_message_id().into(),
        message_id: received.reply_id().into(),
        draft: false,
    }
}

/// A new conversation with [`QUESTION`] received (stored, awaiting its answer).
fn asked(backend: &MemoryBackend, config: &ShopConfig) -> (String, Received) {
    let id = create(backend, config, None).conversation.id;
    let received = block_on(concierge_core::engine::receive(
        backend,
        &shop(backend, config),
        &input(&id, QUESTION, None),
    ))
    .unwrap();
    (id, received)
}

fn broken() -> Script {
    Script::BreakAfter(
        vec![],
        ChatModelError::new(ChatModelErrorKind::Unreachable, "connection reset"),
    )
}

fn announced(events: &[TurnEvent]) -> (String, String) {
    match events.first() {
        Some(TurnEvent::Started {
            user_message_id,
            message_id,
            ..
        }) => (user_message_id.clone(), message_id.clone()),
        other => panic!("Started first: {other:?}"),
    }
}

#[test]
fn a_reply_takes_its_position_when_stored_so_overlapping_turns_both_store() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let id = create(&backend, &config, None).conversation.id;
    // Turn A's question is stored, then turn B runs whole before A answers.
    let a = block_on(concierge_core::engine::receive(
        &backend,
        &shop(&backend, &config),
        &input(&id, "Tư vấn cấu hình PC chơi game", None),
    ))
    .unwrap();
    backend.model.reply(&[ANSWER]);
    let (events, b) = turn(&backend, &input(&id, QUESTION, None));
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    backend.model.reply(&["Dạ, cấu hình i5 ạ."]);
    let a_reply = block_on(concierge_core::engine::answer_job(
        &backend,
        &shop(&backend, &config),
        &job(&a, &id),
        true,
    ))
    .unwrap()
    .expect("answered");
    assert_eq!(
        a_reply.reply.id,
        a.reply_id(),
        "stored under the announced id"
    );
    assert_eq!(a_reply.reply.seq, 5);
    let ids: Vec<String> = backend
        .store
        .messages(Scope::new(SITE, &id))
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(
        ids,
        ["id2", a.user_message_id(), "id5", &b.unwrap(), a.reply_id()]
    );
}

#[test]
fn a_retry_with_the_key_reuses_the_stored_question_then_a_repeat_replays_the_answer() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let id = create(&backend, &config, None).conversation.id;
    let sent = input(&id, QUESTION, Some("k-1"));
    backend.model.push(broken());
    let (events, outcome) = turn(&backend, &sent);
    assert_eq!(outcome.unwrap_err().code(), "model_failed");
    let (question, failed_reply) = announced(&events);
    assert_eq!(
        stored(&backend, &id)[1].3,
        json!({"answer_failed": "model_failed"})
    );

    backend.model.reply(&[ANSWER]);
    let (events, outcome) = turn(&backend, &sent);
    let (same_question, reply) = announced(&events);
    assert_eq!(same_question, question, "the stored question is reused");
    assert_ne!(reply, failed_reply, "a new attempt, a new reply id");
    assert_eq!(outcome.unwrap(), reply);
    let after = stored(&backend, &id);
    let users: Vec<_> = after.iter().filter(|m| m.0 == Role::User).collect();
    assert_eq!(users.len(), 1, "{after:?}");
    assert_eq!(users[0].3, json!({}), "the failure mark is gone");
    assert_eq!(after.last().unwrap().2, ANSWER);

    // The same key again: the stored answer, the same ids, no model call.
    let calls = backend.model.requests().len();
    let (events, outcome) = turn(&backend, &sent);
    assert_eq!(announced(&events), (question, reply.clone()));
    assert_eq!(
        events[1],
        TurnEvent::Chunk {
            text: ANSWER.into()
        }
    );
    assert!(
        matches!(&events[2], TurnEvent::Completed { message_id, kind: MessageKind::Answer, intent: Some("shopping"), .. } if *message_id == reply)
    );
    assert_eq!(outcome.unwrap(), reply);
    assert_eq!(backend.model.requests().len(), calls);
    assert_eq!(stored(&backend, &id), after);

    // The same key with another text: refused, nothing stored.
    let (events, outcome) = turn(&backend, &input(&id, "xin chào", Some("k-1")));
    assert_eq!(outcome.unwrap_err(), Error::IdempotencyKeyReused);
    assert_eq!(events.len(), 1, "only failed: {events:?}");
    assert_eq!(stored(&backend, &id), after);
}

#[test]
fn invalid_keys_are_refused_before_anything_is_stored() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let id = create(&backend, &config, None).conversation.id;
    for key in ["", "has space", "tab\t", &"k".repeat(129), "không"] {
        let (events, outcome) = turn(&backend, &input(&id, QUESTION, Some(key)));
        assert_eq!(
            outcome.unwrap_err().code(),
            "invalid_idempotency_key",
            "{key:?}"
        );
        assert_eq!(events.len(), 1);
    }
    assert_eq!(stored(&backend, &id).len(), 1);
    let (_, outcome) = turn(&backend, &input(&id, QUESTION, Some(&"k".repeat(128))));
    assert!(
        outcome.is_err(),
        "a valid key reaches the model (none scripted)"
    );
    assert_eq!(stored(&backend, &id).len(), 2);
}

#[test]
fn a_superseded_attempt_cannot_store_its_reply() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let id = create(&backend, &config, None).conversation.id;
    let sent = input(&id, QUESTION, Some("k-2"));
    let first = block_on(concierge_core::engine::receive(
        &backend,
        &shop(&backend, &config),
        &sent,
    ))
    .unwrap();
    // The client retries while the first attempt is still under way.
    backend.model.reply(&[ANSWER]);
    let (events, outcome) = turn(&backend, &sent);
    let retry_reply = outcome.unwrap();
    assert_eq!(announced(&events).0, first.user_message_id());
    // The first attempt finishes later: nothing to do, its reply id was superseded.
    let late = block_on(concierge_core::engine::answer_job(
        &backend,
        &shop(&backend, &config),
        &job(&first, &id),
        true,
    ));
    assert_eq!(late.unwrap(), None);
    let scope = Scope::new(SITE, &id);
    let answers: Vec<_> = backend
        .store
        .messages(scope)
        .into_iter()
        .filter(|m| m.kind == MessageKind::Answer)
        .map(|m| m.id)
        .collect();
    assert_eq!(answers, [retry_reply]);
    // And a store write under the superseded id conflicts.
    let mut stale = backend.store.messages(scope).pop().unwrap();
    stale.id = first.reply_id().into();
    let refused = block_on(
        backend
            .store
            .append_reply(scope, first.user_message_id(), &stale),
    );
    assert_eq!(
        refused.unwrap_err().kind,
        concierge_core::error::ServiceErrorKind::Conflict
    );
}

#[test]
fn a_background_turn_is_marked_failed_only_on_its_last_attempt() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let (id, received) = asked(&backend, &config);
    let job = job(&received, &id);
    let services = &backend;

    backend.model.push(Script::BreakAfter(
        vec!["Dạ, ".into()],
        ChatModelError::new(ChatModelErrorKind::Unreachable, "reset"),
    ));
    let first = block_on(concierge_core::engine::answer_job(
        services,
        &shop(&backend, &config),
        &job,
        false,
    ));
    assert!(first.as_ref().unwrap_err().is_transient(), "{first:?}");
    let after_first = stored(&backend, &id);
    assert_eq!(
        after_first.len(),
        2,
        "no mark, no partial text: {after_first:?}"
    );
    assert_eq!(after_first[1].3, json!({}));

    let last = block_on(concierge_core::engine::answer_job(
        services,
        &shop(&backend, &config),
        &job,
        true,
    ));
    assert_eq!(last.unwrap_err().code(), "model_failed");
    assert_eq!(
        stored(&backend, &id)[1].3,
        json!({"answer_failed": "model_failed"})
    );

    // Redelivered after all (at least once): answered, then nothing more to do.
    backend.model.reply(&[ANSWER]);
    let answered = block_on(concierge_core::engine::answer_job(
        services,
        &shop(&backend, &config),
        &job,
        false,
    ))
    .unwrap();
    assert_eq!(answered.unwrap().reply.id, job.message_id);
    assert_eq!(
        stored(&backend, &id)[1].3,
        json!({}),
        "storing the reply removes the mark"
    );
    assert_eq!(
        block_on(concierge_core::engine::answer_job(
            services,
            &shop(&backend, &config),
            &job,
            false
        ))
        .unwrap(),
        None
    );
    assert_eq!(stored(&backend, &id).len(), 3);
}

#[test]
fn a_background_turn_streams_its_events_like_a_streamed_turn_and_nothing_when_answered() {
    let (backend, config) = (MemoryBackend::demo(SITE), ShopConfig::default());
    let (id, received) = asked(&backend, &config);
    backend.model.reply(&["Dạ, ", "8.490.000 ", "VND ạ."]);
    let answer = |events: &mut Vec<TurnEvent>| {
        block_on(concierge_core::engine::answer_job_streamed(
            &backend,
            &shop(&backend, &config),
            &job(&received, &id),
            false,
            events,
        ))
        .unwrap()
    };
    let mut events = Vec::new();
    let outcome = answer(&mut events).expect("answered");
    assert_eq!(
        announced(&events),
        (
            received.user_message_id().into(),
            received.reply_id().into()
        )
    );
    let chunks: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(chunks.len() >= 2, "as produced: {events:?}");
    assert_eq!(chunks.concat(), outcome.reply.content);
    assert_eq!(
        stored(&backend, &id).last().unwrap().2,
        outcome.reply.content
    );
    match events.last() {
        Some(TurnEvent::Completed { message_id, .. }) => {
            assert_eq!(message_id, received.reply_id())
        }
        other => panic!("one terminal event last: {other:?}"),
    }
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);

    // A repeat of the answered job: nothing to do, no event.
    let mut again = Vec::new();
    let repeat = answer(&mut again);
    assert!(repeat.is_none() && again.is_empty(), "{again:?}");
}
