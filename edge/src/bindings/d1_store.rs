//! The core's conversation store and warranty records over Cloudflare D1.
//!
//! Every statement uses bound parameters and names its site: a conversation of another
//! site is indistinguishable from one that does not exist. Message writes and turns (a
//! visitor's message's reply id and idempotency key) are in [`turns`].
//!
//! The same SQL runs where the conversation's rows are (issue 47, items 1 and 2;
//! [`record`]): in the conversation's object, on its own record; in the Worker, reads on the
//! copy of the site's conversations in the site's object (which the conversation objects
//! keep up to date), writes in the conversation's object.
//!
//! [`record`]: super::record

use concierge_core::boundary::{
    ConversationStore, NewTurn, Reopening, TurnContext, TurnOpening, TurnResume,
};
use concierge_core::conversation::{
    Conversation, EmbeddingStatus, Language, Scope, StoredMessage, Summary,
};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;
use std::borrow::Cow;
use wasm_bindgen::JsValue;
use worker::{D1Database, Env};

use super::record;

/// SQL storage for one request: the conversation's record, or the site's copy.
pub(crate) struct D1Store {
    /// Where this store's statements run: the record (in a conversation's object, or
    /// reached in it), the site's copy, or (`Place::Worker`) the shared D1.
    db: D1Database,
    /// The shared D1 (whether the site has knowledge to retrieve).
    shared: D1Database,
    place: Place,
    /// The site's template, recorded with a conversation it creates.
    template: Option<String>,
    /// KV (`CONFIG`): whether a site has indexed knowledge, remembered there.
    kv: Option<worker::kv::KvStore>,
}

/// Where a [`D1Store`] is.
#[derive(Clone)]
enum Place {
    /// In a conversation's object: `db` is its record.
    Object,
    /// In the Worker, reaching a conversation's object: `db` runs its statements there.
    Remote,
    /// In the Worker: a conversation's writes in its object, reads in its site's (see
    /// [`D1Store::reader`]); `db` is the shared D1.
    Worker(Env),
    /// In the Worker, reading the copy of a site's conversations in its object.
    Site,
}

impl Clone for D1Store {
    fn clone(&self) -> Self {
        Self {
            db: record::same(&self.db),
            shared: record::same(&self.shared),
            place: self.place.clone(),
            template: self.template.clone(),
            kv: self.kv.clone(),
        }
    }
}

impl std::fmt::Debug for D1Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("D1Store").finish_non_exhaustive()
    }
}

impl D1Store {
    /// The store of a request with `env`: in a conversation's object, its record.
    pub(crate) fn new(env: &Env) -> worker::Result<Self> {
        let shared = env.d1("DB")?;
        let kv = env.kv("CONFIG").ok();
        Ok(match record::of(env) {
            Some(db) => Self {
                db,
                shared,
                place: Place::Object,
                template: None,
                kv,
            },
            None => Self {
                db: record::same(&shared),
                shared,
                place: Place::Worker(env.clone()),
                template: None,
                kv,
            },
        })
    }

    /// This store, recording `template` with the conversations it creates.
    pub(crate) fn with_template(mut self, template: &str) -> Self {
        self.template = Some(template.to_owned());
        self
    }

    /// The underlying database (in an object, its record).
    pub(crate) fn db(&self) -> &D1Database {
        &self.db
    }

