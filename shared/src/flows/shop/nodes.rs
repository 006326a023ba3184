//! What each node of the `shop` graph does (seed 000, "Nodes").

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::classify::{Context, analyze, clarify_attempts, previous_user_messages};
use super::intent_model::{self, Verdict};
use super::prompt::build_request;
use super::state::ShopState;
use super::warranty::{STEP_KEY, WarrantyStep, awaiting_serial};
use super::{ShopConfig, ShopNode};
use crate::agent::with_timeout;
use crate::boundary::{LogRecord, WarrantyRecords};
use crate::conversation::{MessageKind, Metadata, StoredMessage};
use crate::engine::{self, Platform, Turn, store_reply, stream_answer};
use crate::error::Error;
use crate::graph::Flow;
use crate::intent::{ClassificationLog, confidence_json};
use crate::prompt::fill;
use crate::retrieval::retrieve;
use crate::turn::TurnEvent;

/// The `shop` flow for one turn: the platform, the site's warranty records and config, and
/// the engine's turn.
pub(crate) struct ShopFlow<'a, 't, P, R> {
    pub(crate) platform: &'a P,
    pub(crate) records: &'a R,
    pub(crate) config: &'a ShopConfig,
    pub(crate) turn: &'a mut Turn<'t>,
}

impl<P: Platform, R: WarrantyRecords> Flow for ShopFlow<'_, '_, P, R> {
    type Node = ShopNode;
    type State = ShopState;
    type Error = Error;

    async fn run_node(&mut self, node: ShopNode, state: &mut ShopState) -> Result<(), Error> {
        match node {
            ShopNode::Classify => self.classify(state).await,
            ShopNode::ClarifyStream => self.clarify_stream(state).await,
            ShopNode::WarrantyStream => self.warranty_stream(state).await,
            ShopNode::Retrieve => self.retrieve(state).await,
            ShopNode::RespondStream => self.respond_stream(state).await,
        }
    }
}

impl<P: Platform, R: WarrantyRecords> ShopFlow<'_, '_, P, R> {
    /// Node 2: intent, confidence, retrieval hint, clarify questions, serial; one log line.
    /// What the rules leave uncertain goes to the model, within its timeout (issue 48).
    async fn classify(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let history = state.history_before_current();
        let previous = previous_user_messages(history, 3);
        let context = Context {
            language: state.preferred_language,
            previous: &previous,
            awaiting_serial: awaiting_serial(history),
            clarify_attempts: clarify_attempts(history),
        };
        let mut analysis = analyze(self.config, state.current_message(), context);
        if analysis.ask_model {
            let request = intent_model::request(state.current_message());
            let call = intent_model::call(&request);
            let replied = with_timeout(
                self.platform.timer(),
                self.config.intent_model_timeout_ms,
                engine::complete(self.platform.model(), &call),
            )
            .await;
            let verdict = match replied {
                Some(Ok(text)) => Verdict::Reply(text),
                Some(Err(_)) => Verdict::Failed,
                None => Verdict::TimedOut,
            };
            intent_model::apply(&mut analysis, &verdict);
        }
        let by = analysis.decided_by_model.then_some("model");
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
            by,
        };
        self.platform.logger().log(&LogRecord::Classification(&log));
        Ok(())
    }

    /// Early exit: stream the first clarifying question, store it as `clarify`.
    async fn clarify_stream(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let question = state.clarify_questions.first().cloned().unwrap_or_default();
        self.turn.sink.emit(TurnEvent::Chunk {
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
            .store(state, MessageKind::Clarify, question, metadata)
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
                    .records
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
        self.turn.sink.emit(TurnEvent::Chunk { text: text.clone() });
        let reply = self
            .store(state, MessageKind::Warranty, text, metadata)
            .await?;
        state.reply = Some(reply);
        Ok(())
    }

    /// Node 3: top-K over the site's knowledge and this conversation's memory, re-ranked.
    /// A failing index degrades to no passages (logged), never to a failed turn.
    async fn retrieve(&mut self, state: &mut ShopState) -> Result<(), Error> {
        state.retrieval_ran = true;
        let in_history: Vec<&str> = state.chat_history.iter().map(|m| m.id.as_str()).collect();
        let (embedder, index) = (self.platform.embedder(), self.platform.index());
        let found = retrieve(
            embedder,
            index,
            state.scope(),
            state.current_message(),
            &self.config.turn.retrieval,
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
                self.platform.logger().log(&warning);
            }
        }
        Ok(())
    }

    /// Node 4: build the prompt, stream the model's answer, store it (the engine's
    /// streamed-answer step: a failure keeps the visitor's message stored, and any partial
    /// text a visitor saw is stored as incomplete).
    async fn respond_stream(&mut self, state: &mut ShopState) -> Result<(), Error> {
        let request = build_request(self.config, state);
        let mut metadata = self.intent_metadata(state);
        if state.retrieval_ran {
            let ids: Vec<Value> = state
                .retrieved
                .iter()
                .map(|p| Value::String(p.id.clone()))
                .collect();
            metadata.insert("passages".into(), ids.into());
        }
        let streamed = stream_answer(self.platform, self.turn, &request, metadata).await?;
        state.usage = streamed.usage;
        state.chat_history.push(streamed.reply.clone());
        state.reply = Some(streamed.reply);
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

    /// Stores this turn's fixed-sentence reply (the engine's step: the reply takes its
    /// position now; the embedding policy decides what is queued).
    async fn store(
        &mut self,
        state: &mut ShopState,
        kind: MessageKind,
        content: String,
        metadata: Metadata,
    ) -> Result<StoredMessage, Error> {
        let message = store_reply(
            self.platform,
            self.turn,
            kind,
            content,
            metadata,
            Vec::new(),
        )
        .await?;
        state.chat_history.push(message.clone());
        Ok(message)
    }
}
