//! Turns in D1: message inserts that take their `seq` in the statement, the visitor's
//! message's turn (its reply id and idempotency key, `migrations/0006_turns.sql`), claims
//! of a turn by a retry, and failure marks. Every statement is bound and names its site.

use concierge_core::boundary::{
    NewTurn, Reopening, TurnContext, TurnOpening, TurnResume, TurnStart,
};
use concierge_core::conversation::{ANSWER_FAILED, Scope, StoredMessage, embedding_policy};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1PreparedStatement, D1Result};

use super::{
    CONVERSATION_SQL, ConversationRow, D1Store, HISTORY_SQL, MessageRow, num, role_str,
    service_error,
};

/// The visitor's message with idempotency key `?3` (none when `?3` is NULL).
const REPEATED_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 AND idempotency_key = ?3"
);

/// The visitor's message `?3`.
const TURN_MESSAGE_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND role = 'user'"
);

/// The last `?4` messages before the message `?3`.
const HISTORY_BEFORE_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 AND seq < \
     (SELECT seq FROM messages WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2) \
     ORDER BY seq DESC LIMIT ?4"
);

/// What is stored under the reply id of the message `?3`.
const REPLY_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 AND id = \
     (SELECT reply_id FROM messages WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2)"
);

/// No complete reply is stored under `$reply` (an SQL expression).
macro_rules! unanswered {
    ($reply:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM messages AS r WHERE r.id = ",
            $reply,
            " AND r.conversation_id = ?1 AND COALESCE(json_extract(r.metadata, '$.incomplete'), 0) = 0)"
        )
    };
}

/// Moves the visitor's message `?3`'s turn to reply id `?4` and removes its failure mark
/// (JSON path `?5`), unless a complete reply is stored under its current reply id.
const CLAIM_SQL: &str = concat!(
    "UPDATE messages SET reply_id = ?4, metadata = json_remove(metadata, ?5) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND role = 'user' AND ",
    unanswered!("messages.reply_id")
);

/// Marks the visitor's message `?3` (JSON path `?5` = code `?6`) while its turn is reply
/// `?4`'s and unanswered.
const MARK_FAILED_SQL: &str = concat!(
    "UPDATE messages SET metadata = json_set(metadata, ?5, ?6) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND reply_id = ?4 AND ",
    unanswered!("?4")
);

/// Removes the failure mark (JSON path `?5`) of the visitor's message `?3` once a complete
/// reply is stored under its reply id `?4`.
const CLEAR_MARK_SQL: &str = concat!(
    "UPDATE messages SET metadata = json_remove(metadata, ?5) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND reply_id = ?4 AND NOT ",
    unanswered!("?4")
);

/// The conversation's last visitor's message: its id, its reply id, whether it is marked
/// failed (JSON path `?3`) and whether a message (complete or partial) is stored under its
/// reply id.
const LAST_TURN_SQL: &str = "SELECT u.id AS message_id, u.reply_id AS reply_id, \
     json_extract(u.metadata, ?3) IS NOT NULL AS failed, \
     EXISTS (SELECT 1 FROM messages AS r WHERE r.id = u.reply_id AND r.conversation_id = ?1 \
     AND r.site_id = ?2) AS replied \
     FROM messages AS u WHERE u.conversation_id = ?1 AND u.site_id = ?2 AND u.role = 'user' \
     ORDER BY u.seq DESC LIMIT 1";

/// Moves the visitor's message `?3`'s turn from reply id `?4` to `?5` and removes its
/// failure mark (JSON path `?6`), only while the turn is settled (a message is stored
/// under `?4`, or it is marked failed) and nothing but that reply follows it.
const REOPEN_SQL: &str = "UPDATE messages SET reply_id = ?5, metadata = json_remove(metadata, ?6) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND role = 'user' \
     AND reply_id IS ?4 \
     AND (json_extract(metadata, ?6) IS NOT NULL OR EXISTS (SELECT 1 FROM messages AS r \
     WHERE r.id = ?4 AND r.conversation_id = ?1 AND r.site_id = ?2)) \
     AND NOT EXISTS (SELECT 1 FROM messages AS o WHERE o.conversation_id = ?1 \
     AND o.site_id = ?2 AND o.seq > messages.seq AND o.id IS NOT ?4) \
     RETURNING id";

/// The votes on the replaced reply `?4`, once the turn of `?3` is `?5`'s.
const DROP_VOTES_SQL: &str = "DELETE FROM message_feedback WHERE message_id = ?4 \
     AND conversation_id = ?1 AND site_id = ?2 AND EXISTS (SELECT 1 FROM messages AS u \
     WHERE u.id = ?3 AND u.conversation_id = ?1 AND u.site_id = ?2 AND u.reply_id = ?5)";

