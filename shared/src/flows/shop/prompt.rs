//! Node 4's prompt: persona, forms of address, intent, language, history, retrieved
//! passages — in the seed's order.
//!
//! The system message is
//!
//! ```text
//! <persona, capped at PERSONA_MAX_CHARS>
//!
//! <prompt.address>
//! <prompt.intent with {intent}>
//! <prompt.language>
//!
//! <prompt.passages>            (when retrieval ran and found passages)
//! <reference_data>
//! [1] (<source>: <title>) <text>
//! …
//! </reference_data>
//! <prompt.no_passages>         (when retrieval ran and found none)
//! ```
//!
//! followed by the recent history (complete messages only) and the visitor's message.
//!
//! Passages — knowledge, and earlier visitor messages remembered from this conversation —
//! are text the site's visitors or editors wrote, so they appear only inside the quoted
//! data block ([`DATA_BEGIN`] … [`DATA_END`], titles and texts written with
//! [`push_quoted`]); `prompt.passages` names the markers (`{begin}`, `{end}`) and tells
//! the model the block is data, never instructions.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use super::ShopConfig;
use super::classify::intent_label;
use super::state::ShopState;
use crate::boundary::ChatRequest;
use crate::chat::ChatMessage;
use crate::prompt::{DATA_BEGIN, DATA_END, fill, push_quoted};
use crate::retrieval::PassageSource;

/// The answer request for the state's current message.
pub fn build_request(config: &ShopConfig, state: &ShopState) -> ChatRequest {
    let language = state.preferred_language;
    let texts = config.texts(language);
    let sentence = |key: &str| texts.sentences.get(key);

    let mut system = String::with_capacity(config.turn.persona_max_chars + 512);
    system.push_str(
        texts
            .persona
            .capped(config.turn.persona_max_chars)
            .trim_end(),
    );
    system.push_str("\n\n");
    system.push_str(sentence("prompt.address"));
    system.push('\n');
    system.push_str(&fill(
        sentence("prompt.intent"),
        &[("intent", intent_label(config, language, state.intent))],
    ));
    system.push('\n');
    system.push_str(sentence("prompt.language"));
    system.push('\n');
    if state.retrieval_ran {
        system.push('\n');
        if state.retrieved.is_empty() {
            system.push_str(sentence("prompt.no_passages"));
            system.push('\n');
        } else {
            let markers = [("begin", DATA_BEGIN), ("end", DATA_END)];
            system.push_str(&fill(sentence("prompt.passages"), &markers));
            system.push('\n');
            system.push_str(DATA_BEGIN);
            system.push('\n');
            for (number, passage) in state.retrieved.iter().enumerate() {
                let source = match passage.source {
                    PassageSource::Knowledge => sentence("prompt.source.knowledge"),
                    PassageSource::Conversation => sentence("prompt.source.conversation"),
                };
                let _ = write!(system, "[{}] ({source}", number + 1);
                if let Some(title) = &passage.title {
                    system.push_str(": ");
                    push_quoted(&mut system, title);
                }
                system.push_str(") ");
                push_quoted(&mut system, &passage.text);
                system.push('\n');
            }
            system.push_str(DATA_END);
            system.push('\n');
        }
    }

    let history = state.history_before_current();
    let complete: Vec<_> = history.iter().filter(|m| !m.is_incomplete()).collect();
    let recent = &complete[complete.len().saturating_sub(config.turn.prompt_history)..];
    let mut messages = Vec::with_capacity(recent.len() + 2);
    messages.push(ChatMessage::system(system));
    messages.extend(
        recent
            .iter()
            .map(|m| ChatMessage::new(m.role, m.content.clone())),
    );
    messages.push(ChatMessage::user(state.current_message()));
    ChatRequest {
        messages,
        tools: Vec::new(),
        temperature: config.turn.temperature,
        max_tokens: config.turn.max_tokens,
    }
}
