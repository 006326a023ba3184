//! A `/v1/chat/completions` turn on a stored conversation, answered by its object in
//! OpenAI's format ([`Format::OpenAi`](super::client::Format::OpenAi)): streamed as
//! `chat.completion.chunk`s (every chunk naming the conversation, `chat_id`), or one
//! `chat.completion` once the turn is over — the same bytes the Worker answered before
//! the turn went through the object. The turn's events go to the object's log like any
//! turn's (numbered, kept, seen live on `GET …/events`).

use concierge_core::engine::TurnOutcome;
use concierge_core::error::Error;
use concierge_core::openai_api::ChatCompletion;
use concierge_core::stream::TurnEncoder;
use concierge_core::stream::openai_out::OpenAiChunkEncoder;
use serde::{Deserialize, Serialize};
use worker::Response;

use crate::error::ApiError;

/// How a `/v1/chat/completions` turn is answered.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OpenAiAnswer {
    /// `chat.completion.chunk`s, else one `chat.completion`.
    pub stream: bool,
    /// The stream ends with a usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    pub completion_id: String,
    pub model: String,
    /// Seconds.
    pub created: u64,
    /// The request's body, for the template's own fields (`openai_request`).
    pub raw: serde_json::Value,
}

impl OpenAiAnswer {
    /// The stream's encoder, for a turn of conversation `chat_id`.
    pub(crate) fn encoder(&self, chat_id: &str) -> OpenAiChunkEncoder {
        OpenAiChunkEncoder::new(self.completion_id.clone(), self.model.clone(), self.created)
            .include_usage(self.include_usage)
            .with_chat_id(Some(chat_id.to_string()))
    }

    /// The stream's end when the object's stream broke (the object was reset): the
    /// interruption's error chunk, then `[DONE]`.
    pub(crate) fn interrupted(&self) -> String {
        let mut encoder =
            OpenAiChunkEncoder::new(self.completion_id.clone(), self.model.clone(), self.created);
        let mut out = String::new();
        let _ = encoder.encode(&super::log::interrupted(), &mut out);
        out
    }

    /// The `chat.completion` of a turn of conversation `chat_id` that started; its
    /// failure, after the visitor's message was stored, tells clients not to retry.
    pub(crate) fn completion(
        &self,
        result: Result<TurnOutcome, Error>,
        chat_id: &str,
    ) -> Result<Response, ApiError> {
        let outcome = result.map_err(|e| ApiError::AfterStore(Box::new(ApiError::from(e))))?;
        let completion = ChatCompletion::of(
            &outcome,
            &self.completion_id,
            &self.model,
            self.created,
            Some(chat_id),
        );
        Ok(Response::from_json(&completion)?)
    }
}
