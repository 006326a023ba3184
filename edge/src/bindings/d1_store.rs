//! The core's conversation store and warranty records over Cloudflare D1.
//!
//! Every statement uses bound parameters and names its site: a conversation of another
//! site is indistinguishable from one that does not exist.

use concierge_core::boundary::{ConversationStore, TurnStart, WarrantyRecord, WarrantyRecords};
use concierge_core::conversation::{
    Conversation, EmbeddingStatus, Language, MessageKind, Metadata, Role, Scope, StoredMessage,
    Summary,
};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

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

const CONVERSATION_SQL: &str = "SELECT id, site_id, user_id, language, created_at \
     FROM conversations WHERE id = ?1 AND site_id = ?2";

const HISTORY_SQL: &str = "SELECT id, seq, role, kind, content, metadata, created_at \
     FROM messages WHERE conversation_id = ?1 AND site_id = ?2 ORDER BY seq DESC LIMIT ?3";

#[derive(Debug, Deserialize)]
struct ConversationRow {
    id: String,
    site_id: String,
    user_id: Option<String>,
    language: String,
    created_at: f64,
}

impl ConversationRow {
    fn into_conversation(self) -> Conversation {
        Conversation {
            id: self.id,
            site_id: self.site_id,
            user_id: self.user_id,
            language: Language::parse(&self.language).unwrap_or_default(),
            created_at: self.created_at as u64,
        }
    }
}

/// The guarded message `INSERT` with `$seq` as the `seq` expression.
macro_rules! insert_message_sql {
    ($seq:literal) => {
        concat!(
            "INSERT INTO messages (id, site_id, conversation_id, seq, role, kind, content, \
             metadata, embedding_status, created_at) SELECT ?1, ?2, ?3, ",
            $seq,
            ", ?5, ?6, ?7, ?8, ?9, ?10 \
             WHERE EXISTS (SELECT 1 FROM conversations WHERE id = ?3 AND site_id = ?2)"
        )
    };
}

/// Where an inserted message's `seq` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seq {
    /// The message's own.
    Given,
    /// One after the conversation's last, computed in the statement.
    Next,
}