    /// Where `scope`'s conversation is written: here, or (from the Worker) in its object
    /// (`fresh`: being created there).
    pub(crate) fn writer(
        &self,
        scope: Scope<'_>,
        fresh: bool,
    ) -> Result<Cow<'_, Self>, ServiceError> {
        let Place::Worker(env) = &self.place else {
            return Ok(Cow::Borrowed(self));
        };
        Ok(Cow::Owned(Self {
            db: record::remote(env, scope, fresh).map_err(service_error)?,
            shared: record::same(&self.shared),
            place: Place::Remote,
            template: self.template.clone(),
            kv: self.kv.clone(),
        }))
    }

    /// Where `scope`'s conversation is read: here (in an object, or reaching one), or, from
    /// the Worker, its object (its record, never behind what the conversation did).
    pub(crate) fn reader(&self, scope: Scope<'_>) -> Result<Cow<'_, Self>, ServiceError> {
        self.writer(scope, false)
    }

    /// Where `site_id`'s conversations are read together (the console, site-wide reads):
    /// here (in an object, or reaching one), or, from the Worker, the copy in the site's
    /// object (each conversation's turn sent there before its reply is final).
    pub(crate) fn site_reader(&self, site_id: &str) -> Result<Cow<'_, Self>, ServiceError> {
        let Place::Worker(env) = &self.place else {
            return Ok(Cow::Borrowed(self));
        };
        Ok(Cow::Owned(Self {
            db: record::site(env, site_id).map_err(service_error)?,
            shared: record::same(&self.shared),
            place: Place::Site,
            template: self.template.clone(),
            kv: self.kv.clone(),
        }))
    }

    /// Whether this store is the Worker's own (not in or reaching an object).
    pub(crate) fn in_worker(&self) -> bool {
        matches!(self.place, Place::Worker(_))
    }

    /// The shared D1 (the control plane: sites, knowledge documents).
    pub(crate) fn shared(&self) -> &D1Database {
        &self.shared
    }

    /// In an object: waits until what was written has reached the site's object (a failure
    /// is logged; the object's alarm sends it later). Elsewhere nothing to wait for: the
    /// object answered a remote write once it had.
    pub(crate) async fn settled(&self) {
        if matches!(self.place, Place::Object)
            && let Err(error) = record::settled(&self.db).await
        {
            let line = serde_json::json!({"level": "warn", "msg": "record not yet in the site's object", "error": error.to_string()});
            worker::console_warn!("{line}");
        }
    }

    /// Whether retrieval could find anything: `conversation` (this conversation's own
    /// vectors), or the site's knowledge ([`site_knowledge`]).
    async fn retrievable_with(&self, scope: Scope<'_>, conversation: bool) -> bool {
        conversation || site_knowledge::indexed(self.kv.as_ref(), &self.shared, scope.site_id).await
    }

    /// `context` with the site's knowledge counted in what retrieval could find.
    async fn with_knowledge(
        &self,
        scope: Scope<'_>,
        context: Option<TurnContext>,
    ) -> Option<TurnContext> {
        let mut context = context?;
        context.retrievable = self.retrievable_with(scope, context.retrievable).await;
        Some(context)
    }

    /// After a turn: reads `scope`'s turn context into this isolate's memory for its next
    /// turn, unless the turn's reply left it remembered already (see [`remembered`]).
    pub(crate) async fn refresh(&self, scope: Scope<'_>, window: usize) {
        if remembered::recall(scope, window).is_none()
            && let Ok(reader) = self.reader(scope)
        {
            let _ = reader.read_context(scope, window).await;
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
pub(crate) mod site_knowledge;
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
        let scope = Scope::new(&conversation.site_id, &conversation.id);
        let writer = self.writer(scope, true)?;
        writer
            .db
            .prepare(
                // The site's template at this time answers the conversation (the
                // console filters by it; a later template change keeps it).
                "INSERT INTO conversations (id, site_id, user_id, language, created_at, updated_at, identity, template) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)",
            )
            .bind(&[
                conversation.id.as_str().into(),
                conversation.site_id.as_str().into(),
                conversation.user_id.as_deref().map_or(JsValue::NULL, JsValue::from),
                conversation.language.as_str().into(),
                num(conversation.created_at),
                identity.map_or(JsValue::NULL, JsValue::from),
                self.template.as_deref().map_or(JsValue::NULL, JsValue::from),
            ])
            .map_err(service_error)?
            .run()
            .await
            .map_err(service_error)?;
        writer.settled().await;
        Ok(())
    }

    async fn load_conversation(
        &self,
        scope: Scope<'_>,
    ) -> Result<Option<Conversation>, ServiceError> {
        let row = self
            .reader(scope)?
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
        let writer = self.writer(scope, false)?;
        writer
            .db
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
        writer.settled().await;
        Ok(())
    }

    async fn append_message(
        &self,
        scope: Scope<'_>,
        message: &StoredMessage,
    ) -> Result<u64, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        let writer = self.writer(scope, false)?;
        let seq = writer.store_message(scope, message).await?;
        writer.settled().await;
        Ok(seq)
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
        let writer = self.writer(scope, false)?;
        let seq = writer.store_reply(scope, reply_to, message, staged).await?;
        // The turn's reply is final once the site's object has it too.
        writer.settled().await;
        Ok(seq)
    }

    async fn start_turn(
        &self,
        scope: Scope<'_>,
        turn: NewTurn<'_>,
        window: usize,
    ) -> Result<Option<TurnOpening>, ServiceError> {
        // The conversation changes: what this isolate remembers of it is out of date.
        remembered::forget(scope);
        // The visitor's message reaches the site's object with the reply (or a few seconds
        // after it, when nothing settles the turn sooner).
        self.writer(scope, false)?
            .open_turn(scope, turn, window)
            .await
    }

    async fn read_turn(
        &self,
        scope: Scope<'_>,
        window: usize,
    ) -> Result<Option<TurnContext>, ServiceError> {
        self.reader(scope)?.read_context(scope, window).await
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
        let seq = self
            .writer(scope, false)?
            .insert_visitor(scope, turn)
            .await?;
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
        self.writer(scope, false)?
            .insert_checked(scope, turn, window)
            .await
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
        match claim {
            Some(_) => {
                self.writer(scope, false)?
                    .load_turn(scope, message_id, claim, window)
                    .await
            }
            None => {
                self.reader(scope)?
                    .load_turn(scope, message_id, claim, window)
                    .await
            }
        }
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
        self.writer(scope, false)?
            .reopen(scope, expected, claim, window)
            .await
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
        let writer = self.writer(scope, false)?;
        writer
            .mark_turn_failed(scope, message_id, reply_id, code)
            .await?;
        writer.settled().await;
        Ok(())
    }

    async fn load_recent_messages(
        &self,
        scope: Scope<'_>,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, ServiceError> {
        let rows = self
            .reader(scope)?
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
        self.writer(scope, false)?
            .db
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
            .reader(scope)?
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
        let writer = self.writer(scope, false)?;
        writer
            .db
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
        writer.settled().await;
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
        let writer = self.writer(scope, false)?;
        let compressed =
            super::d1_memory::compress_old(&writer.db, scope, keep_recent, above, delete)
                .await
                .map_err(service_error)?;
        writer.settled().await;
        Ok(compressed)
    }
}

impl D1Store {
    /// Whether the reply `reply_id` is stored in `scope`'s conversation: the turn that
    /// was to write it completed.
    pub(crate) async fn reply_stored(
        &self,
        scope: Scope<'_>,
        reply_id: &str,
    ) -> Result<bool, ServiceError> {
        let found: Option<serde_json::Value> = self
            .reader(scope)?
            .db
            .prepare(
                "SELECT 1 AS found FROM messages WHERE id = ?1 AND conversation_id = ?2 \
                 AND site_id = ?3",
            )
            .bind(&[
                reply_id.into(),
                scope.conversation_id.into(),
                scope.site_id.into(),
            ])
            .map_err(service_error)?
            .first(None)
            .await
            .map_err(service_error)?;
        Ok(found.is_some())
    }
}
