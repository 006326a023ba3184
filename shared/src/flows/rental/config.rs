//! `rental`'s settings, roles, prompts and fixed sentences.

use alloc::string::String;
use alloc::vec::Vec;

use super::schema::RentalSchema;
use crate::chat::ChatMessage;
use crate::conversation::{Language, StoredMessage};
use crate::engine::TurnConfig;
use crate::prompt::Sentences;

/// Agent 1's prompt; its first line is the scripted model's marker.
pub const ORCHESTRATOR_PROMPT: &str = include_str!("../../../../prompts/rental_orchestrator.md");
/// Agent 2's prompt.
pub const SQL_PROMPT: &str = include_str!("../../../../prompts/rental_sql.md");
/// Agent 3's prompt.
pub const RESPONSE_PROMPT: &str = include_str!("../../../../prompts/rental_response.md");
/// Agent 4's prompt.
pub const VALIDATOR_PROMPT: &str = include_str!("../../../../prompts/rental_validator.md");
/// The Vietnamese system prompt every session starts with (seed).
pub const SYSTEM_PROMPT_VI: &str = include_str!("../../../../prompts/rental_system_vi.md");
/// Fixed sentences, Vietnamese.
pub const SENTENCES_VI: &str = include_str!("../../../../prompts/rental_fixed_vi.md");
/// Fixed sentences, English.
pub const SENTENCES_EN: &str = include_str!("../../../../prompts/rental_fixed_en.md");

/// Canonical reuse, hard threshold (seed): reuse the stored SQL.
pub const CANONICAL_HARD: f32 = 0.92;
/// Canonical reuse, soft threshold (seed): the Q&A goes into the SQL prompt as a hint.
pub const CANONICAL_SOFT: f32 = 0.8;
/// SQL attempts (seed).
pub const SQL_ATTEMPTS: usize = 5;
/// Session idle timeout (seed): a longer gap resets the model's context.
pub const SESSION_IDLE_MS: u64 = 30 * 60 * 1000;
/// Messages per session (seed), besides the system prompt.
pub const SESSION_MESSAGES: usize = 20;

/// The visitor's role (seed `UserRole`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Not signed in ("Chưa đăng nhập").
    Guest,
    /// A renter ("Người thuê phòng").
    Tenant,
    /// A landlord ("Chủ trọ").
    Landlord,
}

impl Role {
    /// `GUEST`, `TENANT`, `LANDLORD`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Guest => "GUEST",
            Self::Tenant => "TENANT",
            Self::Landlord => "LANDLORD",
        }
    }

    /// `[GUEST]`, `[TENANT]`, `[LANDLORD]`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Guest => "[GUEST]",
            Self::Tenant => "[TENANT]",
            Self::Landlord => "[LANDLORD]",
        }
    }

    /// A stored or claimed role (`TENANT`/`LANDLORD`, any case); anything else is none.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_uppercase().as_str() {
            "TENANT" => Some(Self::Tenant),
            "LANDLORD" => Some(Self::Landlord),
            _ => None,
        }
    }
}

/// The `rental` template's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RentalConfig {
    /// Shared settings (history window 21: the visitor's message plus 20).
    pub turn: TurnConfig,
    /// The site's logical listings schema (paths of LIST links).
    pub schema: RentalSchema,
    /// Role labels at the start of messages (seed: on).
    pub show_role_label: bool,
    /// Rows a query may return (decision: 100).
    pub row_cap: usize,
    /// Fixed sentences, Vietnamese.
    pub vi: Sentences,
    /// Fixed sentences, English.
    pub en: Sentences,
}

impl Default for RentalConfig {
    fn default() -> Self {
        let turn = TurnConfig {
            history_window: SESSION_MESSAGES + 1,
            prompt_history: SESSION_MESSAGES,
            ..TurnConfig::default()
        };
        Self {
            turn,
            schema: RentalSchema::default(),
            show_role_label: true,
            row_cap: 100,
            vi: Sentences::parse(SENTENCES_VI),
            en: Sentences::parse(SENTENCES_EN),
        }
    }
}

impl RentalConfig {
    /// A fixed sentence in `language`.
    pub fn sentence(&self, language: Language, key: &str) -> &str {
        match language {
            Language::Vi => self.vi.get(key),
            Language::En => self.en.get(key),
        }
    }

    /// The label shown for `role` (none when labels are off).
    pub fn label(&self, role: Role) -> Option<&'static str> {
        self.show_role_label.then(|| role.label())
    }
}

/// The model's context for a session (seed): the Vietnamese system prompt, then the last
/// 20 user/assistant messages after the latest idle gap of more than 30 minutes, before
/// the visitor's new message (`history`'s last; incomplete messages are left out).
pub fn session_context(history: &[StoredMessage]) -> Vec<ChatMessage> {
    let Some((current, earlier)) = history.split_last() else {
        return Vec::new();
    };
    let mut start = earlier.len();
    let mut next_time = current.created_at;
    for (i, message) in earlier.iter().enumerate().rev() {
        if next_time.saturating_sub(message.created_at) > SESSION_IDLE_MS {
            break;
        }
        start = i;
        next_time = message.created_at;
    }
    let kept: Vec<StoredMessage> = earlier[start..]
        .iter()
        .filter(|m| !m.is_incomplete())
        .cloned()
        .collect();
    let skip = kept.len().saturating_sub(SESSION_MESSAGES);
    let mut messages = alloc::vec![ChatMessage::system(SYSTEM_PROMPT_VI.trim())];
    messages.extend(crate::conversation::chat_history(&kept[skip..]));
    messages
}

/// The first line of a prompt (what a scripted model recognises a call by).
pub fn marker(prompt: &str) -> String {
    prompt.lines().next().unwrap_or_default().into()
}
