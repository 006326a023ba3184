//! A template plugged into the engine from outside the core crate, through its public API
//! only: its own typed settings (deserialised, with defaults), its own dependency trait and
//! an implementation of it, held by the template value — the engine's [`Platform`] knows
//! nothing of them. A streamed turn runs through `engine::run_turn` on the in-memory
//! platform.
#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use concierge_core::boundary::ChatRequest;
use concierge_core::chat::ChatMessage;
use concierge_core::conversation::{Language, MessageKind, Metadata, Role, Scope, chat_history};
use concierge_core::engine::{
    self, Answer, Assistant, NewConversation, Platform, Turn, TurnConfig, TurnOutcome,
};
use concierge_core::error::Error;
use concierge_core::graph::block_on;
use concierge_core::memory::MemoryBackend;
use concierge_core::turn::{TurnEvent, TurnInput};
use serde::Deserialize;

const SITE: &str = "site-1";

/// The template's own settings, as a site would store them: every field has a default.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct WeatherSettings {
    /// The unit forecasts are given in.
    unit: String,
    /// The greeting of a new conversation.
    greeting: String,
}

impl Default for WeatherSettings {
    fn default() -> Self {
        Self {
            unit: "°C".into(),
            greeting: "Hello! Ask me about the weather.".into(),
        }
    }
}

/// The template's own dependency: where forecasts come from.
trait Forecasts {
    /// Tomorrow's high in `city`, when known.
    fn high(&self, city: &str) -> Option<i32>;
}

/// An in-test forecast table that remembers what it was asked.
#[derive(Default)]
struct TableForecasts {
    asked: RefCell<Vec<String>>,
}

impl Forecasts for TableForecasts {
    fn high(&self, city: &str) -> Option<i32> {
        self.asked.borrow_mut().push(city.into());
        (city == "Hanoi").then_some(31)
    }
}

/// The template: its settings and its dependencies.
struct Weather<F: Forecasts> {
    turn: TurnConfig,
    settings: WeatherSettings,
    forecasts: F,
}

impl<F: Forecasts> Assistant for Weather<F> {
    fn config(&self) -> &TurnConfig {
        &self.turn
    }
    fn greeting(&self, _language: Language) -> &str {
        &self.settings.greeting
    }
    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        let city = turn
            .history
            .last()
            .map(|m| m.content.trim().to_string())
            .unwrap_or_default();
        let fact = match self.forecasts.high(&city) {
            Some(high) => format!("Tomorrow's high in {city}: {high}{}.", self.settings.unit),
            None => format!("No forecast for {city}."),
        };
        let mut messages = vec![ChatMessage::system(format!("You forecast. {fact}"))];
        messages.extend(chat_history(&turn.history));
        let request = ChatRequest {
            messages,
            ..ChatRequest::default()
        };
        let mut metadata = Metadata::new();
        metadata.insert("unit".into(), self.settings.unit.clone().into());
        let answered = engine::stream_answer(platform, turn, &request, metadata).await?;
        Ok(Answer {
            reply: answered.reply,
            intent: None,
            confidence: None,
            usage: answered.usage,
            route: vec!["forecast", "answer"],
        })
    }
}

fn run(
    backend: &MemoryBackend,
    weather: &Weather<TableForecasts>,
    text: &str,
) -> (String, Vec<TurnEvent>, TurnOutcome) {
    let new = NewConversation {
        site_id: SITE.into(),
        ..NewConversation::default()
    };
    let created = block_on(engine::create_conversation(backend, weather, new)).unwrap();
    let id = created.conversation.id;
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id.clone(),
        text: text.into(),
        idempotency_key: None,
    };
    let mut events = Vec::new();
    let outcome = block_on(engine::run_turn(backend, weather, &input, &mut events)).unwrap();
    (id, events, outcome)
}

#[test]
fn a_template_from_outside_the_crate_streams_a_turn_with_its_settings_and_dependency() {
    let settings: WeatherSettings =
        serde_json::from_str(r#"{"unit": "°F", "greeting": "Weather desk here."}"#).unwrap();
    let weather = Weather {
        turn: TurnConfig::default(),
        settings,
        forecasts: TableForecasts::default(),
    };
    let backend = MemoryBackend::default();
    backend.model.reply(&["Hot: ", "31°F ", "tomorrow."]);

    let (id, events, outcome) = run(&backend, &weather, "Hanoi");

    // The dependency was asked, with the visitor's city.
    assert_eq!(*weather.forecasts.asked.borrow(), vec!["Hanoi".to_string()]);
    // The settings and the dependency's answer reached the model's prompt.
    let prompt = &backend.model.last_request().unwrap().messages[0];
    assert!(
        prompt.content.contains("Tomorrow's high in Hanoi: 31°F."),
        "{prompt:?}"
    );
    // The streamed events: started, the model's chunks as they came, completed.
    assert!(
        matches!(&events[0], TurnEvent::Started { conversation_id, .. } if *conversation_id == id)
    );
    let chunks: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(chunks.concat(), "Hot: 31°F tomorrow.");
    assert!(matches!(events.last(), Some(TurnEvent::Completed { .. })));
    assert_eq!(outcome.route, vec!["forecast", "answer"]);

    // The stored conversation: the settings' greeting, the visitor's city, the reply with
    // the template's metadata.
    let stored = backend.store.messages(Scope::new(SITE, &id));
    let texts: Vec<(Role, &str)> = stored
        .iter()
        .map(|m| (m.role, m.content.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (Role::Assistant, "Weather desk here."),
            (Role::User, "Hanoi"),
            (Role::Assistant, "Hot: 31°F tomorrow."),
        ]
    );
    let reply = stored.last().unwrap();
    assert_eq!(reply.id, outcome.reply.id);
    assert_eq!(reply.kind, MessageKind::Answer);
    assert_eq!(reply.metadata.get("unit"), Some(&"°F".into()));
}

#[test]
fn settings_left_out_take_their_defaults_and_an_unknown_city_is_said_so() {
    let settings: WeatherSettings = serde_json::from_str("{}").unwrap();
    assert!(serde_json::from_str::<WeatherSettings>(r#"{"units": "K"}"#).is_err());
    let weather = Weather {
        turn: TurnConfig::default(),
        settings,
        forecasts: TableForecasts::default(),
    };
    let backend = MemoryBackend::default();
    backend.model.reply(&["I don't know Atlantis."]);

    let (id, _events, _outcome) = run(&backend, &weather, "Atlantis");

    let prompt = &backend.model.last_request().unwrap().messages[0];
    assert!(
        prompt.content.contains("No forecast for Atlantis."),
        "{prompt:?}"
    );
    let stored = backend.store.messages(Scope::new(SITE, &id));
    assert_eq!(stored[0].content, "Hello! Ask me about the weather.");
    assert_eq!(
        stored.last().unwrap().metadata.get("unit"),
        Some(&"°C".into())
    );
}
