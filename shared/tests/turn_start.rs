//! A streamed turn without an idempotency key asks the model while its visitor's message
//! is still being stored: `Started` still comes first, the rows are the same, and a message
//! that cannot be stored fails the turn before it started, with nothing stored.
#![allow(clippy::unwrap_used)]

use core::cell::RefCell;

use concierge_core::boundary::{ChatModel, ChatSink, ModelCall};
use concierge_core::chat::Role;
use concierge_core::conversation::Scope;
use concierge_core::engine::{self, NewConversation};
use concierge_core::error::{ChatModelError, Error};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryBackend, MemoryStore, ScriptedChatModel};
use concierge_core::turn::{TurnEvent, TurnInput};

const SITE: &str = "site-1";
const QUESTION: &str = "Tư vấn cấu hình PC chơi game 20 triệu, card đồ họa nào hợp lý?";

/// The scripted model, noting how many messages the conversation had stored each time it
/// was asked.
struct Watching<'a> {
    model: ScriptedChatModel,
    store: &'a MemoryStore,
    conversation_id: String,
    stored_when_asked: RefCell<Vec<usize>>,
}

impl ChatModel for Watching<'_> {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let scope = Scope::new(SITE, &self.conversation_id);
        let stored = self.store.messages(scope).len();
        self.stored_when_asked.borrow_mut().push(stored);
        self.model.stream(call, sink).await
    }
}

fn conversation(backend: &MemoryBackend, shop: &ShopConfig) -> String {
    let new = NewConversation {
        site_id: SITE.into(),
        ..NewConversation::default()
    };
    let created = block_on(engine::create_conversation(
        backend,
        &shop_of(backend, shop),
        new,
    ))
    .unwrap();
    created.conversation.id
}

fn watching<'a>(backend: &'a MemoryBackend, conversation_id: &str) -> Watching<'a> {
    let model = ScriptedChatModel::new();
    model.reply(&["Dạ, ", "anh/chị ", "tham khảo ạ."]);
    Watching {
        model,
        store: &backend.store,
        conversation_id: conversation_id.into(),
        stored_when_asked: RefCell::new(Vec::new()),
    }
}

fn input(conversation_id: &str, idempotency_key: Option<&str>) -> TurnInput {
    TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: QUESTION.into(),
        idempotency_key: idempotency_key.map(Into::into),
    }
}

#[test]
fn the_model_is_asked_while_the_message_is_stored_and_started_still_comes_first() {
    let (backend, mut shop) = (MemoryBackend::default(), ShopConfig::default());
    // A window of 2: this turn's own messages leave it after the next turn, so this turn
    // queues their embeddings (a message is embedded one turn before memory may return it).
    shop.turn.history_window = 2;
    let id = conversation(&backend, &shop);
    // The write takes a few round trips, as D1's does.
    backend.store.set_insert_polls(3);
    let model = watching(&backend, &id);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let outcome = block_on(engine::run_turn(
        &platform,
        &shop_of(&backend, &shop),
        &input(&id, None),
        &mut events,
    ));
    let outcome = outcome.unwrap();

    // Asked when only the greeting was stored: the write had not finished.
    assert_eq!(*model.stored_when_asked.borrow(), [1]);
    let TurnEvent::Started {
        user_message_id,
        message_id,
        ..
    } = &events[0]
    else {
        panic!("the first event is `started`: {events:?}");
    };
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Dạ, anh/chị tham khảo ạ.");

    // The same rows as ever: the greeting, the visitor's message, then the reply.
    let stored = backend.store.messages(Scope::new(SITE, &id));
    let roles: Vec<Role> = stored.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::Assistant, Role::User, Role::Assistant]);
    assert_eq!(&stored[1].id, user_message_id);
    assert_eq!(stored[1].content, QUESTION);
    assert_eq!(&stored[2].id, message_id);
    assert_eq!(stored[2].content, "Dạ, anh/chị tham khảo ạ.");
    assert!(stored[0].seq < stored[1].seq && stored[1].seq < stored[2].seq);
    assert_eq!(outcome.reply.id, *message_id);
    // The visitor's message is queued for embedding first, then the reply, once each.
    let queued: Vec<String> = backend
        .queue
        .jobs()
        .into_iter()
        .map(|j| j.message_id)
        .collect();
    assert_eq!(queued, [user_message_id.clone(), message_id.clone()]);
}

#[test]
fn a_message_that_cannot_be_stored_fails_the_turn_before_it_started() {
    let (backend, shop) = (MemoryBackend::default(), ShopConfig::default());
    let id = conversation(&backend, &shop);
    backend.store.set_insert_polls(3);
    backend.store.set_insert_unavailable(true);
    let model = watching(&backend, &id);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let outcome = block_on(engine::run_turn(
        &platform,
        &shop_of(&backend, &shop),
        &input(&id, None),
        &mut events,
    ));

    assert!(matches!(outcome, Err(Error::Store(_))), "{outcome:?}");
    // One event, `failed`: no `started`, nothing the answer produced meanwhile.
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(&events[0], TurnEvent::Failed { code, .. } if *code == "store_unavailable"));
    // Nothing stored but the greeting, nothing queued.
    assert_eq!(backend.store.messages(Scope::new(SITE, &id)).len(), 1);
    assert!(backend.queue.jobs().is_empty());
}

