//! The `guarded` template on the in-memory platform: the guardrail refuses before anything
//! is stored (and the answer model is never called), a passed question is answered with
//! the code-built sources list, the summary accumulates as the seed's trace says and the
//! next prompt carries it with only the 6 recent messages, and failures keep the
//! visitor's message.
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::ConversationStore;
use concierge_core::chat::Role;
use concierge_core::conversation::{MessageKind, Scope};
use concierge_core::engine::{self, NewConversation, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::flows::guarded::GuardedConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::{MemoryBackend, MemoryPage};
use concierge_core::turn::{TurnEvent, TurnInput};

const SITE: &str = "site-g";

fn backend() -> MemoryBackend {
    let backend = MemoryBackend::default();
    backend.search.add(MemoryPage::new(
        "Sâu răng: nguyên nhân và cách điều trị",
        "https://nhakhoa.example/sau-rang",
        "Sâu răng do vi khuẩn; đánh răng với kem có fluor hai lần mỗi ngày.",
    ));
    backend.search.add(MemoryPage::new(
        "",
        "https://nhakhoa.example/fluor",
        "Fluor giúp men răng chắc khỏe, ngừa sâu răng.",
    ));
    backend
}

fn open(backend: &MemoryBackend, config: &GuardedConfig) -> String {
    let new = NewConversation {
        site_id: SITE.into(),
        ..NewConversation::default()
    };
    block_on(engine::create_conversation(
        backend,
        &guarded(backend, config),
        new,
    ))
    .unwrap()
    .conversation
    .id
}

fn say(
    backend: &MemoryBackend,
    config: &GuardedConfig,
    conversation_id: &str,
    text: &str,
) -> (String, Vec<TurnEvent>, Result<TurnOutcome, Error>) {
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: conversation_id.into(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = block_on(engine::run_turn(
        backend,
        &guarded(backend, config),
        &input,
        &mut events,
    ));
    let shown = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (shown, events, outcome)
}

fn stored(backend: &MemoryBackend, conversation_id: &str) -> Vec<(Role, String)> {
    let scope = Scope::new(SITE, conversation_id);
    block_on(backend.store.load_recent_messages(scope, 100))
        .unwrap()
        .into_iter()
        .filter(|m| m.kind != MessageKind::Greeting)
        .map(|m| (m.role, m.content))
        .collect()
}

#[test]
fn an_off_domain_question_is_refused_in_its_language_and_not_stored() {
    let backend = backend();
    let config = GuardedConfig::default();
    let id = open(&backend, &config);
    backend.model.reply(&["NO"]);
    let (shown, events, outcome) = say(&backend, &config, &id, "Giá vàng hôm nay bao nhiêu?");
    assert_eq!(shown, config.vi.refusal);
    assert_eq!(outcome.unwrap().reply.kind, MessageKind::Refusal);
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    backend.model.reply(&["No."]);
    let (shown, _, _) = say(
        &backend,
        &config,
        &id,
        "What is the weather in Paris today?",
    );
    assert_eq!(shown, config.en.refusal);
    // Only the guardrail ran: two requests, both the YES/NO prompt; nothing searched.
    let requests = backend.model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].messages[0].content, config.en.guardrail);
    assert!(backend.search.queries().is_empty());
    assert!(stored(&backend, &id).is_empty());
    let lines = backend.logger.lines().join("\n");
    assert!(
        lines.contains("Question rejected - NOT saved to memory"),
        "{lines}"
    );
    assert!(lines.contains("Guardrail result: REJECTED"), "{lines}");
}

