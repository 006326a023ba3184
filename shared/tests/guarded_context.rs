//! Issue 27 item 5: with `guardrail_with_context` on, the guardrail sees the conversation's
//! summary before the question, so a follow-up ("Còn trẻ em thì sao?") is judged in
//! context; off (the default, the seed's behaviour) it sees only the question.
#![allow(clippy::unwrap_used)]

use concierge_core::engine::{self, NewConversation};
use concierge_core::flows::guarded::{GuardedAssistant, GuardedConfig};
use concierge_core::graph::block_on;
use concierge_core::memory::MemoryBackend;
use concierge_core::turn::{TurnEvent, TurnInput};

const SITE: &str = "site-gc";

fn turn(backend: &MemoryBackend, config: &GuardedConfig, id: &str, text: &str) -> Vec<TurnEvent> {
    let assistant = GuardedAssistant::new(config.clone(), &backend.search);
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.into(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    block_on(engine::run_turn(backend, &assistant, &input, &mut events)).unwrap();
    events
}

/// The guardrail's user message for a follow-up after one dental answer.
fn follow_up_guardrail_sees(config: &GuardedConfig) -> String {
    let backend = MemoryBackend::default();
    let assistant = GuardedAssistant::new(config.clone(), &backend.search);
    let new = NewConversation {
        site_id: SITE.into(),
        ..NewConversation::default()
    };
    let id = block_on(engine::create_conversation(&backend, &assistant, new))
        .unwrap()
        .conversation
        .id;
    backend.model.reply(&["YES"]);
    backend
        .model
        .reply(&["Người lớn niềng răng thường mất 18 đến 24 tháng."]);
    backend
        .model
        .reply(&["Khách hỏi thời gian niềng răng cho người lớn: 18–24 tháng."]);
    turn(&backend, config, &id, "Người lớn niềng răng mất bao lâu?");
    backend.model.reply(&["YES"]);
    backend
        .model
        .reply(&["Trẻ em thường niềng 12 đến 18 tháng."]);
    backend.model.reply(&["Thêm: trẻ em 12–18 tháng."]);
    let events = turn(&backend, config, &id, "Còn trẻ em thì sao?");
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    let requests = backend.model.requests();
    // Guardrail, answer, summary; then the follow-up's guardrail.
    let guardrail = &requests[3];
    assert_eq!(guardrail.messages[0].content, config.vi.guardrail);
    guardrail.messages[1].content.clone()
}

#[test]
fn off_by_default_the_guardrail_sees_only_the_question() {
    let config = GuardedConfig::default();
    assert!(!config.guardrail_with_context);
    assert_eq!(follow_up_guardrail_sees(&config), "Còn trẻ em thì sao?");
}

#[test]
fn on_the_guardrail_sees_the_summary_then_the_question() {
    let config = GuardedConfig {
        guardrail_with_context: true,
        ..GuardedConfig::default()
    };
    let seen = follow_up_guardrail_sees(&config);
    assert_eq!(
        seen,
        "Tóm tắt cuộc trò chuyện trước:\n\
         Khách hỏi thời gian niềng răng cho người lớn: 18–24 tháng.\n\n\
         Câu hỏi hiện tại: Còn trẻ em thì sao?"
    );
}