#[test]
fn a_turn_with_an_idempotency_key_stores_its_message_before_the_model_is_asked() {
    let (backend, shop) = (MemoryBackend::default(), ShopConfig::default());
    let id = conversation(&backend, &shop);
    backend.store.set_insert_polls(3);
    let model = watching(&backend, &id);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let turn = input(&id, Some("post-1"));
    block_on(engine::run_turn(
        &platform,
        &shop_of(&backend, &shop),
        &turn,
        &mut events,
    ))
    .unwrap();

    // The key is looked up and the message stored in one unit, then the model is asked.
    assert_eq!(*model.stored_when_asked.borrow(), [2]);
    assert!(matches!(events[0], TurnEvent::Started { .. }));
}

#[test]
fn a_turn_its_admission_refuses_stores_nothing_and_asks_no_model() {
    for key in [None, Some("post-1")] {
        let (backend, shop) = (MemoryBackend::default(), ShopConfig::default());
        let id = conversation(&backend, &shop);
        let model = watching(&backend, &id);
        let platform = backend.with_model(&model);
        let mut events = Vec::new();
        let refused = engine::Admission {
            verdict: async { false },
            likely: false,
        };
        let turn = input(&id, key);
        let outcome = block_on(engine::run_admitted_turn(
            &platform,
            &shop_of(&backend, &shop),
            &turn,
            refused,
            &mut events,
        ));

        assert_eq!(outcome.unwrap_err(), Error::RateLimited, "key {key:?}");
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(matches!(&events[0], TurnEvent::Failed { code, .. } if *code == "rate_limited"));
        assert_eq!(backend.store.messages(Scope::new(SITE, &id)).len(), 1);
        assert!(
            model.stored_when_asked.borrow().is_empty(),
            "the model was asked"
        );
        assert!(backend.queue.jobs().is_empty());
    }
}

#[test]
fn an_admitted_turn_runs_as_any_other() {
    let (backend, shop) = (MemoryBackend::default(), ShopConfig::default());
    let id = conversation(&backend, &shop);
    let model = watching(&backend, &id);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let turn = input(&id, None);
    let admitted = engine::Admission {
        verdict: async { true },
        likely: false,
    };
    block_on(engine::run_admitted_turn(
        &platform,
        &shop_of(&backend, &shop),
        &turn,
        admitted,
        &mut events,
    ))
    .unwrap();
    assert!(matches!(events[0], TurnEvent::Started { .. }));
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    assert_eq!(backend.store.messages(Scope::new(SITE, &id)).len(), 3);
}

/// A model that takes virtual time: noting the stored messages at each step, it says it
/// has the request after `answering_ms` (if ever), then answers after `first_token_ms`.
struct Slow<'a> {
    backend: &'a MemoryBackend,
    conversation_id: String,
    answering_ms: Option<u64>,
    first_token_ms: u64,
    /// (virtual ms, messages stored) at each step.
    seen: RefCell<Vec<(u64, usize)>>,
}

impl Slow<'_> {
    fn note(&self) {
        let stored = self
            .backend
            .store
            .messages(Scope::new(SITE, &self.conversation_id))
            .len();
        let now = self.backend.timer.now_ms();
        self.seen.borrow_mut().push((now, stored));
    }
}

impl ChatModel for Slow<'_> {
    async fn stream(
        &self,
        _call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        use concierge_core::boundary::Timer;
        use concierge_core::chat::{ChatEvent, FinishReason};
        let timer = &self.backend.timer;
        self.note();
        let waited = if let Some(ms) = self.answering_ms {
            timer.sleep(ms).await;
            self.note();
            sink.answering();
            ms
        } else {
            timer.sleep(24).await;
            self.note();
            timer.sleep(2).await;
            self.note();
            26
        };
        // Notes what the store holds just before the first token.
        timer.sleep(self.first_token_ms - waited - 1).await;
        self.note();
        timer.sleep(1).await;
        sink.event(ChatEvent::text("Dạ có ạ."));
        sink.event(ChatEvent::finish(FinishReason::Stop));
        Ok(())
    }
}

fn slow_turn(answering_ms: Option<u64>) -> (Vec<(u64, usize)>, Vec<TurnEvent>) {
    let (backend, shop) = (MemoryBackend::default(), ShopConfig::default());
    let id = conversation(&backend, &shop);
    let model = Slow {
        backend: &backend,
        conversation_id: id.clone(),
        answering_ms,
        first_token_ms: 200,
        seen: RefCell::new(Vec::new()),
    };
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let turn = input(&id, None);
    backend
        .timer
        .run(engine::run_turn(
            &platform,
            &shop_of(&backend, &shop),
            &turn,
            &mut events,
        ))
        .unwrap();
    assert_eq!(backend.store.messages(Scope::new(SITE, &id)).len(), 3);
    let seen = model.seen.borrow().clone();
    (seen, events)
}

#[test]
fn the_message_is_stored_once_the_model_has_the_request() {
    let (seen, events) = slow_turn(Some(10));
    // Asked with only the greeting stored; still only that when the model's response
    // began 10 ms later (the write had kept out of its way); stored before the first token.
    assert_eq!(seen, [(0, 1), (10, 1), (199, 2)]);
    assert!(matches!(events[0], TurnEvent::Started { .. }), "{events:?}");
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
}

#[test]
fn a_model_that_never_says_it_has_the_request_waits_for_the_write_no_longer_than_25_ms() {
    let (seen, events) = slow_turn(None);
    assert_eq!(seen, [(0, 1), (24, 1), (26, 2), (199, 2)]);
    assert!(matches!(events[0], TurnEvent::Started { .. }), "{events:?}");
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn shop_of<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::shop::ShopConfig,
) -> concierge_core::flows::shop::ShopAssistant<&'b concierge_core::memory::MemoryWarrantyRecords> {
    concierge_core::flows::shop::ShopAssistant::new(config.clone(), &backend.warranty)
}
