//! The engine's typed "started": a sink learns that a turn started through
//! `TurnSink::started` — once, with the ids its `started` event then carries — and never
//! for a turn that fails before it started.
#![allow(clippy::unwrap_used)]

use concierge_core::chat::Role;
use concierge_core::engine::{self, NewConversation, StatelessInput};
use concierge_core::flows::shop::{ShopAssistant, ShopConfig};
use concierge_core::graph::block_on;
use concierge_core::memory::MemoryBackend;
use concierge_core::turn::{Started, TurnEvent, TurnInput, TurnSink};

const SITE: &str = "site-1";

/// Records what it is told, in order: `started` calls and events.
#[derive(Default)]
struct Recording {
    started: Vec<Started>,
    events: Vec<TurnEvent>,
    /// How many events came before `started`.
    before: Option<usize>,
}

impl TurnSink for Recording {
    fn emit(&mut self, event: TurnEvent) {
        self.events.push(event);
    }
    fn started(&mut self, started: &Started) {
        self.before.get_or_insert(self.events.len());
        self.started.push(started.clone());
    }
}

fn input(conversation_id: &str, key: Option<&str>) -> TurnInput {
    TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: "Còn hàng không?".into(),
        idempotency_key: key.map(Into::into),
    }
}

#[test]
fn a_stored_turn_says_it_started_once_right_before_its_started_event() {
    for key in [None, Some("k-1")] {
        let backend = MemoryBackend::demo(SITE);
        let shop = ShopAssistant::new(ShopConfig::default(), &backend.warranty);
        let new = NewConversation {
            site_id: SITE.into(),
            ..NewConversation::default()
        };
        let id = block_on(engine::create_conversation(&backend, &shop, new))
            .unwrap()
            .conversation
            .id;
        backend.model.reply(&["Dạ, ", "còn ạ."]);
        let mut sink = Recording::default();
        let outcome = block_on(engine::run_turn(
            &backend,
            &shop,
            &input(&id, key),
            &mut sink,
        ));
        let outcome = outcome.unwrap();
        assert_eq!(sink.started.len(), 1, "{key:?}");
        assert_eq!(sink.before, Some(0), "{key:?}");
        let started = &sink.started[0];
        assert_eq!(sink.events[0], started.event());
        assert_eq!(started.conversation_id, id);
        assert_eq!(started.user_message_id, outcome.user_message_id);
        assert_eq!(started.reply_id, outcome.reply.id);
    }
}

#[test]
fn a_turn_that_fails_before_it_started_never_says_so() {
    let backend = MemoryBackend::demo(SITE);
    let shop = ShopAssistant::new(ShopConfig::default(), &backend.warranty);
    for key in [None, Some("k-1")] {
        let mut sink = Recording::default();
        let result = block_on(engine::run_turn(
            &backend,
            &shop,
            &input("no-such-conversation", key),
            &mut sink,
        ));
        assert_eq!(result.unwrap_err().code(), "conversation_not_found");
        assert!(sink.started.is_empty(), "{key:?}");
        assert!(
            !sink
                .events
                .iter()
                .any(|e| matches!(e, TurnEvent::Started { .. })),
            "{key:?}"
        );
    }
}

#[test]
fn a_stateless_turn_says_it_started_too() {
    let backend = MemoryBackend::demo(SITE);
    let shop = ShopAssistant::new(ShopConfig::default(), &backend.warranty);
    backend.model.reply(&["Dạ, còn ạ."]);
    let input = StatelessInput {
        site_id: SITE.into(),
        messages: vec![(Role::User, "Còn hàng không?".into())],
        identity: None,
    };
    let mut sink = Recording::default();
    let outcome = block_on(engine::run_stateless(&backend, &shop, input, &mut sink)).unwrap();
    assert_eq!(sink.started.len(), 1);
    assert_eq!(sink.events[0], sink.started[0].event());
    assert_eq!(sink.started[0].reply_id, outcome.reply.id);
}
