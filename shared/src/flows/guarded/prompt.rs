//! Steps 10–11 and 14: the guardrail's, the answer's and the summary's requests.

use alloc::format;
use alloc::string::String;
use alloc::vec;

use super::config::GuardedConfig;
use crate::boundary::ChatRequest;
use crate::chat::{ChatMessage, Role};
use crate::conversation::{Language, StoredMessage};

/// The summary block of the prompt (seed, verbatim):
/// `"\n\nTóm tắt cuộc trò chuyện trước:\n{summary}\n"`, `""` without a summary.
pub fn summary_block(language: Language, summary: &str) -> String {
    if summary.trim().is_empty() {
        return String::new();
    }
    match language {
        Language::Vi => format!("\n\nTóm tắt cuộc trò chuyện trước:\n{summary}\n"),
        Language::En => format!("\n\nSummary of the previous conversation:\n{summary}\n"),
    }
}

/// The guardrail's request: its YES/NO prompt as the system message, the question alone as
/// the user's (the seed's guardrail sees only the current message) — or, with
/// [`GuardedConfig::guardrail_with_context`] and a summary, the summary block and then the
/// question.
pub fn guardrail_request(
    config: &GuardedConfig,
    language: Language,
    summary: &str,
    question: &str,
) -> ChatRequest {
    let block = summary_block(language, summary);
    let user = if block.is_empty() {
        String::from(question)
    } else {
        let label = match language {
            Language::Vi => "Câu hỏi hiện tại:",
            Language::En => "Current question:",
        };
        format!(
            "{}

{label} {question}",
            block.trim()
        )
    };
    ChatRequest {
        messages: vec![
            ChatMessage::system(config.texts(language).guardrail.clone()),
            ChatMessage::user(user),
        ],
        tools: vec![],
        temperature: Some(0.0),
        max_tokens: Some(8),
    }
}

/// What the answer's prompt is built from.
#[derive(Debug, Clone, Copy)]
pub struct PromptParts<'a> {
    /// The turn's language.
    pub language: Language,
    /// The accumulated summary (`""`: none).
    pub summary: &'a str,
    /// The recent messages, oldest first (at most [`KEEP_RECENT_MESSAGES`](super::KEEP_RECENT_MESSAGES)).
    pub recent: &'a [StoredMessage],
    /// The visitor's question.
    pub question: &'a str,
    /// The search results text (`Title:` / `Content:` / `Link:`).
    pub results: &'a str,
}

/// The answer's request (decision §4.6.13: a system message, then one user message holding
/// the built prompt): the role and format rules; the summary block; the recent messages;
/// the question; the search results.
pub fn answer_request(config: &GuardedConfig, parts: PromptParts<'_>) -> ChatRequest {
    let texts = config.texts(parts.language);
    let label = |key: &str| texts.sentences.get(key);
    let mut prompt = summary_block(parts.language, parts.summary);
    if !parts.recent.is_empty() {
        prompt.push_str(&format!("\n{}\n", label("prompt.recent")));
        for message in parts.recent {
            let who = match message.role {
                Role::User => label("prompt.user"),
                _ => label("prompt.assistant"),
            };
            prompt.push_str(&format!("{who}: {}\n", message.content.trim()));
        }
    }
    prompt.push_str(&format!(
        "\n{}\n{}\n",
        label("prompt.question"),
        parts.question
    ));
    let results = if parts.results.trim().is_empty() {
        label("prompt.no_results")
    } else {
        parts.results
    };
    prompt.push_str(&format!("\n{}\n{results}\n", label("prompt.search")));
    ChatRequest {
        messages: vec![
            ChatMessage::system(texts.system.clone()),
            ChatMessage::user(prompt),
        ],
        tools: vec![],
        temperature: config.turn.temperature,
        max_tokens: config.turn.max_tokens,
    }
}

/// The summarise request (the seed's `get_summarize_response_prompt(question, response,
/// language)`): the question and the answer (without its sources list).
pub fn summarize_request(
    config: &GuardedConfig,
    language: Language,
    question: &str,
    answer: &str,
) -> ChatRequest {
    let texts = config.texts(language);
    let label = |key: &str| texts.sentences.get(key);
    let content = format!(
        "{} {question}\n\n{} {answer}",
        label("summarize.question"),
        label("summarize.answer")
    );
    ChatRequest {
        messages: vec![
            ChatMessage::system(texts.summarize.clone()),
            ChatMessage::user(content),
        ],
        tools: vec![],
        temperature: Some(0.2),
        max_tokens: Some(200),
    }
}

/// The length of a request's prompt, in characters (the step-7.4 log line).
pub fn prompt_chars(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .map(|m| m.content.chars().count())
        .sum()
}
