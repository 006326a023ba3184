//! What each node of the `shop` graph does (seed 000, "Nodes").

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::classify::{Context, analyze, clarify_attempts, previous_user_messages};
use super::prompt::build_request;
use super::state::ShopState;
use super::warranty::{STEP_KEY, WarrantyStep, awaiting_serial};
use super::{ShopConfig, ShopNode, ShopServices};
use crate::boundary::{
    ChatModel, ConversationStore, Embedder, LogRecord, VectorIndex, WarrantyRecords,
};
use crate::chat::{ChatEvent, FinishReason, UpstreamError};
use crate::conversation::{EmbedJob, MessageKind, Metadata, Role, StoredMessage};
use crate::error::{ChatModelError, ChatModelErrorKind, Error};
use crate::graph::Flow;
use crate::intent::{ClassificationLog, confidence_json};
use crate::prompt::fill;
use crate::retrieval::retrieve;
use crate::turn::{TurnEvent, TurnSink};

/// The `shop` flow for one turn: the services, the site's config, and the turn's sink.
pub(crate) struct ShopFlow<'a, 'k, M, S, E, V, W> {
    pub(crate) services: &'a ShopServices<'a, M, S, E, V, W>,
    pub(crate) config: &'a ShopConfig,
    pub(crate) sink: &'k mut dyn TurnSink,
    /// Store the text streamed before a model failure (marked incomplete): a streamed
    /// turn's visitor saw it; nobody saw a background attempt's.
    pub(crate) keep_partial: bool,
}

impl<M, S, E, V, W> Flow for ShopFlow<'_, '_, M, S, E, V, W>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    type Node = ShopNode;
    type State = ShopState;
    type Error = Error;

    async fn run_node(&mut self, node: ShopNode, state: &mut ShopState) -> Result<(), Error> {
        match node {
            ShopNode::Classify => self.classify(state),
            ShopNode::ClarifyStream => self.clarify_stream(state).await,
            ShopNode::WarrantyStream => self.warranty_stream(state).await,
            ShopNode::Retrieve => self.retrieve(state).await,
            ShopNode::RespondStream => self.respond_stream(state).await,
        }
    }
}

