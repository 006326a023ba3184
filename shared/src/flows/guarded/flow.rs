//! The steps of a `guarded` turn (see the module docs of [`super`]).

use alloc::format;
use alloc::vec::Vec;

use super::calls::{complete, step};
use super::config::{GuardedConfig, KEEP_RECENT_MESSAGES};
use super::guardrail::{Verdict, parse_verdict};
use super::prompt::{self, PromptParts};
use super::sources::{extract_sources, sources_section};
use super::steps;
use crate::boundary::WebSearch;
use crate::chat::{Role, Usage};
use crate::conversation::{Language, MessageKind, Metadata, Scope, StoredMessage};
use crate::engine::{Answer, Platform, Refusal, Turn, TurnMode, store_reply};
use crate::error::Error;
use crate::language;
use crate::turn::TurnEvent;

/// The turn's language, detected once from the visitor's message (an explicit request such
/// as "answer in English" wins) and reused by the guardrail, the refusal and the prompt.
pub fn turn_language(text: &str) -> Language {
    language::requested(text).unwrap_or_else(|| language::detect(text))
}

/// The recent window (step 6): the last [`KEEP_RECENT_MESSAGES`] messages of `history`
/// (the messages *before* the visitor's), leaving out the greeting and partial replies of
/// failed turns.
pub fn recent_window(history: &[StoredMessage]) -> Vec<StoredMessage> {
    let kept: Vec<&StoredMessage> = history
        .iter()
        .filter(|m| m.kind != MessageKind::Greeting && !m.is_incomplete())
        .filter(|m| matches!(m.role, Role::User | Role::Assistant))
        .collect();
    let skip = kept.len().saturating_sub(KEEP_RECENT_MESSAGES);
    kept.into_iter().skip(skip).cloned().collect()
}

/// The guardrail (seed step 4): `Some(refusal)` for an off-domain question. A model
/// failure is an error, not a rejection.
pub(super) async fn screen<P: Platform>(
    config: &GuardedConfig,
    platform: &P,
    scope: Option<Scope<'_>>,
    text: &str,
) -> Result<Option<Refusal>, Error> {
    let conversation_id = scope.map_or("", |s| s.conversation_id);
    let logger = platform.logger();
    let language = turn_language(text);
    let extracted = if config.debug_log {
        format!("Extracted user message: {text}")
    } else {
        format!(
            "Extracted user message: {} characters ({})",
            text.chars().count(),
            language.as_str()
        )
    };
    step(logger, conversation_id, "1.2", &extracted);
    let summary = match scope {
        Some(scope) if config.guardrail_with_context => {
            steps::stored_summary(platform, scope).await
        }
        _ => alloc::string::String::new(),
    };
    let request = prompt::guardrail_request(config, language, &summary, text);
    let reply = complete(platform, config.guardrail_model.as_deref(), &request).await?;
    let verdict = parse_verdict(&reply);
    let result = format!("Guardrail result: {}", verdict.as_str());
    step(logger, conversation_id, "2.1", &result);
    if verdict == Verdict::Passed {
        return Ok(None);
    }
    step(
        logger,
        conversation_id,
        "2.3",
        "Question rejected - NOT saved to memory",
    );
    Ok(Some(Refusal {
        text: config.texts(language).refusal.clone(),
        language,
    }))
}

/// Steps 5–14 for a passed, stored question.
pub(super) async fn answer<P: Platform, S: WebSearch>(
    config: &GuardedConfig,
    search: &S,
    platform: &P,
    turn: &mut Turn<'_>,
) -> Result<Answer, Error> {
    let logger = platform.logger();
    let mut history = core::mem::take(&mut turn.history);
    let question = history.pop().map(|m| m.content).unwrap_or_default();
    let language = turn_language(&question);
    turn.language = language;
    let conversation_id = turn.conversation.id.clone();
    let log = |id: &'static str, msg: &str| step(logger, &conversation_id, id, msg);
    if turn.mode == TurnMode::Stateless
        && let Some(refusal) = screen(config, platform, None, &question).await?
    {
        turn.sink.emit(TurnEvent::Chunk {
            text: refusal.text.clone(),
        });
        let reply = store_reply(
            platform,
            turn,
            MessageKind::Refusal,
            refusal.text,
            Metadata::new(),
            Vec::new(),
        )
        .await?;
        return Ok(done(reply, None, &["guardrail", "refuse"]));
    }
    log("3.1", &format!("Conversation ID: {conversation_id}"));
    let recent = recent_window(&history);
    log(
        "4.1",
        &format!("Retrieved {} messages from memory", recent.len()),
    );
    let summary = steps::load_summary(platform, turn).await;
    if summary.is_empty() {
        log(
            "4.1",
            "No existing summary (first question in conversation)",
        );
    } else if config.debug_log {
        log("4.1", &format!("Found existing summary: {summary}"));
    } else {
        let n = summary.chars().count();
        log("4.1", &format!("Found existing summary: {n} characters"));
    }
    let total = recent.len() + 1;
    log(
        "5.1",
        &format!("Context built. Total messages in context: {total}"),
    );
    let results = steps::search(search, turn, &question).await?;
    let n = results.chars().count();
    log(
        "6.1",
        &format!("Search completed. Results length: {n} characters"),
    );
    if !summary.is_empty() {
        let n = summary.chars().count();
        log(
            "7.2",
            &format!("Using existing summary as context. Summary length: {n} characters"),
        );
    }
    let parts = PromptParts {
        language,
        summary: &summary,
        recent: &recent,
        question: &question,
        results: &results,
    };
    let request = prompt::answer_request(config, parts);
    let n = prompt::prompt_chars(&request);
    log("7.4", &format!("Prompt built. Length: {n} characters"));
    if config.debug_log {
        let body: Vec<&str> = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        log(
            "7.4",
            &format!(
                "--- PROMPT START ---\n{}\n--- PROMPT END ---",
                body.join("\n")
            ),
        );
    }
    log(
        "8",
        &format!("Generating response with LLM provider: {}", config.provider),
    );
    let (text, usage) = steps::generate(config, platform, turn, &request).await?;
    if config.debug_log {
        log(
            "8.1",
            &format!("--- RESPONSE START ---\n{text}\n--- RESPONSE END ---"),
        );
    }
    let sources = extract_sources(&results);
    let section = sources_section(language, &sources);
    if !section.is_empty() {
        turn.sink.emit(TurnEvent::Chunk {
            text: section.clone(),
        });
    }
    let formatted = format!("{text}{section}");
    log(
        "8.2",
        &format!("Formatted response. Sources: {}", sources.len()),
    );
    if config.debug_log {
        log(
            "8.2",
            &format!(
                "--- FORMATTED RESPONSE START ---\n{formatted}\n--- FORMATTED RESPONSE END ---"
            ),
        );
    }
    let mut metadata = Metadata::new();
    metadata.insert("sources".into(), sources.len().into());
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        formatted,
        metadata,
        Vec::new(),
    )
    .await?;
    if turn.mode != TurnMode::Stateless {
        steps::update_summary(
            config, platform, turn, &summary, &question, &text, reply.seq,
        )
        .await;
    }
    let route = [
        "guardrail",
        "memory_load",
        "search",
        "build_prompt",
        "generate",
        "format",
        "save",
    ];
    Ok(done(reply, usage, &route))
}

fn done(reply: StoredMessage, usage: Option<Usage>, route: &[&'static str]) -> Answer {
    Answer {
        reply,
        intent: None,
        confidence: None,
        usage,
        route: route.to_vec(),
    }
}
