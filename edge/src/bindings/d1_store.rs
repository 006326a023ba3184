//! The core's conversation store and warranty records over Cloudflare D1.
//!
//! Every statement uses bound parameters and names its site: a conversation of another
//! site is indistinguishable from one that does not exist. Message writes and turns (a
//! visitor's message's reply id and idempotency key) are in [`turns`].

use concierge_core::boundary::{
    ConversationStore, NewTurn, Reopening, TurnContext, TurnOpening, TurnResume,
};
use concierge_core::conversation::{
    Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary,
};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

/// D1-backed storage for one request.
#[derive(Debug)]
pub(crate) struct D1Store {
    db: D1Database,
}

impl D1Store {
    pub(crate) fn new(db: D1Database) -> Self {
        Self { db }
    }

    /// The underlying database.
    pub(crate) fn db(&self) -> &D1Database {
        &self.db
    }

    /// After a turn: reads `scope`'s turn context into this isolate's memory for its next
    /// turn, unless the turn's reply left it remembered already (see [`remembered`]).
    pub(crate) async fn refresh(&self, scope: Scope<'_>, window: usize) {
        if remembered::recall(scope, window).is_none() {
            let _ = self.read_context(scope, window).await;
        }
    }
}

/// A D1 failure as the core sees it. Unique-constraint violations are conflicts.
pub(crate) fn service_error(err: worker::Error) -> ServiceError {
    let detail = err.to_string();
    let kind = if detail.contains("UNIQUE constraint") || detail.contains("PRIMARY KEY") {
        ServiceErrorKind::Conflict
    } else {
        ServiceErrorKind::Unavailable
    };
    ServiceError::new(kind, detail)
}

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

const CONVERSATION_SQL: &str = "SELECT id, site_id, user_id, identity, language, created_at \
     FROM conversations WHERE id = ?1 AND site_id = ?2";

/// The columns a [`MessageRow`] reads.
macro_rules! message_columns {
    () => {
        "id, seq, role, kind, content, metadata, created_at, reply_id, tool_steps, payloads"
    };
}

const HISTORY_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 ORDER BY seq DESC LIMIT ?3"
);

pub(crate) mod remembered;
// After `message_columns!`, which it uses.
mod rows;
mod turns;

use rows::{ConversationRow, MessageRow, role_str, status_str};

