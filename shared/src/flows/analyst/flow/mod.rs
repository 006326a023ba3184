//! The graph run: `intent_classifier` → `chat_node` | `data_agent_node` | `clarify_node`
//! → `response_formatter`, on the engine's turn.
//!
//! `data_agent_node` and `response_formatter` are in `data_agent`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::Value;

use super::format::Normaliser;
use super::{AnalystConfig, CHAT_NODE_PROMPT, INTENT_CLASSIFIER_PROMPT};
use crate::boundary::{ChatModel, ChatRequest, Constraint, DataConnection, DataSets, ModelCall};
use crate::chat::ChatMessage;
use crate::conversation::{Language, MessageKind, Metadata, StoredMessage};
use crate::engine::{
    self, Answer, AsItComes, Platform, Streamed, TrimStart, Turn, fail_answer, store_reply,
    stream_text,
};
use crate::error::{ChatModelError, Error};
use crate::turn::TurnEvent;

mod data_agent;

use data_agent::data_path;

/// The three intents (seed).
pub const INTENTS: [&str; 3] = ["data_query", "chat", "unclear"];
/// The node names (seed).
pub const NODE_NAMES: [&str; 5] = [
    "intent_classifier",
    "chat_node",
    "data_agent_node",
    "clarify_node",
    "response_formatter",
];

/// The classifier's reply as an intent (decision §1.2.5 P1): trimmed, unquoted,
/// lower-cased; an exact label wins; else the one label appearing as a whole word; else
/// `unclear`.
pub fn parse_intent(reply: &str) -> &'static str {
    let trimmed = reply
        .trim()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '.' | '!' | '?' | ',' | ';' | ':'))
        .trim()
        .to_lowercase();
    if let Some(label) = INTENTS.iter().find(|l| **l == trimmed) {
        return label;
    }
    let words: Vec<&str> = trimmed
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let found: Vec<&'static str> = INTENTS
        .iter()
        .copied()
        .filter(|l| words.contains(l))
        .collect();
    match found.as_slice() {
        [one] => one,
        _ => "unclear",
    }
}

/// `format_schema_context(user_connections)`: one block per connection with its fields.
pub fn schema_context(connections: &[DataConnection], none: &str) -> String {
    if connections.is_empty() {
        return none.into();
    }
    let mut out = String::new();
    for c in connections {
        out.push_str(&format!("- {} ({} rows)", c.name, c.row_count));
        if !c.description.is_empty() {
            out.push_str(&format!(": {}", c.description));
        }
        out.push('\n');
        for f in &c.fields {
            let examples: Vec<String> = f.examples.iter().map(Value::to_string).collect();
            out.push_str(&format!(
                "  - {} ({}): {}\n",
                f.name,
                f.kind,
                examples.join(", ")
            ));
        }
    }
    out
}

/// The stored history as model messages (incomplete replies left out; Property 9).
fn history(turn: &Turn<'_>) -> Vec<ChatMessage> {
    turn.history
        .iter()
        .filter(|m| !m.is_incomplete() && !m.content.trim().is_empty())
        .map(|m| ChatMessage::new(m.role, m.content.clone()))
        .collect()
}

/// A request on the template's sampling settings.
fn request(
    config: &AnalystConfig,
    system: String,
    history: &[ChatMessage],
    extra: Option<ChatMessage>,
) -> ChatRequest {
    let mut messages = Vec::with_capacity(history.len() + 2);
    messages.push(ChatMessage::system(system));
    messages.extend(history.iter().cloned());
    messages.extend(extra);
    ChatRequest {
        messages,
        tools: Vec::new(),
        temperature: config.turn.temperature,
        max_tokens: config.turn.max_tokens,
    }
}

/// Tokens the classifier may write: a label, or `{"choice": "<label>"}`.
const CLASSIFIER_MAX_TOKENS: u32 = 24;

fn system(config: &AnalystConfig, language: Language, prompt: &str) -> String {
    match language {
        Language::Vi => prompt.into(),
        Language::En => format!("{prompt}\n{}", config.sentence(language, "language")),
    }
}

