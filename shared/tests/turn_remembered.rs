//! A streamed turn whose store already knows the conversation starts its answer from what
//! the store remembers, without reading first; the write checks that memory, and a
//! conversation that moved on meanwhile is answered again from what is stored — the
//! outdated answer never seen. A caller admitted last time is answered before this
//! time's verdict comes, and a refusal still stores nothing and shows nothing but the
//! failure.
#![allow(clippy::unwrap_used)]

use core::cell::{Cell, RefCell};
use core::future::poll_fn;
use core::task::Poll;

use concierge_core::boundary::{ChatModel, ChatRequest, ChatSink, ConversationStore, ModelCall};
use concierge_core::chat::Role;
use concierge_core::conversation::{MessageKind, Metadata, Scope, StoredMessage};
use concierge_core::engine::{self, Admission, NewConversation};
use concierge_core::error::{ChatModelError, Error};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryBackend, MemoryStore, ScriptedChatModel};
use concierge_core::turn::{TurnEvent, TurnInput};

const SITE: &str = "site-1";
const QUESTION: &str = "Laptop văn phòng tầm 15 triệu có mẫu nào?";

/// The scripted model, noting how many turn reads the store had served when asked.
struct Watching<'a> {
    model: ScriptedChatModel,
    store: &'a MemoryStore,
    reads_when_asked: RefCell<Vec<usize>>,
}

impl ChatModel for Watching<'_> {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        self.reads_when_asked
            .borrow_mut()
            .push(self.store.turn_reads());
        self.model.stream(call, sink).await
    }
}

fn backend() -> MemoryBackend {
    MemoryBackend {
        store: MemoryStore::remember_turns(),
        ..MemoryBackend::default()
    }
}

/// A new conversation whose context the store has read (and so remembers).
fn remembered_conversation(backend: &MemoryBackend, shop: &ShopConfig) -> String {
    let new = NewConversation {
        site_id: SITE.into(),
        ..NewConversation::default()
    };
    let id = block_on(engine::create_conversation(
        backend,
        &shop_of(backend, shop),
        new,
    ))
    .unwrap()
    .conversation
    .id;
    let scope = Scope::new(SITE, &id);
    let window = shop.turn.history_window;
    block_on(backend.store.read_turn(scope, window)).unwrap();
    assert!(backend.store.cached_turn(scope, window).is_some());
    id
}

fn watching<'a>(backend: &'a MemoryBackend, replies: &[&[&str]]) -> Watching<'a> {
    let model = ScriptedChatModel::new();
    for reply in replies {
        model.reply(reply);
    }
    Watching {
        model,
        store: &backend.store,
        reads_when_asked: RefCell::new(Vec::new()),
    }
}

fn input(conversation_id: &str) -> TurnInput {
    TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: QUESTION.into(),
        idempotency_key: None,
    }
}