impl<M, S, E, V, W> ShopFlow<'_, '_, M, S, E, V, W>
where
    M: ChatModel,
    S: ConversationStore,
    E: Embedder,
    V: VectorIndex,
    W: WarrantyRecords,
{
    /// Node 2: intent, confidence, retrieval hint, clarify questions, serial; one log line.
    fn classify(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let history = state.history_before_current();
        let previous = previous_user_messages(history, 3);
        let context = Context {
            language: state.preferred_language,
            previous: &previous,
            awaiting_serial: awaiting_serial(history),
            clarify_attempts: clarify_attempts(history),
        };
        let analysis = analyze(self.config, state.current_message(), context);
        state.intent = analysis.intent;
        state.intent_confidence = analysis.confidence;
        state.need_retrieval_hint = analysis.need_retrieval_hint;
        state.warranty_check = analysis.warranty_check;
        state.clarify_questions = analysis.clarify_questions;
        state.clarify_attempts = analysis.clarify_attempts;
        state.awaiting_serial = analysis.awaiting_serial;
        state.serial = analysis.serial;
        state.rationale = analysis.rationale;
        let log = ClassificationLog {
            intent: state.intent,
            confidence: state.intent_confidence,
            need_retrieval: state.need_retrieval_hint,
            clarify_needed: state.clarify_needed(),
            first_clarify_question: state.clarify_questions.first().cloned(),
            conversation_id: state.conversation_id.clone(),
            user_id: state.user_id.clone(),
        };
        self.services.logger.log(&LogRecord::Classification(&log));
        Ok(())
    }

    /// Early exit: stream the first clarifying question, store it as `clarify`.
    async fn clarify_stream(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let question = state.clarify_questions.first().cloned().unwrap_or_default();
        self.sink.emit(TurnEvent::Chunk {
            text: question.clone(),
        });
        let mut metadata = self.intent_metadata(state);
        metadata.insert(
            "clarify_attempts".into(),
            (state.clarify_attempts + 1).into(),
        );
        metadata.insert(
            "clarify_questions".into(),
            state.clarify_questions.clone().into(),
        );
        let reply = self
            .store(state, MessageKind::Clarify, question, metadata, true)
            .await?;
        state.reply = Some(reply);
        Ok(())
    }

    /// Early exit: ask for the serial, remind its rule, or answer the lookup — with the
    /// seed's exact sentences.
    async fn warranty_stream(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let language = state.preferred_language;
        let sentence = |key: &str| self.config.sentence(language, key);
        let mut metadata = self.intent_metadata(state);
        let (step, text) = match &state.serial {
            Some(serial) => {
                metadata.insert("serial".into(), serial.clone().into());
                let record = self
                    .services
                    .warranty
                    .find_warranty(&state.site_id, serial)
                    .await
                    .map_err(Error::Records)?;
                match record {
                    Some(record) => {
                        let date = record.warranty_until.display(language);
                        let values = [
                            ("product", record.product.as_str()),
                            ("serial", &record.serial),
                            ("date", &date),
                        ];
                        metadata.insert("product".into(), record.product.clone().into());
                        metadata
                            .insert("warranty_until".into(), record.warranty_until.iso().into());
                        (
                            WarrantyStep::Found,
                            fill(sentence("warranty.found"), &values),
                        )
                    }
                    None => (
                        WarrantyStep::NotFound,
                        sentence("warranty.not_found").into(),
                    ),
                }
            }
            None if state.awaiting_serial => (
                WarrantyStep::RemindRule,
                sentence("warranty.remind_rule").into(),
            ),
            None => (
                WarrantyStep::AskSerial,
                sentence("warranty.ask_serial").into(),
            ),
        };
        metadata.insert(STEP_KEY.into(), step.as_str().into());
        self.sink.emit(TurnEvent::Chunk { text: text.clone() });
        let reply = self
            .store(state, MessageKind::Warranty, text, metadata, true)
            .await?;
        state.reply = Some(reply);
        Ok(())
    }

    /// Node 3: top-K over the site's knowledge and this conversation's memory, re-ranked.
    /// A failing index degrades to no passages (logged), never to a failed turn.
    async fn retrieve(&mut self, state: &mut ShopState) -> Result<(), Error> {
        state.retrieval_ran = true;
        let in_history: Vec<&str> = state.chat_history.iter().map(|m| m.id.as_str()).collect();
        let (embedder, index) = (self.services.embedder, self.services.index);
        let found = retrieve(
            embedder,
            index,
            state.scope(),
            state.current_message(),
            &self.config.retrieval,
            &in_history,
        )
        .await;
        match found {
            Ok(passages) => state.retrieved = passages,
            Err(error) => {
                let detail = error.to_string();
                let warning = LogRecord::Warning {
                    conversation_id: &state.conversation_id,
                    code: error.code(),
                    detail: &detail,
                };
                self.services.logger.log(&warning);
            }
        }
        Ok(())
    }

    /// Node 4: build the prompt, stream the model's answer, store it.
    ///
    /// If the model fails, the visitor's message stays stored; any partial text a visitor
    /// saw is stored with metadata `incomplete: true` and `error` (and is left out of later
    /// prompts), and the turn fails.
    async fn respond_stream(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let request = build_request(self.config, state);
        let mut answer = String::new();
        let mut upstream: Option<UpstreamError> = None;
        let mut finish: Option<FinishReason> = None;
        let mut usage = None;
        let sink = &mut *self.sink;
        let mut on_event = |event: ChatEvent| match event {
            ChatEvent::Finish {
                reason,
                usage: reported,
            } => {
                finish = Some(reason);
                usage = reported;
            }
            ChatEvent::TextDelta(text) if upstream.is_none() && !text.is_empty() => {
                answer.push_str(&text);
                sink.emit(TurnEvent::Chunk { text });
            }
            ChatEvent::Error(error) if upstream.is_none() => upstream = Some(error),
            _ => {}
        };
        let streamed = self.services.model.stream(&request, &mut on_event).await;
        state.usage = usage;
        let failure = match (streamed, upstream) {
            (Err(error), _) => Some(Error::ChatModel(error)),
            (Ok(()), Some(error)) => {
                let code = error.code.unwrap_or_default();
                Some(Error::ChatModel(ChatModelError::new(
                    ChatModelErrorKind::Upstream,
                    format!("{code}: {}", error.message),
                )))
            }
            (Ok(()), None) if answer.trim().is_empty() => Some(Error::EmptyAnswer),
            (Ok(()), None) => None,
        };
        let mut metadata = self.intent_metadata(state);
        if state.retrieval_ran {
            let ids: Vec<Value> = state
                .retrieved
                .iter()
                .map(|p| Value::String(p.id.clone()))
                .collect();
            metadata.insert("passages".into(), ids.into());
        }
        if let Some(reason) = finish.filter(|reason| *reason != FinishReason::Stop) {
            // E.g. `length`: the answer was cut by the token limit.
            metadata.insert(
                "finish_reason".into(),
                serde_json::to_value(reason).unwrap_or_default(),
            );
        }
        if let Some(error) = failure {
            if !answer.is_empty() && self.keep_partial {
                metadata.insert("incomplete".into(), true.into());
                metadata.insert("error".into(), error.code().into());
                // Best effort: the turn fails with the model's error whatever happens here.
                let _ = self
                    .store(state, MessageKind::Answer, answer, metadata, false)
                    .await;
            }
            return Err(error);
        }
        let reply = self
            .store(state, MessageKind::Answer, answer, metadata, true)
            .await?;
        state.reply = Some(reply);
        Ok(())
    }

    fn intent_metadata(&self, state: &ShopState) -> Metadata {
        let mut metadata = Metadata::new();
        metadata.insert("intent".into(), state.intent.as_str().into());
        metadata.insert(
            "confidence".into(),
            confidence_json(state.intent_confidence),
        );
        metadata
    }

    /// Stores this turn's reply (and queues its embedding when `embed`). Its position in
    /// the conversation is taken now, so turns running at once in the conversation each
    /// store theirs; a retry that superseded this attempt makes it a conflict.
    async fn store(
        &mut self,
        state: &mut ShopState,
        kind: MessageKind,
        content: String,
        metadata: Metadata,
        embed: bool,
    ) -> Result<StoredMessage, Error> {
        let mut message = StoredMessage {
            id: state.reply_id.clone(),
            seq: 0,
            role: Role::Assistant,
            kind,
            content,
            metadata,
            created_at: self.services.clock.now_ms(),
            tool_steps: Vec::new(),
        };
        message.seq = self
            .services
            .store
            .append_reply(state.scope(), &state.user_message_id, &message)
            .await
            .map_err(Error::Store)?;
        if embed {
            self.services.queue.enqueue(EmbedJob {
                site_id: state.site_id.clone(),
                conversation_id: state.conversation_id.clone(),
                message_id: message.id.clone(),
                text: message.content.clone(),
            });
        }
        state.chat_history.push(message.clone());
        Ok(message)
    }
}
