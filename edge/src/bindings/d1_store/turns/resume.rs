//! A started turn again: loaded (and claimed) by a retry, reopened by regenerate, or
//! marked failed.

use concierge_core::boundary::{Reopening, TurnResume, TurnStart};
use concierge_core::conversation::{MessageKind, Scope};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::super::{CONVERSATION_SQL, ConversationRow, D1Store, MessageRow, num, service_error};
use super::sql::{
    CLAIM_SQL, DROP_REPLY_SQL, DROP_VOTES_SQL, HISTORY_BEFORE_SQL, LAST_TURN_SQL, MARK_FAILED_SQL,
    REOPEN_SQL, REPLY_SQL, TURN_MESSAGE_SQL,
};
use super::{first_message, mark_path, messages_in, retrievable};

impl D1Store {
    /// One batch: the claim (when asked), the conversation, the visitor's message, the
    /// history before it, what is stored under its reply id, and whether retrieval could
    /// find anything.
    pub(in crate::bindings::d1_store) async fn load_turn(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        claim: Option<&str>,
        window: usize,
    ) -> Result<Option<TurnResume>, ServiceError> {
        let (conversation_id, site_id): (JsValue, JsValue) =
            (scope.conversation_id.into(), scope.site_id.into());
        let base = [conversation_id, site_id, message_id.into()];
        let with = |extra: &[JsValue]| [&base[..], extra].concat();
        let mut statements = Vec::with_capacity(6);
        if let Some(claim) = claim {
            statements.push(self.statement(CLAIM_SQL, &with(&[claim.into(), mark_path()]))?);
        }
        let window = num(window as u64);
        statements.extend([
            self.statement(CONVERSATION_SQL, &base[..2])?,
            self.statement(TURN_MESSAGE_SQL, &base)?,
            self.statement(HISTORY_BEFORE_SQL, &with(std::slice::from_ref(&window)))?,
            self.statement(REPLY_SQL, &base)?,
            self.statement(
                retrievable_sql!(
                    "(SELECT seq - 1 FROM messages \
                     WHERE id = ?4 AND conversation_id = ?1 AND site_id = ?2)"
                ),
                &[base[0].clone(), base[1].clone(), window, base[2].clone()],
            )?,
        ]);
        let results = self.db.batch(statements).await.map_err(service_error)?;
        let skip = usize::from(claim.is_some());
        let [conversation, message, history_rows, reply, retrievable_row] =
            results.get(skip..).unwrap_or_default()
        else {
            return Err(ServiceError::new(
                ServiceErrorKind::Other,
                "D1 batch answered too few results",
            ));
        };
        let conversation = conversation
            .results::<ConversationRow>()
            .map_err(service_error)?
            .into_iter()
            .next();
        let (Some(conversation), Some(message)) = (conversation, first_message(message)?) else {
            return Ok(None);
        };
        let reply_id = message.reply_id.clone().unwrap_or_default();
        Ok(Some(TurnResume {
            start: TurnStart {
                conversation: conversation.into_conversation()?,
                history: messages_in(history_rows)?,
                message: message.into_message()?,
                retrievable: self
                    .retrievable_with(scope, retrievable(retrievable_row)?)
                    .await,
            },
            reply_id,
            reply: first_message(reply)?
                .map(MessageRow::into_message)
                .transpose()?,
        }))
    }

    /// Regenerate's reopening: one read batch (the conversation, its last turn), then one
    /// write batch — the turn moved to `claim` under the same conditions the read found,
    /// then the old reply and its votes deleted only if the move happened — then the turn
    /// loaded as [`load_turn`](Self::load_turn) does.
    pub(in crate::bindings::d1_store) async fn reopen(
        &self,
        scope: Scope<'_>,
        expected: Option<&str>,
        claim: &str,
        window: usize,
    ) -> Result<Option<Reopening>, ServiceError> {
        #[derive(Deserialize)]
        struct LastTurn {
            message_id: String,
            reply_id: Option<String>,
            failed: f64,
            replied: f64,
            last_kind: Option<String>,
        }
        let scoped: [JsValue; 2] = [scope.conversation_id.into(), scope.site_id.into()];
        let read = vec![
            self.statement(CONVERSATION_SQL, &scoped)?,
            self.statement(
                LAST_TURN_SQL,
                &[scoped[0].clone(), scoped[1].clone(), mark_path()],
            )?,
        ];
        let results = self.db.batch(read).await.map_err(service_error)?;
        let [conversation, last, ..] = &results[..] else {
            return Err(ServiceError::new(
                ServiceErrorKind::Other,
                "D1 batch answered too few results",
            ));
        };
        if conversation
            .results::<ConversationRow>()
            .map_err(service_error)?
            .is_empty()
        {
            return Ok(None);
        }
        let Some(last) = last
            .results::<LastTurn>()
            .map_err(service_error)?
            .into_iter()
            .next()
        else {
            return Ok(Some(Reopening::NotLast));
        };
        let reply = last.reply_id.as_deref().filter(|_| last.replied != 0.0);
        if expected.is_some_and(|e| e != last.message_id && Some(e) != reply) {
            return Ok(Some(Reopening::NotLast));
        }
        let fixed = last.last_kind.as_deref().and_then(MessageKind::parse);
        if fixed.is_some_and(MessageKind::is_fixed) {
            return Ok(Some(Reopening::Fixed));
        }
        if reply.is_none() && last.failed == 0.0 {
            return Ok(Some(Reopening::InProgress));
        }
        let old = last
            .reply_id
            .as_deref()
            .map_or(JsValue::NULL, JsValue::from);
        let params = [
            scoped[0].clone(),
            scoped[1].clone(),
            last.message_id.as_str().into(),
            old,
            claim.into(),
        ];
        let mut reopen_params = params.to_vec();
        reopen_params.push(mark_path());
        let write = vec![
            self.statement(REOPEN_SQL, &reopen_params)?,
            self.statement(DROP_VOTES_SQL, &params)?,
            self.statement(DROP_REPLY_SQL, &params)?,
        ];
        let results = self.db.batch(write).await.map_err(service_error)?;
        #[derive(Deserialize)]
        struct Moved {
            #[allow(dead_code)]
            id: String,
        }
        let moved = match results.first() {
            Some(result) => !result.results::<Moved>().map_err(service_error)?.is_empty(),
            None => false,
        };
        if !moved {
            // Another turn or regenerate got there between the read and the write.
            return Ok(Some(Reopening::InProgress));
        }
        let Some(mut resume) = self
            .load_turn(scope, &last.message_id, None, window)
            .await?
        else {
            return Ok(None);
        };
        resume.reply = None;
        Ok(Some(Reopening::Reopened {
            resume: Box::new(resume),
            replaced: reply.map(String::from),
        }))
    }

    pub(in crate::bindings::d1_store) async fn mark_turn_failed(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        reply_id: &str,
        code: &str,
    ) -> Result<(), ServiceError> {
        self.statement(
            MARK_FAILED_SQL,
            &[
                scope.conversation_id.into(),
                scope.site_id.into(),
                message_id.into(),
                reply_id.into(),
                mark_path(),
                code.into(),
            ],
        )?
        .run()
        .await
        .map_err(service_error)?;
        Ok(())
    }
}