impl ConversationStore for D1Store {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<(), ServiceError> {
        let identity = conversation
            .identity
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| ServiceError::new(ServiceErrorKind::Invalid, e.to_string()))?;
        self.db
            .prepare(
                // The site's template at this time answers the conversation (the
                // console filters by it; a later template change keeps it).
                "INSERT INTO conversations (id, site_id, user_id, language, created_at, updated_at, identity, template) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, (SELECT s.template FROM sites s WHERE s.id = ?2))",
            )
            .bind(&[
                conversation.id.as_str().into(),
                conversation.site_id.as_str().into(),
                conversation.user_id.as_deref().map_or(JsValue::NULL, JsValue::from),
                conversation.language.as_str().into(),
                num(conversation.created_at),
                identity.map_or(JsValue::NULL, JsValue::from),
            ])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        Ok(())
    }

    async fn load_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Conversation>, ServiceError> {
        let row = self
            .db
            .prepare(CONVERSATION_SQL)
            .bind(&[scope.conversation_id.into(), scope.site_id.into()])
            .map_err(service_error)?
            .first::<ConversationRow>(None)
            .await
            .map_err(service_error)?;
        row.map(ConversationRow::into_conversation).transpose()
    }

    async fn set_language(&self, scope: Scope<'_>, language: Language) -> Result<(), ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.db
            .prepare("UPDATE conversations SET language = ?3 WHERE id = ?1 AND site_id = ?2")
            .bind(&[
                scope.conversation_id.into(),
                scope.site_id.into(),
                language.as_str().into(),
            ])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        Ok(())
    }

    async fn append_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.store_message(scope, message).await
    }

    async fn append_reply(
        &self,
        scope: Scope<'_>,
        reply_to: &str,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        // The context staged by the turn's visitor's message, if nothing was written since.
        let staged = remembered::take_staged(scope);
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.store_reply(scope, reply_to, message, staged).await
    }

    async fn start_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.open_turn(scope, turn, window).await
    }

    async fn read_turn(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError> {
        self.read_context(scope, window).await
    }

    async fn insert_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
    ) -> Result<Option<u64>, ServiceError> {
        // What this isolate read of the conversation for the turn, staged with the message
        // for its reply (see `remembered`); out of date otherwise.
        let read = remembered::take(scope);
        remembered::forget(scope);
        let message = turn.message.clone();
        let seq = self.insert_visitor(scope, turn).await?;
        if let (Some(seq), Some((window, context))) = (seq, read) {
            let after = remembered::appended(context, &message, seq, window);
            remembered::stage(scope, window, after);
        }
        Ok(seq)
    }

    fn cached_turn(&self, scope: Scope<'_>, window: usize) -> Option<TurnContext> {
        remembered::recall(scope, window)
    }

    async fn insert_checked_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<(u64, TurnContext)>, ServiceError> {
        self.insert_checked(scope, turn, window).await
    }

    async fn resume_turn(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        claim: Option<&str>,
        window: usize,
    ) -> Result<Option<TurnResume>, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.load_turn(scope, message_id, claim, window).await
    }

    async fn reopen_last_turn(
        &self,
        scope: Scope<'_>,
        expected: Option<&str>,
        claim: &str,
        window: usize,
    ) -> Result<Option<Reopening>, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.reopen(scope, expected, claim, window).await
    }

    async fn mark_answer_failed(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        reply_id: &str,
        code: &str,
    ) -> Result<(), ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        self.mark_turn_failed(scope, message_id, reply_id, code)
            .await
    }

    async fn load_recent_messages(
        &self,
        scope: Scope<'_>,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, ServiceError> {
        let rows = self
            .db
            .prepare(HISTORY_SQL)
            .bind(&[
                scope.conversation_id.into(),
                scope.site_id.into(),
                num(limit as u64),
            ])
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results::<MessageRow>()
            .map_err(service_error)?;
        let mut messages = rows
            .into_iter()
            .map(MessageRow::into_message)
            .collect::<Result<Vec<_>, _>>()?;
        messages.reverse();
        Ok(messages)
    }

    async fn set_embedding_status(
        &self,
        scope: Scope<'_>,
        message_id: &str,
        status: EmbeddingStatus,
    ) -> Result<(), ServiceError> {
        self.db
            .prepare("UPDATE messages SET embedding_status = ?4 WHERE id = ?1 AND conversation_id = ?2 AND site_id = ?3")
            .bind(&[message_id.into(), scope.conversation_id.into(), scope.site_id.into(), status_str(status).into()])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        Ok(())
    }

    async fn load_summary(&self, scope: Scope<'_>) -> Result<Option<Summary>, ServiceError> {
        #[derive(Deserialize)]
        struct Row {
            content: String,
            upto_seq: f64,
            updated_at: f64,
        }
        let row = self
            .db
            .prepare("SELECT content, upto_seq, updated_at FROM summaries WHERE conversation_id = ?1 AND site_id = ?2")
            .bind(&[scope.conversation_id.into(), scope.site_id.into()])
            .map_err(service_error)?
            .first::<Row>(None)
            .await
            .map_err(service_error)?;
        Ok(row.map(|r| Summary {
            content: r.content,
            upto_seq: r.upto_seq as u64,
            updated_at: r.updated_at as u64,
        }))
    }

    async fn save_summary(&self, scope: Scope<'_>, summary: &Summary) -> Result<(), ServiceError> {
        self.db
            .prepare(
                "INSERT INTO summaries (conversation_id, site_id, content, upto_seq, updated_at) \
                 SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM conversations WHERE id = ?1 AND site_id = ?2) \
                 ON CONFLICT (conversation_id) DO UPDATE SET content = excluded.content, \
                 upto_seq = excluded.upto_seq, updated_at = excluded.updated_at",
            )
            .bind(&[
                scope.conversation_id.into(),
                scope.site_id.into(),
                summary.content.as_str().into(),
                num(summary.upto_seq),
                num(summary.updated_at),
            ])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        Ok(())
    }

    async fn compress_messages(
        &self,
        scope: Scope<'_>,
        keep_recent: usize,
        above: usize,
        delete: bool,
    ) -> Result<usize, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        super::d1_memory::compress_old(&self.db, scope, keep_recent, above, delete)
            .await
            .map_err(service_error)
    }
}
