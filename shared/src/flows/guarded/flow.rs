//! The steps of a `guarded` turn (see the module docs of [`super`]).

use alloc::format;
use alloc::vec::Vec;

use super::calls::{complete, step};
use super::config::{GuardedConfig, KEEP_RECENT_MESSAGES};
use super::guardrail::{Verdict, parse_verdict};
use super::prompt::{self, PromptParts};
use super::sources::{extract_sources, sources_section};
use super::steps;
use crate::boundary::{ChatRequest, WebSearch};
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

/// The turn's step log (`step(logger, conversation, id, message)` with the first two bound).
type Log<'a> = &'a dyn Fn(&'static str, &str);

/// Steps 5–14 for a passed, stored question, one function per seed node: `guardrail` (for
/// a stateless turn; a stored one was screened before its message was kept),
/// [`memory_load`], [`search`], [`build_prompt`], [`generate`], [`format`], [`save`].
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
    let (recent, summary) = memory_load(config, platform, turn, &history, &log).await;
    let results = self::search(search, turn, &question, &log).await?;
    let parts = PromptParts {
        language,
        summary: &summary,
        recent: &recent,
        question: &question,
        results: &results,
    };
    let request = build_prompt(config, parts, &log);
    let (text, usage) = generate(config, platform, turn, &request, &log).await?;
    let (formatted, sources) = format(config, turn, &text, &results, &log);
    let answered = Answered {
        question: &question,
        text: &text,
        formatted,
        sources,
        summary: &summary,
    };
    let reply = save(config, platform, turn, answered).await?;
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

/// memory_load (steps 3–5): the recent window of the conversation and its summary.
async fn memory_load<P: Platform>(
    config: &GuardedConfig,
    platform: &P,
    turn: &Turn<'_>,
    history: &[StoredMessage],
    log: Log<'_>,
) -> (Vec<StoredMessage>, alloc::string::String) {
    log("3.1", &format!("Conversation ID: {}", turn.conversation.id));
    let recent = recent_window(history);
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
    (recent, summary)
}

/// search (step 6): the web search's results for the question, as text.
async fn search<S: WebSearch>(
    search: &S,
    turn: &mut Turn<'_>,
    question: &str,
    log: Log<'_>,
) -> Result<alloc::string::String, Error> {
    let results = steps::search(search, turn, question).await?;
    let n = results.chars().count();
    log(
        "6.1",
        &format!("Search completed. Results length: {n} characters"),
    );
    Ok(results)
}

/// build_prompt (step 7): the summary, the recent window, the results and the question.
fn build_prompt(config: &GuardedConfig, parts: PromptParts<'_>, log: Log<'_>) -> ChatRequest {
    if !parts.summary.is_empty() {
        let n = parts.summary.chars().count();
        log(
            "7.2",
            &format!("Using existing summary as context. Summary length: {n} characters"),
        );
    }
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
    request
}

/// generate (step 8): the answer, streamed to the visitor.
async fn generate<P: Platform>(
    config: &GuardedConfig,
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
    log: Log<'_>,
) -> Result<(alloc::string::String, Option<Usage>), Error> {
    log(
        "8",
        &format!("Generating response with LLM provider: {}", config.provider),
    );
    let (text, usage) = steps::generate(config, platform, turn, request).await?;
    if config.debug_log {
        log(
            "8.1",
            &format!("--- RESPONSE START ---\n{text}\n--- RESPONSE END ---"),
        );
    }
    Ok((text, usage))
}

/// format (step 8.2): the sources section after the answer, streamed too; answers the
/// stored text and how many sources it cites.
fn format(
    config: &GuardedConfig,
    turn: &mut Turn<'_>,
    text: &str,
    results: &str,
    log: Log<'_>,
) -> (alloc::string::String, usize) {
    let sources = extract_sources(results);
    let section = sources_section(turn.language, &sources);
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
    (formatted, sources.len())
}

/// What `save` stores.
struct Answered<'a> {
    question: &'a str,
    /// The model's answer, without its sources section (the summary's input).
    text: &'a str,
    /// The answer as shown, with its sources section.
    formatted: alloc::string::String,
    sources: usize,
    /// The summary the answer was made with.
    summary: &'a str,
}

/// save (steps 9–14): the reply stored, then the conversation's summary brought up to it
/// (not for a stateless turn).
async fn save<P: Platform>(
    config: &GuardedConfig,
    platform: &P,
    turn: &mut Turn<'_>,
    answered: Answered<'_>,
) -> Result<StoredMessage, Error> {
    let mut metadata = Metadata::new();
    metadata.insert("sources".into(), answered.sources.into());
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        answered.formatted,
        metadata,
        Vec::new(),
    )
    .await?;
    if turn.mode != TurnMode::Stateless {
        let (summary, question, text) = (answered.summary, answered.question, answered.text);
        steps::update_summary(config, platform, turn, summary, question, text, reply.seq).await;
    }
    Ok(reply)
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