impl D1Store {
    /// `INSERT` of `message` into its conversation, guarded: nothing is inserted unless the
    /// conversation exists on this site.
    fn insert_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
        seq: Seq,
    ) -> Result<D1PreparedStatement, ServiceError> {
        let metadata = serde_json::to_string(&message.metadata)
            .map_err(|e| ServiceError::new(ServiceErrorKind::Invalid, e.to_string()))?;
        // The user's messages and answers are embedded; fixed sentences are not.
        let embedding = match (message.role, message.kind) {
            (Role::User, _) | (Role::Assistant, MessageKind::Answer) => "pending",
            _ => "skipped",
        };
        let sql = match seq {
            Seq::Given => insert_message_sql!("?4"),
            // One after the conversation's last (or `?4`, if that is larger).
            Seq::Next => insert_message_sql!(
                "MAX(?4, COALESCE((SELECT MAX(seq) FROM messages \
                 WHERE conversation_id = ?3 AND site_id = ?2), 0) + 1)"
            ),
        };
        self.db
            .prepare(sql)
            .bind(&[
                message.id.as_str().into(),
                scope.site_id.into(),
                scope.conversation_id.into(),
                num(message.seq),
                role_str(message.role).into(),
                message.kind.as_str().into(),
                message.content.as_str().into(),
                metadata.into(),
                embedding.into(),
                num(message.created_at),
            ])
            .map_err(service_error)
    }

    /// Marks the conversation as updated at `at`.
    fn touch(&self, scope: Scope<'_>, at: u64) -> Result<D1PreparedStatement, ServiceError> {
        self.db
            .prepare("UPDATE conversations SET updated_at = ?3 WHERE id = ?1 AND site_id = ?2")
            .bind(&[scope.conversation_id.into(), scope.site_id.into(), num(at)])
            .map_err(service_error)
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct MessageRow {
    pub id: String,
    pub seq: f64,
    pub role: String,
    pub kind: String,
    pub content: String,
    pub metadata: String,
    pub created_at: f64,
}

impl MessageRow {
    pub(crate) fn into_message(self) -> Result<StoredMessage, ServiceError> {
        let corrupt = |what: &str| {
            ServiceError::new(ServiceErrorKind::Other, format!("stored message {what}"))
        };
        let role = match self.role.as_str() {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return Err(corrupt("role")),
        };
        let kind = MessageKind::parse(&self.kind).ok_or_else(|| corrupt("kind"))?;
        let metadata: Metadata =
            serde_json::from_str(&self.metadata).map_err(|_| corrupt("metadata"))?;
        Ok(StoredMessage {
            id: self.id,
            seq: self.seq as u64,
            role,
            kind,
            content: self.content,
            metadata,
            created_at: self.created_at as u64,
        })
    }
}

fn role_str(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn status_str(status: EmbeddingStatus) -> &'static str {
    match status {
        EmbeddingStatus::Pending => "pending",
        EmbeddingStatus::Done => "done",
        EmbeddingStatus::Failed => "failed",
        EmbeddingStatus::Skipped => "skipped",
    }
}

impl ConversationStore for D1Store {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<(), ServiceError> {
        self.db
            .prepare(
                "INSERT INTO conversations (id, site_id, user_id, language, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            )
            .bind(&[
                conversation.id.as_str().into(),
                conversation.site_id.as_str().into(),
                conversation.user_id.as_deref().map_or(JsValue::NULL, JsValue::from),
                conversation.language.as_str().into(),
                num(conversation.created_at),
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
        Ok(row.map(ConversationRow::into_conversation))
    }

    async fn set_language(&self, scope: Scope<'_>, language: Language) -> Result<(), ServiceError> {
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
    ) -> Result<(), ServiceError> {
        let insert = self.insert_message(scope, message, Seq::Given)?;
        let touch = self.touch(scope, message.created_at)?;
        let results = self
            .db
            .batch(vec![insert, touch])
            .await
            .map_err(service_error)?;
        let inserted = results
            .first()
            .and_then(|r| r.meta().ok().flatten())
            .and_then(|m| m.changes)
            .unwrap_or(0);
        if inserted == 0 {
            return Err(ServiceError::new(
                ServiceErrorKind::Invalid,
                "no such conversation on this site",
            ));
        }
        Ok(())
    }

    /// One D1 round trip: the conversation, its last `window` messages, whether retrieval
    /// could find anything, and the visitor's message appended with the next `seq` — in one
    /// batch, which D1 runs as a transaction.
    async fn start_turn(
        &self,
        scope: Scope<'_>,
        mut message: StoredMessage,
        window: usize,
    ) -> Result<Option<TurnStart>, ServiceError> {
        let scoped = [scope.conversation_id.into(), scope.site_id.into()];
        let conversation = self
            .db
            .prepare(CONVERSATION_SQL)
            .bind(&scoped)
            .map_err(service_error)?;
        let history = self
            .db
            .prepare(HISTORY_SQL)
            .bind(&[scoped[0].clone(), scoped[1].clone(), num(window as u64)])
            .map_err(service_error)?;
        // Knowledge with vectors, or this conversation's vectors older than the window.
        let retrievable = self
            .db
            .prepare(
                "SELECT EXISTS (SELECT 1 FROM knowledge_documents WHERE site_id = ?2 AND chunk_count > 0) \
                 OR EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND site_id = ?2 \
                 AND chunk_count > 0 AND seq <= (SELECT COALESCE(MAX(seq), 0) FROM messages \
                 WHERE conversation_id = ?1 AND site_id = ?2) - ?3) AS retrievable",
            )
            .bind(&[scoped[0].clone(), scoped[1].clone(), num(window as u64)])
            .map_err(service_error)?;
        let insert = self.insert_message(scope, &message, Seq::Next)?;
        let touch = self.touch(scope, message.created_at)?;
        let results = self
            .db
            .batch(vec![conversation, history, retrievable, insert, touch])
            .await
            .map_err(service_error)?;
        let [conversation, history, retrievable, ..] = results.as_slice() else {
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
            // The insert is guarded by the same condition: nothing was stored.
            return Ok(None);
        };
        let mut history = history
            .results::<MessageRow>()
            .map_err(service_error)?
            .into_iter()
            .map(MessageRow::into_message)
            .collect::<Result<Vec<_>, _>>()?;
        history.reverse();
        #[derive(Deserialize)]
        struct Retrievable {
            retrievable: f64,
        }
        let retrievable = retrievable
            .results::<Retrievable>()
            .map_err(service_error)?
            .first()
            .is_none_or(|r| r.retrievable != 0.0);
        // The insert's `MAX(seq) + 1` saw the same rows as the history read.
        message.seq = history.last().map_or(1, |m| m.seq + 1);
        Ok(Some(TurnStart {
            conversation: conversation.into_conversation(),
            history,
            message,
            retrievable,
        }))
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
}

impl WarrantyRecords for D1Store {
    async fn find_warranty(
        &self,
        site_id: &str,
        serial: &str,
    ) -> Result<Option<WarrantyRecord>, ServiceError> {
        #[derive(Deserialize)]
        struct Row {
            serial: String,
            product: String,
            warranty_until: String,
        }
        let row = self
            .db
            .prepare(
                "SELECT serial, product, warranty_until FROM warranty_records \
                 WHERE site_id = ?1 AND serial = ?2 COLLATE NOCASE LIMIT 1",
            )
            .bind(&[site_id.into(), serial.into()])
            .map_err(service_error)?
            .first::<Row>(None)
            .await
            .map_err(service_error)?;
        row.map(|r| {
            let until = concierge_core::boundary::CalendarDate::parse_iso(&r.warranty_until)
                .ok_or_else(|| {
                    ServiceError::new(ServiceErrorKind::Other, "stored warranty date")
                })?;
            Ok(WarrantyRecord {
                serial: r.serial,
                product: r.product,
                warranty_until: until,
            })
        })
        .transpose()
    }
}
