//! A new conversation, opened with its template's greeting.

use alloc::boxed::Box;
use alloc::string::String;

use super::contract::{Assistant, Platform};
use super::steps::assistant_message;
use crate::boundary::ConversationStore;
use crate::conversation::{Conversation, Language, MessageKind, StoredMessage};
use crate::error::Error;
use crate::identity::UserIdentity;

/// A conversation to create.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewConversation {
    /// The site.
    pub site_id: String,
    /// The visitor, when known (a label unless `identity` is set).
    pub user_id: Option<String>,
    /// The verified identity the conversation is bound to (`None`: anonymous).
    pub identity: Option<UserIdentity>,
    /// The greeting's language (default Vietnamese); the visitor's first message decides
    /// the conversation's language.
    pub language: Option<Language>,
}

/// A created conversation and its greeting.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedConversation {
    /// The conversation.
    pub conversation: Conversation,
    /// The greeting: stored as its first message, unless the template does not store it
    /// ([`Assistant::stores_greeting`]; then its `seq` is 0 and it is only to be shown).
    pub greeting: StoredMessage,
}

impl CreatedConversation {
    /// Whether the greeting is a stored message of the conversation.
    pub fn greeting_stored(&self) -> bool {
        self.greeting.seq > 0
    }
}

/// Creates a conversation and stores the template's greeting as its first message (not
/// embedded: the same sentence opens every conversation) — or, for a template that does
/// not store it, only hands it back.
pub async fn create_conversation<P: Platform, A: Assistant>(
    platform: &P,
    assistant: &A,
    new: NewConversation,
) -> Result<CreatedConversation, Error> {
    let now = platform.clock().now_ms();
    let language = new.language.unwrap_or_default();
    let conversation = Conversation {
        id: platform.ids().new_id(),
        site_id: new.site_id,
        user_id: new.user_id,
        identity: new.identity.map(Box::new),
        language,
        created_at: now,
    };
    let store = platform.store();
    store
        .create_conversation(&conversation)
        .await
        .map_err(Error::Store)?;
    let mut greeting = assistant_message(
        platform.ids().new_id(),
        MessageKind::Greeting,
        assistant.greeting(language).into(),
        now,
    );
    if assistant.stores_greeting() {
        greeting.seq = store
            .append_message(conversation.scope(), &greeting)
            .await
            .map_err(Error::Store)?;
    }
    Ok(CreatedConversation {
        conversation,
        greeting,
    })
}