/// Calls the model for one of `labels` and collects its text (the classifier: nothing
/// streams).
async fn collect<M: ChatModel>(
    model: &M,
    labels: &[&str],
    request: &ChatRequest,
) -> Result<String, ChatModelError> {
    let constraint = Constraint {
        one_of: labels,
        ..Constraint::default()
    };
    engine::complete(model, &ModelCall::new(request).constrained(constraint)).await
}

/// Streams a node's reply as chunks: leading whitespace dropped, Vietnamese numbers
/// normalised when `normalise`.
async fn stream_node<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
    normalise: bool,
) -> Streamed {
    let call = ModelCall::new(request);
    let sink = &mut *turn.sink;
    if normalise {
        let mut filter = TrimStart::new(Normaliser::new());
        stream_text(platform, sink, &call, &mut filter).await
    } else {
        stream_text(platform, sink, &call, &mut TrimStart::new(AsItComes)).await
    }
}

/// Streams `text` whole, normalised like model text.
fn stream_fixed(turn: &mut Turn<'_>, text: &str) -> String {
    let out = if turn.language == Language::Vi {
        super::format::normalise(text)
    } else {
        text.into()
    };
    turn.sink.emit(TurnEvent::Chunk { text: out.clone() });
    out
}

/// Runs the graph for the turn.
pub async fn answer<P: Platform>(
    config: &AnalystConfig,
    sets: &dyn DataSets,
    platform: &P,
    turn: &mut Turn<'_>,
) -> Result<Answer, Error> {
    let language = turn.language;
    let past = history(turn);
    // Classification is not creative: temperature 0, a few tokens, and decoding
    // constrained to the three labels where the provider supports structured output.
    let mut classifier = request(
        config,
        system(config, language, INTENT_CLASSIFIER_PROMPT),
        &past,
        None,
    );
    classifier.temperature = Some(0.0);
    classifier.max_tokens = Some(CLASSIFIER_MAX_TOKENS);
    let intent = match collect(platform.model(), &INTENTS, &classifier).await {
        Ok(reply) => parse_intent(&reply),
        Err(_) => "unclear",
    };
    let mut metadata = Metadata::new();
    metadata.insert("intent".into(), intent.into());
    let normalise = language == Language::Vi;
    let mut usage = None;
    let (node, kind, text) = match intent {
        "chat" => {
            let chat = request(
                config,
                system(config, language, CHAT_NODE_PROMPT),
                &past,
                None,
            );
            let shown = stream_node(platform, turn, &chat, normalise).await;
            (
                NODE_NAMES[1],
                MessageKind::Answer,
                finish(platform, turn, shown, &metadata).await?,
            )
        }
        "data_query" => {
            let (text, meta) = data_path(config, sets, platform, turn, &past, &mut usage).await?;
            metadata.extend(meta);
            (NODE_NAMES[2], MessageKind::Answer, text)
        }
        _ => {
            let clarify = config.sentence(language, "clarify");
            (
                NODE_NAMES[3],
                MessageKind::Clarify,
                stream_fixed(turn, &clarify),
            )
        }
    };
    let reply = store_reply(platform, turn, kind, text, metadata, Vec::new()).await?;
    Ok(Answer {
        reply,
        intent: Some(intent),
        confidence: None,
        usage,
        route: vec![NODE_NAMES[0], node, NODE_NAMES[4]],
    })
}

/// A streamed node's text, or the turn's failure (what the visitor saw kept by the
/// engine's one policy).
async fn finish<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    mut shown: Streamed,
    metadata: &Metadata,
) -> Result<String, Error> {
    let Some(error) = shown.failure_or_empty() else {
        return Ok(shown.shown);
    };
    let (meta, steps) = (metadata.clone(), Vec::new());
    Err(fail_answer(
        platform,
        turn,
        shown.shown,
        meta,
        steps,
        shown.finish,
        error,
    )
    .await)
}

/// For tests: the stored message's recorded tool calls.
pub fn tool_records(message: &StoredMessage) -> &[Value] {
    message
        .metadata
        .get("tool_calls")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}