#[test]
fn answers_carry_sources_and_the_summary_accumulates() {
    let backend = backend();
    let config = GuardedConfig::default();
    let id = open(&backend, &config);
    for n in 1..=3 {
        backend.model.reply(&["YES"]);
        backend.model.reply(&[
            &format!("Trả lời {n} về sâu răng."),
            "\n\nNguồn tham khảo:\n1. x",
        ]);
        backend.model.reply(&[&format!("Summary {n}")]);
        let (shown, _, outcome) = say(
            &backend,
            &config,
            &id,
            &format!("Câu {n}: vì sao bị sâu răng?"),
        );
        let expected = format!(
            "Trả lời {n} về sâu răng.\n\nNguồn tham khảo:\n\n\
             1. Sâu răng: nguyên nhân và cách điều trị - https://nhakhoa.example/sau-rang\n\
             2. https://nhakhoa.example/fluor"
        );
        assert_eq!(shown, expected);
        assert_eq!(outcome.unwrap().reply.content, expected);
    }
    let scope = Scope::new(SITE, &id);
    let summary = block_on(backend.store.load_summary(scope))
        .unwrap()
        .unwrap();
    assert_eq!(summary.content, "Summary 1\n\nSummary 2\n\nSummary 3");
    backend.model.reply(&["YES"]);
    backend.model.reply(&["Trả lời 4."]);
    backend.model.reply(&["Summary 4"]);
    let _ = say(
        &backend,
        &config,
        &id,
        "Câu 4: fluor có tác dụng gì cho răng?",
    );
    let requests = backend.model.requests();
    let fourth = &requests[requests.len() - 2].messages[1].content;
    assert!(
        fourth.starts_with(
            "\n\nTóm tắt cuộc trò chuyện trước:\nSummary 1\n\nSummary 2\n\nSummary 3\n"
        ),
        "{fourth}"
    );
    // The 6 recent messages are Q1..A3 — and the greeting is not among them.
    assert!(fourth.contains("Người dùng: Câu 1"), "{fourth}");
    assert!(fourth.contains("Trợ lý: Trả lời 3"), "{fourth}");
    assert!(!fourth.contains("Xin chào"), "{fourth}");
    assert!(fourth.contains("Title: Sâu răng"), "{fourth}");
    assert!(
        fourth.contains("Link: https://nhakhoa.example/fluor"),
        "{fourth}"
    );
    assert_eq!(stored(&backend, &id).len(), 8);
}

#[test]
fn search_and_model_failures_fail_once_and_keep_the_message() {
    let backend = backend();
    let config = GuardedConfig::default();
    let id = open(&backend, &config);
    backend.search.set_unavailable(true);
    backend.model.reply(&["YES"]);
    let (_, events, outcome) = say(&backend, &config, &id, "Răng khôn mọc lệch phải làm sao?");
    assert_eq!(outcome.unwrap_err().code(), "search_unavailable");
    let terminal = events
        .iter()
        .filter(|e| matches!(e, TurnEvent::Completed { .. } | TurnEvent::Failed { .. }))
        .count();
    assert_eq!(terminal, 1);
    assert_eq!(
        backend.model.requests().len(),
        1,
        "the answer model was not called"
    );
    backend.search.set_unavailable(false);
    backend.model.reply(&["YES"]);
    // No answer script left: the model is unreachable.
    let (_, _, outcome) = say(&backend, &config, &id, "Răng khôn có cần nhổ không?");
    assert_eq!(outcome.unwrap_err().code(), "model_failed");
    let messages = stored(&backend, &id);
    assert_eq!(messages.len(), 2);
    assert!(messages.iter().all(|(role, _)| *role == Role::User));
}

#[test]
fn a_stateless_turn_is_screened_too_and_stores_no_summary() {
    use concierge_core::engine::StatelessInput;
    let backend = backend();
    let config = GuardedConfig::default();
    let run = |text: &str| {
        let input = StatelessInput {
            site_id: SITE.into(),
            messages: vec![(Role::User, text.into())],
            identity: None,
        };
        let mut events = Vec::new();
        let outcome = block_on(engine::run_stateless(
            &backend,
            &guarded(&backend, &config),
            input,
            &mut events,
        ));
        (events, outcome.unwrap())
    };
    backend.model.reply(&["NO"]);
    let (_, outcome) = run("What is the price of gold today?");
    assert_eq!(outcome.reply.kind, MessageKind::Refusal);
    assert_eq!(outcome.reply.content, config.en.refusal);
    backend.model.reply(&["YES"]);
    backend
        .model
        .reply(&["Brush twice a day with fluoride toothpaste."]);
    let (events, outcome) = run("How do I prevent tooth decay with fluor?");
    assert!(
        outcome.reply.content.starts_with("Brush twice a day"),
        "{}",
        outcome.reply.content
    );
    assert!(
        outcome.reply.content.contains("\n\nSources:\n\n1. "),
        "{}",
        outcome.reply.content
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolStart { name, .. } if name == "duckduckgo_search"))
    );
    // No summary call: three requests in all (guardrail, guardrail, answer).
    assert_eq!(backend.model.requests().len(), 3);
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn guarded<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::guarded::GuardedConfig,
) -> concierge_core::flows::guarded::GuardedAssistant<&'b concierge_core::memory::MemorySearch> {
    concierge_core::flows::guarded::GuardedAssistant::new(config.clone(), &backend.search)
}
