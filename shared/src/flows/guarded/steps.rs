//! Steps 6, 9, 12 and 14 of a `guarded` turn: the summary read, the search, the streamed
//! answer and the summary update.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::calls::{accumulate_summary, complete, step};
use super::config::{
    GuardedConfig, KEEP_RECENT_MESSAGES, MAX_SEARCH_RESULTS, SEARCH_TOOL, SUMMARIZE_THRESHOLD,
};
use super::prompt;
use super::sources::{SourcesCut, results_text};
use crate::boundary::{ChatRequest, ConversationStore, LogRecord, ModelCall, WebSearch};
use crate::chat::Usage;
use crate::conversation::{Metadata, Scope, Summary};
use crate::engine::{Platform, Turn, TurnMode, fail_answer, stream_text};
use crate::error::Error;
use crate::turn::TurnEvent;

/// The accumulated summary, `""` when there is none; a read error degrades to `""`
/// (seed: "continue without memory"), logged.
pub(super) async fn load_summary<P: Platform>(platform: &P, turn: &Turn<'_>) -> String {
    if turn.mode == TurnMode::Stateless {
        return String::new();
    }
    stored_summary(platform, turn.scope()).await
}

/// A stored conversation's summary, `""` when there is none or it cannot be read (logged).
pub(super) async fn stored_summary<P: Platform>(platform: &P, scope: Scope<'_>) -> String {
    match platform.store().load_summary(scope).await {
        Ok(summary) => summary.map(|s| s.content).unwrap_or_default(),
        Err(error) => {
            platform.logger().log(&LogRecord::Warning {
                conversation_id: scope.conversation_id,
                code: "memory_unavailable",
                detail: &error.detail,
            });
            String::new()
        }
    }
}

/// Step 9: the code-driven `duckduckgo_search`, shown as a tool call; an error fails the
/// turn (seed: no fallback).
pub(super) async fn search<S: WebSearch>(
    search: &S,
    turn: &mut Turn<'_>,
    question: &str,
) -> Result<String, Error> {
    let call_id = format!("{}-search", turn.reply_id);
    turn.sink.emit(TurnEvent::ToolStart {
        call_id: call_id.clone(),
        name: SEARCH_TOOL.into(),
        input: serde_json::json!({ "query": question }),
    });
    let found = search.search(question, MAX_SEARCH_RESULTS).await;
    let (ok, output) = match &found {
        Ok(results) => {
            let links: Vec<_> = results
                .iter()
                .map(|r| serde_json::json!({ "title": r.title, "url": r.url }))
                .collect();
            (true, serde_json::json!({ "results": links }))
        }
        Err(_) => (false, serde_json::json!({ "error": "search_unavailable" })),
    };
    turn.sink.emit(TurnEvent::ToolEnd {
        call_id,
        name: SEARCH_TOOL.into(),
        ok,
        output,
    });
    let mut results = found.map_err(Error::Search)?;
    results.truncate(MAX_SEARCH_RESULTS);
    Ok(results_text(&results))
}

/// Step 12: the answer, streamed through [`SourcesCut`]. On a model failure (or nothing
/// to show) the turn fails, and what the visitor saw is kept by the engine's one policy.
pub(super) async fn generate<P: Platform>(
    config: &GuardedConfig,
    platform: &P,
    turn: &mut Turn<'_>,
    request: &ChatRequest,
) -> Result<(String, Option<Usage>), Error> {
    let mut cut = SourcesCut::new();
    let call = ModelCall::new(request).on_model(config.chat_model.as_deref());
    let mut streamed = stream_text(platform, &mut *turn.sink, &call, &mut cut).await;
    let Some(error) = streamed.failure_or_empty() else {
        return Ok((String::from(cut.kept()), streamed.usage));
    };
    let (shown, finish) = (streamed.shown, streamed.finish);
    Err(fail_answer(
        platform,
        turn,
        shown,
        Metadata::new(),
        Vec::new(),
        finish,
        error,
    )
    .await)
}

/// Step 14: the answer summarised and appended to the summary. Best effort: every failure
/// is logged and the shown answer stands.
pub(super) async fn update_summary<P: Platform>(
    config: &GuardedConfig,
    platform: &P,
    turn: &Turn<'_>,
    existing: &str,
    question: &str,
    answer: &str,
    upto_seq: u64,
) {
    let logger = platform.logger();
    let conversation_id = turn.conversation.id.as_str();
    let request = prompt::summarize_request(config, turn.language, question, answer);
    let model = config.chat_model.as_deref();
    let result = match complete(platform, model, &request).await {
        Ok(new) if !new.trim().is_empty() => {
            let content = accumulate_summary(existing, new.trim());
            let summary = Summary {
                content,
                upto_seq,
                updated_at: platform.clock().now_ms(),
            };
            let saved = platform.store().save_summary(turn.scope(), &summary).await;
            saved.map(|()| summary.content).map_err(|e| e.detail)
        }
        Ok(_) => Err(String::from("the model returned an empty summary")),
        Err(error) => Err(format!("{error}")),
    };
    match result {
        Ok(content) => {
            let n = content.chars().count();
            let msg = format!("Summary updated. New summary length: {n} characters");
            step(logger, conversation_id, "9.4", &msg);
            if config.auto_compress {
                compress(config, platform, turn).await;
            }
        }
        Err(detail) => logger.log(&LogRecord::Warning {
            conversation_id,
            code: "summary_not_updated",
            detail: &detail,
        }),
    }
}

/// The optional compression after a summary update (`auto_compress`): messages older than
/// the recent window leave memory once the conversation holds more than
/// [`SUMMARIZE_THRESHOLD`]. Best effort, like the summary.
async fn compress<P: Platform>(config: &GuardedConfig, platform: &P, turn: &Turn<'_>) {
    let compressed = platform
        .store()
        .compress_messages(
            turn.scope(),
            KEEP_RECENT_MESSAGES,
            SUMMARIZE_THRESHOLD,
            config.compression_deletes,
        )
        .await;
    let conversation_id = turn.conversation.id.as_str();
    match compressed {
        Ok(0) => {}
        Ok(n) => {
            let msg = format!("Compressed {n} old messages");
            step(platform.logger(), conversation_id, "9.5", &msg);
        }
        Err(error) => platform.logger().log(&LogRecord::Warning {
            conversation_id,
            code: "compression_failed",
            detail: &error.detail,
        }),
    }
}
