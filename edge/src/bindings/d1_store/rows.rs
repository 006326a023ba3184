//! Rows of `conversations` and `messages` as D1 answers them, and the text columns of
//! roles and embedding states.

use concierge_core::conversation::{
    Conversation, EmbeddingStatus, Language, MessageKind, Metadata, Role, StoredMessage,
};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(super) struct ConversationRow {
    id: String,
    site_id: String,
    user_id: Option<String>,
    /// JSON of the identity the conversation is bound to; NULL: anonymous.
    identity: Option<String>,
    language: String,
    created_at: f64,
}

impl ConversationRow {
    /// The conversation; an identity that does not read back is an error, never taken as
    /// anonymous.
    pub(super) fn into_conversation(self) -> Result<Conversation, ServiceError> {
        let identity = self
            .identity
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| {
                ServiceError::new(
                    ServiceErrorKind::Other,
                    format!("conversation identity: {e}"),
                )
            })?;
        Ok(Conversation {
            id: self.id,
            site_id: self.site_id,
            user_id: self.user_id,
            identity,
            language: Language::parse(&self.language).unwrap_or_default(),
            created_at: self.created_at as u64,
        })
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct MessageRow {
    pub id: String,
    pub seq: f64,
    pub role: String,
    pub kind: String,
    pub content: String,
    pub metadata: String,
    pub created_at: f64,
    /// A visitor's message: the id its reply is to be stored under.
    #[serde(default)]
    pub reply_id: Option<String>,
    /// An assistant reply: its tool rounds as JSON (migration 0009), `NULL` without tools.
    #[serde(default)]
    pub tool_steps: Option<String>,
    /// An assistant reply: its payloads as JSON (migration 0010), `NULL` without any.
    #[serde(default)]
    pub payloads: Option<String>,
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
        let tool_steps = match self.tool_steps.as_deref() {
            None | Some("") => Vec::new(),
            Some(json) => serde_json::from_str(json).map_err(|_| corrupt("tool steps"))?,
        };
        let payloads = match self.payloads.as_deref() {
            None | Some("") => Vec::new(),
            Some(json) => serde_json::from_str(json).map_err(|_| corrupt("payloads"))?,
        };
        Ok(StoredMessage {
            id: self.id,
            seq: self.seq as u64,
            role,
            kind,
            content: self.content,
            metadata,
            created_at: self.created_at as u64,
            tool_steps,
            payloads,
        })
    }
}

pub(super) fn role_str(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

pub(super) fn status_str(status: EmbeddingStatus) -> &'static str {
    match status {
        EmbeddingStatus::Pending => "pending",
        EmbeddingStatus::Done => "done",
        EmbeddingStatus::Failed => "failed",
        EmbeddingStatus::Skipped => "skipped",
    }
}