/// The replaced reply `?4`, once the turn of `?3` is `?5`'s.
const DROP_REPLY_SQL: &str = "DELETE FROM messages WHERE id = ?4 AND conversation_id = ?1 \
     AND site_id = ?2 AND role = 'assistant' AND EXISTS (SELECT 1 FROM messages AS u \
     WHERE u.id = ?3 AND u.conversation_id = ?1 AND u.site_id = ?2 AND u.reply_id = ?5)";

/// Whether retrieval could find anything: knowledge with vectors, or this conversation's
/// vectors older than the `?3` messages before `$anchor` (an SQL expression for a `seq`).
macro_rules! retrievable_sql {
    ($anchor:literal) => {
        concat!(
            "SELECT EXISTS (SELECT 1 FROM knowledge_documents WHERE site_id = ?2 AND chunk_count > 0) \
             OR EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND site_id = ?2 \
             AND chunk_count > 0 AND seq <= ",
            $anchor,
            " - ?3) AS retrievable"
        )
    };
}

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
    /// once a complete reply is stored, and the conversation touched.
    pub(super) async fn store_reply(
        &self,
        scope: Scope<'_>,
        reply_to: &str,
        message: &StoredMessage,
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
        let results = self
            .db
            .batch(vec![insert, clear, touch])
            .await
            .map_err(service_error)?;
        inserted_seq(results.first())?.ok_or_else(|| {
            ServiceError::new(
                ServiceErrorKind::Conflict,
                "the turn is no longer answered under this id, or the conversation is gone",
            )
        })
    }

    /// One D1 round trip: the conversation, the message already sent with this idempotency
    /// key (if any), the last `window` messages, whether retrieval could find anything, and
    /// the visitor's message appended with the next `seq` — in one batch, which D1 runs as
    /// a transaction.
    pub(super) async fn open_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError> {
        let scoped: [JsValue; 2] = [scope.conversation_id.into(), scope.site_id.into()];
        let with = |extra: JsValue| [scoped[0].clone(), scoped[1].clone(), extra];
        let window = num(window as u64);
        let conversation = self.statement(CONVERSATION_SQL, &scoped)?;
        // Without an idempotency key there is no earlier post to find.
        let repeated = turn
            .idempotency_key
            .map(|key| self.statement(REPEATED_SQL, &with(key.into())))
            .transpose()?;
        let history = self.statement(HISTORY_SQL, &with(window.clone()))?;
        let retrievable_now = self.statement(
            retrievable_sql!(
                "(SELECT COALESCE(MAX(seq), 0) FROM messages \
                 WHERE conversation_id = ?1 AND site_id = ?2)"
            ),
            &with(window),
        )?;
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
        Ok(Some(TurnOpening::Started(TurnStart {
            conversation: conversation.into_conversation()?,
            history: messages_in(history_rows)?,
            message,
            retrievable: retrievable(retrievable_row)?,
        })))
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
            self.statement(
                retrievable_sql!(
                    "(SELECT COALESCE(MAX(seq), 0) FROM messages \
                     WHERE conversation_id = ?1 AND site_id = ?2)"
                ),
                &windowed,
            )?,
        ])
    }

    /// One read-only batch: what a turn without an idempotency key starts from, remembered
    /// in this isolate for the conversation's next turn (see [`remembered`](super::remembered)).
    pub(super) async fn read_context(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError> {
        let statements = self.context_statements(scope, window)?;
        let results = self.db.batch(statements).await.map_err(service_error)?;
        let context = context_in(&results)?;
        match &context {
            Some(context) => super::remembered::remember(scope, window, context),
            None => super::remembered::forget(scope),
        }
        Ok(context)
    }

    /// One batch: the turn's context as it stands, then the visitor's message (as
    /// [`insert_visitor`](Self::insert_visitor)), so a turn that started from a remembered
    /// context can tell whether it still holds.
    pub(super) async fn insert_checked(
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
        super::remembered::forget(scope);
        let results = results.map_err(service_error)?;
        let context = context_in(&results)?;
        let seq = inserted_seq(results.get(3))?;
        Ok(seq.zip(context))
    }

    /// One batch: the visitor's message (guarded by its conversation's existence) and the
    /// conversation's last activity.
    pub(super) async fn insert_visitor(
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

    /// One batch: the claim (when asked), the conversation, the visitor's message, the
    /// history before it, what is stored under its reply id, and whether retrieval could
    /// find anything.
    pub(super) async fn load_turn(
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
                retrievable: retrievable(retrievable_row)?,
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
    pub(super) async fn reopen(
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

    pub(super) async fn mark_turn_failed(
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
