//! Starting a turn: the visitor's message inserted with the turn's context read in the
//! same batch, or that context alone (remembered in this isolate).

use concierge_core::boundary::{NewTurn, TurnContext, TurnOpening, TurnStart};
use concierge_core::conversation::Scope;
use concierge_core::error::{ServiceError, ServiceErrorKind};
use wasm_bindgen::JsValue;
use worker::D1PreparedStatement;

use super::super::remembered;
use super::super::{CONVERSATION_SQL, ConversationRow, D1Store, HISTORY_SQL, num, service_error};
use super::sql::REPEATED_SQL;
use super::{
    Insert, RETRIEVABLE_NOW_SQL, context_in, first_message, inserted_seq, messages_in, retrievable,
};

impl D1Store {
    /// One D1 round trip: the conversation, the message already sent with this idempotency
    /// key (if any), the last `window` messages, whether retrieval could find anything, and
    /// the visitor's message appended with the next `seq` — in one batch, which D1 runs as
    /// a transaction.
    pub(in crate::bindings::d1_store) async fn open_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError> {
        let scoped: [JsValue; 2] = [scope.conversation_id.into(), scope.site_id.into()];
        let with = |extra: JsValue| [scoped[0].clone(), scoped[1].clone(), extra];
        let limit = num(window as u64);
        let conversation = self.statement(CONVERSATION_SQL, &scoped)?;
        // Without an idempotency key there is no earlier post to find.
        let repeated = turn
            .idempotency_key
            .map(|key| self.statement(REPEATED_SQL, &with(key.into())))
            .transpose()?;
        let history = self.statement(HISTORY_SQL, &with(limit.clone()))?;
        let retrievable_now = self.statement(RETRIEVABLE_NOW_SQL, &with(limit))?;
        let insert = self.insert_message(
            scope,
            &turn.message,
            Insert::Visitor {
                reply_id: turn.reply_id,
                idempotency_key: turn.idempotency_key,
            },
        )?;
        let touch = self.touch(scope, turn.message.created_at)?;
        let keyed = repeated.is_some();
        let mut statements = Vec::with_capacity(6);
        statements.push(conversation);
        statements.extend(repeated);
        statements.extend([history, retrievable_now, insert, touch]);
        let results = self.db.batch(statements).await.map_err(service_error)?;
        let too_few =
            || ServiceError::new(ServiceErrorKind::Other, "D1 batch answered too few results");
        let (conversation, rest) = results.split_first().ok_or_else(too_few)?;
        let (repeated, rest) = if keyed {
            let (repeated, rest) = rest.split_first().ok_or_else(too_few)?;
            (Some(repeated), rest)
        } else {
            (None, rest)
        };
        let [history_rows, retrievable_row, insert, ..] = rest else {
            return Err(too_few());
        };
        let Some(conversation) = conversation
            .results::<ConversationRow>()
            .map_err(service_error)?
            .into_iter()
            .next()
        else {
            // The insert is guarded by the same condition: nothing was stored.
            return Ok(None);
        };
        if let Some(repeated) = repeated
            && let Some(stored) = first_message(repeated)?
        {
            return Ok(Some(TurnOpening::Repeated(stored.into_message()?)));
        }
        let mut message = turn.message;
        message.seq = inserted_seq(Some(insert))?.ok_or_else(|| {
            ServiceError::new(
                ServiceErrorKind::Other,
                "the visitor's message was not stored",
            )
        })?;
        let start = TurnStart {
            conversation: conversation.into_conversation()?,
            history: messages_in(history_rows)?,
            message,
            retrievable: self
                .retrievable_with(scope, retrievable(retrievable_row)?)
                .await,
        };
        let context = TurnContext {
            conversation: start.conversation.clone(),
            history: start.history.clone(),
            retrievable: start.retrievable,
        };
        let after = remembered::appended(context, &start.message, start.message.seq, window);
        remembered::stage(scope, window, after);
        Ok(Some(TurnOpening::Started(start)))
    }

    /// The statements that read a turn's context: the conversation, its last `window`
    /// messages, and whether retrieval could find anything.
    fn context_statements(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Vec<D1PreparedStatement>, ServiceError> {
        let scoped: [JsValue; 2] = [scope.conversation_id.into(), scope.site_id.into()];
        let windowed = [scoped[0].clone(), scoped[1].clone(), num(window as u64)];
        Ok(vec![
            self.statement(CONVERSATION_SQL, &scoped)?,
            self.statement(HISTORY_SQL, &windowed)?,
            self.statement(RETRIEVABLE_NOW_SQL, &windowed)?,
        ])
    }

    /// One read-only batch: what a turn without an idempotency key starts from, remembered
    /// in this isolate for the conversation's next turn (see [`remembered`](super::super::remembered)).
    pub(in crate::bindings::d1_store) async fn read_context(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError> {
        let statements = self.context_statements(scope, window)?;
        let results = self.db.batch(statements).await.map_err(service_error)?;
        let context = self.with_knowledge(scope, context_in(&results)?).await;
        match &context {
            Some(context) => remembered::remember(scope, window, context),
            None => remembered::forget(scope),
        }
        Ok(context)
    }

    /// One batch: the turn's context as it stands, then the visitor's message (as
    /// [`insert_visitor`](Self::insert_visitor)), so a turn that started from a remembered
    /// context can tell whether it still holds.
    pub(in crate::bindings::d1_store) async fn insert_checked(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<(u64, TurnContext)>, ServiceError> {
        let mut statements = self.context_statements(scope, window)?;
        statements.push(self.insert_message(
            scope,
            &turn.message,
            Insert::Visitor {
                reply_id: turn.reply_id,
                idempotency_key: turn.idempotency_key,
            },
        )?);
        statements.push(self.touch(scope, turn.message.created_at)?);
        let results = self.db.batch(statements).await;
        // The conversation changes either way: its next turn reads it again.
        remembered::forget(scope);
        let results = results.map_err(service_error)?;
        let context = self.with_knowledge(scope, context_in(&results)?).await;
        let seq = inserted_seq(results.get(3))?;
        if let (Some(seq), Some(context)) = (seq, &context) {
            let after = remembered::appended(context.clone(), &turn.message, seq, window);
            remembered::stage(scope, window, after);
        }
        Ok(seq.zip(context))
    }

    /// One batch: the visitor's message (guarded by its conversation's existence) and the
    /// conversation's last activity.
    pub(in crate::bindings::d1_store) async fn insert_visitor(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
    ) -> Result<Option<u64>, ServiceError> {
        let insert = self.insert_message(
            scope,
            &turn.message,
            Insert::Visitor {
                reply_id: turn.reply_id,
                idempotency_key: turn.idempotency_key,
            },
        )?;
        let touch = self.touch(scope, turn.message.created_at)?;
        let results = self
            .db
            .batch(vec![insert, touch])
            .await
            .map_err(service_error)?;
        inserted_seq(results.first())
    }
}
