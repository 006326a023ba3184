//! Turns in D1: message inserts that take their `seq` in the statement, the visitor's
//! message's turn (its reply id and idempotency key, `migrations/0006_turns.sql`), claims
//! of a turn by a retry, and failure marks. Every statement is bound and names its site.
//!
//! [`sql`] holds the statements, [`open`] starts a turn or reads its context, [`resume`]
//! loads, reopens and marks one; this file inserts messages and reads batch results.

use concierge_core::boundary::TurnContext;
use concierge_core::conversation::{ANSWER_FAILED, Scope, StoredMessage, embedding_policy};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1PreparedStatement, D1Result};

use super::{ConversationRow, D1Store, MessageRow, num, role_str, service_error};
use sql::CLEAR_MARK_SQL;

mod sql;

/// Whether this conversation's own vectors could be found: those older than the `?3`
/// messages before `$anchor` (an SQL expression for a `seq`). The site's knowledge is the
/// site's, asked apart ([`D1Store::retrievable_with`]).
macro_rules! retrievable_sql {
    ($anchor:literal) => {
        concat!(
            "SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND site_id = ?2 \
             AND chunk_count > 0 AND seq <= ",
            $anchor,
            " - ?3) AS retrievable"
        )
    };
}

/// Whether retrieval could find anything as the conversation stands (its newest message
/// as the anchor), for a window of `?3` messages.
const RETRIEVABLE_NOW_SQL: &str = retrievable_sql!(
    "(SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?1 AND site_id = ?2)"
);

/// The JSON path of the failure mark in a message's metadata.
fn mark_path() -> JsValue {
    format!("$.{ANSWER_FAILED}").into()
}

/// The guarded message `INSERT`: its `seq` is the conversation's next, taken in the
/// statement (so concurrent turns never collide), and nothing is inserted unless the
/// conversation exists on this site and `$guard` holds. Answers the `seq` it took.
macro_rules! insert_message_sql {
    ($guard:literal) => {
        concat!(
            "INSERT INTO messages (id, site_id, conversation_id, seq, role, kind, content, \
             metadata, embedding_status, created_at, reply_id, idempotency_key, tool_steps, payloads) \
             SELECT ?1, ?2, ?3, COALESCE((SELECT MAX(seq) FROM messages \
             WHERE conversation_id = ?3 AND site_id = ?2), 0) + 1, \
             ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13, ?14 \
             WHERE EXISTS (SELECT 1 FROM conversations WHERE id = ?3 AND site_id = ?2)",
            $guard,
            " RETURNING seq"
        )
    };
}

/// Which message is inserted, and so which guard it passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Insert<'a> {
    /// Any message (the greeting).
    Plain,
    /// A visitor's message starting a turn: unless its idempotency key is used already.
    Visitor {
        reply_id: &'a str,
        idempotency_key: Option<&'a str>,
    },
    /// A turn's reply: only while the visitor's message `reply_to` is to be answered
    /// under the reply's id.
    Reply { reply_to: &'a str },
}

