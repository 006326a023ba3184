//! Test doubles for `knowledge` turns: a chat model that answers by marker (a text the
//! request's system prompt contains, e.g. a task's trace id), after a delay on the
//! backend's virtual timer, and records every request.
#![allow(dead_code, clippy::unwrap_used)]

use std::cell::RefCell;
use std::collections::VecDeque;

use concierge_core::boundary::{ChatModel, ChatRequest, ChatSink, ModelCall, Timer};
use concierge_core::chat::{ChatEvent, FinishReason};
use concierge_core::conversation::Language;
use concierge_core::engine::{self, NewConversation};
use concierge_core::error::{ChatModelError, ChatModelErrorKind};
use concierge_core::flows::knowledge::KnowledgeConfig;
use concierge_core::identity::UserIdentity;
use concierge_core::memory::{MemoryBackend, MemoryTimer};
use concierge_core::retrieval::{DocumentMeta, index_document_with};
use concierge_core::turn::{TurnEvent, TurnInput};

pub const SITE: &str = "site-k";

/// One scripted reply.
#[derive(Clone)]
pub struct Scripted {
    pub delay_ms: u64,
    pub text: Option<String>,
}

/// Replies by marker, in order per marker.
pub struct MarkerModel<'t> {
    timer: &'t MemoryTimer,
    routes: RefCell<Vec<(String, VecDeque<Scripted>)>>,
    pub requests: RefCell<Vec<ChatRequest>>,
}

impl<'t> MarkerModel<'t> {
    pub fn new(timer: &'t MemoryTimer) -> Self {
        Self {
            timer,
            routes: RefCell::new(Vec::new()),
            requests: RefCell::new(Vec::new()),
        }
    }

    /// The next request whose system prompt contains `marker` gets `text` after
    /// `delay_ms` (`None`: the model fails).
    pub fn on(&self, marker: &str, delay_ms: u64, text: Option<&str>) -> &Self {
        let reply = Scripted {
            delay_ms,
            text: text.map(String::from),
        };
        let mut routes = self.routes.borrow_mut();
        match routes.iter_mut().find(|(m, _)| m == marker) {
            Some((_, queue)) => queue.push_back(reply),
            None => routes.push((marker.into(), VecDeque::from([reply]))),
        }
        self
    }

    pub fn calls_with(&self, marker: &str) -> usize {
        self.requests
            .borrow()
            .iter()
            .filter(|r| r.messages[0].content.contains(marker))
            .count()
    }

    pub fn calls(&self) -> usize {
        self.requests.borrow().len()
    }
}

impl ChatModel for MarkerModel<'_> {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let request = call.request;
        self.requests.borrow_mut().push(request.clone());
        let system = request.messages[0].content.clone();
        let reply = {
            let mut routes = self.routes.borrow_mut();
            // The longest matching marker wins (a trace id before a prompt marker).
            let mut best: Option<&mut (String, VecDeque<Scripted>)> = None;
            for route in routes.iter_mut() {
                if system.contains(route.0.as_str())
                    && !route.1.is_empty()
                    && best.as_ref().is_none_or(|b| route.0.len() > b.0.len())
                {
                    best = Some(route);
                }
            }
            best.and_then(|route| route.1.pop_front())
        };
        let Some(reply) = reply else {
            return Err(ChatModelError::new(
                ChatModelErrorKind::Unreachable,
                format!(
                    "no scripted reply for: {}",
                    system.chars().take(80).collect::<String>()
                ),
            ));
        };
        if reply.delay_ms > 0 {
            self.timer.sleep(reply.delay_ms).await;
        }
        match reply.text {
            Some(text) => {
                for piece in text.split_inclusive(' ') {
                    sink.event(ChatEvent::TextDelta(piece.into()));
                }
                sink.event(ChatEvent::finish(FinishReason::Stop));
                Ok(())
            }
            None => Err(ChatModelError::new(
                ChatModelErrorKind::Status(500),
                "scripted",
            )),
        }
    }
}

pub fn user(permissions: &[&str], department: Option<&str>) -> UserIdentity {
    UserIdentity {
        sub: "u-1".into(),
        role: None,
        permissions: permissions.iter().map(|p| p.to_string()).collect(),
        department: department.map(String::from),
    }
}

/// Indexes a document with its permission fields.
pub fn document(
    backend: &MemoryBackend,
    id: &str,
    title: &str,
    text: &str,
    scope: &str,
    department: &str,
    created_at: &str,
) {
    let meta = DocumentMeta {
        scope: scope.into(),
        department: department.into(),
        url: Some(format!("https://intra.company/{id}")),
        created_at: Some(created_at.into()),
        source_type: "rag".into(),
    };
    backend
        .timer
        .run(index_document_with(
            &backend.embedder,
            &backend.index,
            SITE,
            id,
            title,
            text,
            &meta,
        ))
        .unwrap();
    backend.knowledge.bump(SITE);
}

/// The test config: the seed's, with every relevance kept (hashed embeddings score low).
pub fn config() -> KnowledgeConfig {
    let mut config = KnowledgeConfig::default();
    config.workflow.min_relevance_score = 0.0;
    config
}

/// Creates a conversation for `identity` and runs one turn; returns the events.
pub fn turn<M: ChatModel>(
    backend: &MemoryBackend,
    model: &M,
    config: &KnowledgeConfig,
    identity: Option<UserIdentity>,
    conversation: Option<&str>,
    text: &str,
) -> (String, Vec<TurnEvent>) {
    let platform = backend.with_model(model);
    let id = match conversation {
        Some(id) => id.to_string(),
        None => {
            let created = backend
                .timer
                .run(engine::create_conversation(
                    &platform,
                    &knowledge(backend, config),
                    NewConversation {
                        site_id: SITE.into(),
                        user_id: None,
                        identity,
                        language: Some(Language::Vi),
                    },
                ))
                .unwrap();
            created.conversation.id
        }
    };
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.clone(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let _ = backend.timer.run(engine::run_turn(
        &platform,
        &knowledge(backend, config),
        &input,
        &mut events,
    ));
    (id, events)
}

pub fn text_of(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

pub fn payload(events: &[TurnEvent], kind: &str) -> Option<serde_json::Value> {
    events.iter().find_map(|e| match e {
        TurnEvent::Payload { kind: k, data } if k == kind => Some(data.clone()),
        _ => None,
    })
}

pub fn terminals(events: &[TurnEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, TurnEvent::Completed { .. } | TurnEvent::Failed { .. }))
        .count()
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
pub fn knowledge<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::knowledge::KnowledgeConfig,
) -> concierge_core::flows::knowledge::KnowledgeAssistant<
    &'b concierge_core::memory::MemoryCache,
    &'b concierge_core::memory::MemoryKnowledgeBase,
> {
    concierge_core::flows::knowledge::KnowledgeAssistant::new(
        config.clone(),
        &backend.cache,
        &backend.knowledge,
    )
}