/// A verdict that comes after `polls` round trips.
async fn verdict_after(polls: u32, admitted: bool) -> bool {
    let left = Cell::new(polls);
    poll_fn(|cx| {
        if left.get() == 0 {
            return Poll::Ready(admitted);
        }
        left.set(left.get() - 1);
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

fn text_of(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn message(id: &str, role: Role, content: &str) -> StoredMessage {
    StoredMessage {
        id: id.into(),
        seq: 0,
        role,
        kind: MessageKind::Text,
        content: content.into(),
        metadata: Metadata::default(),
        created_at: 1,
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    }
}

#[test]
fn a_remembered_conversation_is_answered_without_reading_it_first() {
    let (backend, shop) = (backend(), ShopConfig::default());
    let id = remembered_conversation(&backend, &shop);
    backend.store.set_insert_polls(3);
    let model = watching(&backend, &[&["Dạ, ", "có ạ."]]);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let admission = Admission {
        verdict: verdict_after(2, true),
        likely: true,
    };
    block_on(engine::run_admitted_turn(
        &platform,
        &shop_of(&backend, &shop),
        &input(&id),
        admission,
        &mut events,
    ))
    .unwrap();

    // Asked once, when only the test's own read had been made.
    assert_eq!(*model.reads_when_asked.borrow(), [1]);
    assert!(matches!(events[0], TurnEvent::Started { .. }), "{events:?}");
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    assert_eq!(text_of(&events), "Dạ, có ạ.");
    let stored = backend.store.messages(Scope::new(SITE, &id));
    let contents: Vec<&str> = stored.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents[1..], [QUESTION, "Dạ, có ạ."]);
}

#[test]
fn a_conversation_that_moved_on_is_answered_again_from_what_is_stored() {
    let (backend, mut shop) = (backend(), ShopConfig::default());
    // A window of 2: the turn's own messages leave it after the next turn, so the turn
    // queues their embeddings — once, from the answer that counts, none from the dropped one.
    shop.turn.history_window = 2;
    let id = remembered_conversation(&backend, &shop);
    let scope = Scope::new(SITE, &id);
    // Another turn (another isolate) stored a question and its answer meanwhile.
    block_on(
        backend
            .store
            .append_message(scope, &message("other-q", Role::User, "Còn hàng không?")),
    )
    .unwrap();
    block_on(backend.store.append_message(
        scope,
        &message("other-a", Role::Assistant, "Dạ còn hàng ạ."),
    ))
    .unwrap();
    let model = watching(&backend, &[&["Câu trả lời cũ."], &["Câu trả lời mới."]]);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    block_on(engine::run_turn(
        &platform,
        &shop_of(&backend, &shop),
        &input(&id),
        &mut events,
    ))
    .unwrap();

    // The outdated answer was dropped unseen; the visitor sees only the new one.
    let requests = model.model.requests();
    assert_eq!(requests.len(), 2);
    let saw = |r: &ChatRequest| r.messages.iter().any(|m| m.content == "Còn hàng không?");
    assert!(!saw(&requests[0]) && saw(&requests[1]));
    assert!(matches!(events[0], TurnEvent::Started { .. }), "{events:?}");
    let terminals = events
        .iter()
        .filter(|e| matches!(e, TurnEvent::Completed { .. } | TurnEvent::Failed { .. }))
        .count();
    assert_eq!(terminals, 1);
    assert_eq!(text_of(&events), "Câu trả lời mới.");
    let TurnEvent::Started {
        user_message_id,
        message_id,
        ..
    } = &events[0]
    else {
        unreachable!()
    };
    // Stored once each, after the other turn's messages, under the announced ids.
    let stored = backend.store.messages(scope);
    let contents: Vec<&str> = stored.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents[1..],
        [
            "Còn hàng không?",
            "Dạ còn hàng ạ.",
            QUESTION,
            "Câu trả lời mới."
        ]
    );
    assert_eq!(&stored[3].id, user_message_id);
    assert_eq!(&stored[4].id, message_id);
    let queued: Vec<String> = backend
        .queue
        .jobs()
        .into_iter()
        .map(|j| j.message_id)
        .collect();
    assert_eq!(queued, [user_message_id.clone(), message_id.clone()]);
}

#[test]
fn a_likely_caller_refused_after_all_sees_only_the_failure_and_nothing_is_stored() {
    let (backend, shop) = (backend(), ShopConfig::default());
    let id = remembered_conversation(&backend, &shop);
    let model = watching(&backend, &[&["Không ai thấy câu này."]]);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let admission = Admission {
        verdict: verdict_after(3, false),
        likely: true,
    };
    let outcome = block_on(engine::run_admitted_turn(
        &platform,
        &shop_of(&backend, &shop),
        &input(&id),
        admission,
        &mut events,
    ));

    assert_eq!(outcome.unwrap_err(), Error::RateLimited);
    // The answer had started (the caller was likely admitted) but nothing of it shows.
    assert_eq!(model.reads_when_asked.borrow().len(), 1);
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(&events[0], TurnEvent::Failed { code, .. } if *code == "rate_limited"));
    assert_eq!(backend.store.messages(Scope::new(SITE, &id)).len(), 1);
    assert!(backend.queue.jobs().is_empty());
}

#[test]
fn an_unlikely_caller_waits_for_its_verdict_before_the_model_is_asked() {
    let (backend, shop) = (backend(), ShopConfig::default());
    let id = remembered_conversation(&backend, &shop);
    let model = watching(&backend, &[&["Không ai thấy câu này."]]);
    let platform = backend.with_model(&model);
    let mut events = Vec::new();
    let admission = Admission {
        verdict: verdict_after(1, false),
        likely: false,
    };
    let outcome = block_on(engine::run_admitted_turn(
        &platform,
        &shop_of(&backend, &shop),
        &input(&id),
        admission,
        &mut events,
    ));
    assert_eq!(outcome.unwrap_err(), Error::RateLimited);
    assert!(
        model.reads_when_asked.borrow().is_empty(),
        "the model was asked"
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(backend.store.messages(Scope::new(SITE, &id)).len(), 1);
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn shop_of<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::shop::ShopConfig,
) -> concierge_core::flows::shop::ShopAssistant<&'b concierge_core::memory::MemoryWarrantyRecords> {
    concierge_core::flows::shop::ShopAssistant::new(config.clone(), &backend.warranty)
}