impl D1Store {
    /// The guarded `INSERT` of `message` into its conversation.
    fn insert_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
        insert: Insert<'_>,
    ) -> Result<D1PreparedStatement, ServiceError> {
        let metadata = serde_json::to_string(&message.metadata)
            .map_err(|e| ServiceError::new(ServiceErrorKind::Invalid, e.to_string()))?;
        // The one embedding policy: the engine queues exactly the `pending` ones.
        let embedding = super::status_str(embedding_policy(message));
        let optional = |value: Option<&str>| value.map_or(JsValue::NULL, JsValue::from);
        // `?13`: the reply's tool rounds (migration 0009), `NULL` without tools.
        let tool_steps = json_or_null(&message.tool_steps)?;
        // `?14`: the reply's payloads (migration 0010), `NULL` without any.
        let payloads = json_or_null(&message.payloads)?;
        let mut params = vec![
            message.id.as_str().into(),
            scope.site_id.into(),
            scope.conversation_id.into(),
            role_str(message.role).into(),
            message.kind.as_str().into(),
            message.content.as_str().into(),
            metadata.into(),
            embedding.into(),
            num(message.created_at),
        ];
        let sql = match insert {
            Insert::Plain => {
                params.extend([JsValue::NULL, JsValue::NULL, JsValue::NULL, tool_steps]);
                insert_message_sql!("")
            }
            Insert::Visitor {
                reply_id,
                idempotency_key,
            } => {
                params.extend([
                    reply_id.into(),
                    optional(idempotency_key),
                    JsValue::NULL,
                    tool_steps,
                ]);
                insert_message_sql!(
                    " AND (?11 IS NULL OR NOT EXISTS (SELECT 1 FROM messages \
                     WHERE conversation_id = ?3 AND idempotency_key = ?11))"
                )
            }
            Insert::Reply { reply_to } => {
                params.extend([JsValue::NULL, JsValue::NULL, reply_to.into(), tool_steps]);
                insert_message_sql!(
                    " AND EXISTS (SELECT 1 FROM messages WHERE id = ?12 \
                     AND conversation_id = ?3 AND site_id = ?2 AND reply_id = ?1)"
                )
            }
        };
        params.push(payloads);
        self.db.prepare(sql).bind(&params).map_err(service_error)
    }

    /// Marks the conversation as updated at `at`.
    fn touch(&self, scope: Scope<'_>, at: u64) -> Result<D1PreparedStatement, ServiceError> {
        self.db
            .prepare("UPDATE conversations SET updated_at = ?3 WHERE id = ?1 AND site_id = ?2")
            .bind(&[scope.conversation_id.into(), scope.site_id.into(), num(at)])
            .map_err(service_error)
    }

    /// `sql` bound to `params`.
    fn statement(
        &self,
        sql: &str,
        params: &[JsValue],
    ) -> Result<D1PreparedStatement, ServiceError> {
        self.db.prepare(sql).bind(params).map_err(service_error)
    }

    pub(super) async fn store_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        let insert = self.insert_message(scope, message, Insert::Plain)?;
        let touch = self.touch(scope, message.created_at)?;
        let results = self
            .db
            .batch(vec![insert, touch])
            .await
            .map_err(service_error)?;
        inserted_seq(results.first())?.ok_or_else(|| {
            ServiceError::new(
                ServiceErrorKind::Invalid,
                "no such conversation on this site",
            )
        })
    }

    /// One batch (a transaction): the guarded insert, the visitor's failure mark removed
    /// once a complete reply is stored, and the conversation touched. With the context
    /// `staged` by the turn's visitor's message (nothing written since in this isolate),
    /// the batch also reads whether retrieval could find anything, and the context with the
    /// reply is remembered for the next turn (see `remembered`).
    pub(super) async fn store_reply(
        &self,
        scope: Scope<'_>,
        reply_to: &str,
        message: &StoredMessage,
        staged: Option<(usize, TurnContext)>,
    ) -> Result<u64, ServiceError> {
        let insert = self.insert_message(scope, message, Insert::Reply { reply_to })?;
        let clear = self.statement(
            CLEAR_MARK_SQL,
            &[
                scope.conversation_id.into(),
                scope.site_id.into(),
                reply_to.into(),
                message.id.as_str().into(),
                mark_path(),
            ],
        )?;
        let touch = self.touch(scope, message.created_at)?;
        let mut statements = vec![insert, clear, touch];
        if let Some((window, _)) = &staged {
            statements.push(self.statement(
                RETRIEVABLE_NOW_SQL,
                &[
                    scope.conversation_id.into(),
                    scope.site_id.into(),
                    num(*window as u64),
                ],
            )?);
        }
        let results = self.db.batch(statements).await.map_err(service_error)?;
        let seq = inserted_seq(results.first())?.ok_or_else(|| {
            ServiceError::new(
                ServiceErrorKind::Conflict,
                "the turn is no longer answered under this id, or the conversation is gone",
            )
        })?;
        if let (Some((window, context)), Some(row)) = (staged, results.get(3)) {
            let mut after = super::remembered::appended(context, message, seq, window);
            after.retrievable = self.retrievable_with(scope, retrievable(row)?).await;
            super::remembered::remember(scope, window, &after);
        }
        Ok(seq)
    }
}

// After `retrievable_sql!` and `insert_message_sql!`, which they use.
mod open;
mod resume;

/// A turn's context from the results of [`D1Store::context_statements`] (the first three
/// of `results`); `None` when the conversation does not exist on this site.
fn context_in(results: &[D1Result]) -> Result<Option<TurnContext>, ServiceError> {
    let [conversation, history_rows, retrievable_row, ..] = results else {
        return Err(ServiceError::new(
            ServiceErrorKind::Other,
            "D1 batch answered too few results",
        ));
    };
    let Some(conversation) = conversation
        .results::<ConversationRow>()
        .map_err(service_error)?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    Ok(Some(TurnContext {
        conversation: conversation.into_conversation()?,
        history: messages_in(history_rows)?,
        retrievable: retrievable(retrievable_row)?,
    }))
}

/// The `seq` an `INSERT … RETURNING seq` took; `None` when its guard kept it out.
fn inserted_seq(result: Option<&D1Result>) -> Result<Option<u64>, ServiceError> {
    #[derive(Deserialize)]
    struct Row {
        seq: f64,
    }
    let Some(result) = result else {
        return Ok(None);
    };
    let rows = result.results::<Row>().map_err(service_error)?;
    Ok(rows.first().map(|r| r.seq as u64))
}

/// The first row of `result` as a stored message.
fn first_message(result: &D1Result) -> Result<Option<MessageRow>, ServiceError> {
    Ok(result
        .results::<MessageRow>()
        .map_err(service_error)?
        .into_iter()
        .next())
}

/// `result`'s rows (newest first) as messages, oldest first.
fn messages_in(result: &D1Result) -> Result<Vec<StoredMessage>, ServiceError> {
    let mut history = result
        .results::<MessageRow>()
        .map_err(service_error)?
        .into_iter()
        .map(MessageRow::into_message)
        .collect::<Result<Vec<_>, _>>()?;
    history.reverse();
    Ok(history)
}

/// The answer of a `retrievable_sql!` statement (`true` when unknown).
fn retrievable(result: &D1Result) -> Result<bool, ServiceError> {
    #[derive(Deserialize)]
    struct Row {
        retrievable: f64,
    }
    Ok(result
        .results::<Row>()
        .map_err(service_error)?
        .first()
        .is_none_or(|r| r.retrievable != 0.0))
}

/// A list as a JSON column value, `NULL` when empty.
fn json_or_null<T: serde::Serialize>(items: &[T]) -> Result<JsValue, ServiceError> {
    if items.is_empty() {
        return Ok(JsValue::NULL);
    }
    serde_json::to_string(items)
        .map(JsValue::from)
        .map_err(|e| ServiceError::new(ServiceErrorKind::Invalid, e.to_string()))
}
