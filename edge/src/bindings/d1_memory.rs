//! `guarded`'s memory views over D1 (the seed's memory server): a conversation's messages
//! with their `compressed` flag, and compression of old messages. Every statement is
//! scoped to one site and conversation, with bound parameters.

use concierge_core::conversation::Scope;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

/// Most messages a memory view reads.
const MAX_MESSAGES: u32 = 5_000;

/// A stored message as the memory views see it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MemoryRow {
    pub seq: f64,
    pub role: String,
    pub kind: String,
    pub content: String,
    pub created_at: f64,
    pub compressed: f64,
}

impl MemoryRow {
    /// A visitor's or an assistant's message of the dialogue (not the greeting).
    pub(crate) fn is_dialogue(&self) -> bool {
        matches!(self.role.as_str(), "user" | "assistant") && self.kind != "greeting"
    }

    /// Compressed: in the full history only.
    pub(crate) fn is_compressed(&self) -> bool {
        self.compressed != 0.0
    }
}

/// The conversation's messages, oldest first.
pub(crate) async fn messages(db: &D1Database, scope: Scope<'_>) -> worker::Result<Vec<MemoryRow>> {
    db.prepare(
        "SELECT seq, role, kind, content, created_at, compressed FROM messages \
         WHERE site_id = ?1 AND conversation_id = ?2 ORDER BY seq LIMIT ?3",
    )
    .bind(&[
        scope.site_id.into(),
        scope.conversation_id.into(),
        JsValue::from_f64(f64::from(MAX_MESSAGES)),
    ])?
    .all()
    .await?
    .results()
}

/// Compresses the dialogue messages before `before_seq` (flags them, or deletes them when
/// `delete`); how many.
pub(crate) async fn compress(
    db: &D1Database,
    scope: Scope<'_>,
    before_seq: f64,
    delete: bool,
) -> worker::Result<usize> {
    let sql = if delete {
        "DELETE FROM messages WHERE site_id = ?1 AND conversation_id = ?2 AND seq < ?3 \
         AND role IN ('user', 'assistant') AND kind != 'greeting'"
    } else {
        "UPDATE messages SET compressed = 1 WHERE site_id = ?1 AND conversation_id = ?2 \
         AND seq < ?3 AND compressed = 0 AND role IN ('user', 'assistant') AND kind != 'greeting'"
    };
    let result = db
        .prepare(sql)
        .bind(&[
            scope.site_id.into(),
            scope.conversation_id.into(),
            JsValue::from_f64(before_seq),
        ])?
        .run()
        .await?;
    Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0))
}

/// Compresses the dialogue messages older than the `keep_recent` most recent uncompressed
/// ones, when the conversation holds more than `above` dialogue messages; how many.
pub(crate) async fn compress_old(
    db: &D1Database,
    scope: Scope<'_>,
    keep_recent: usize,
    above: usize,
    delete: bool,
) -> worker::Result<usize> {
    let rows = messages(db, scope).await?;
    let dialogue: Vec<&MemoryRow> = rows.iter().filter(|r| r.is_dialogue()).collect();
    let live: Vec<&MemoryRow> = dialogue
        .iter()
        .copied()
        .filter(|r| !r.is_compressed())
        .collect();
    if dialogue.len() <= above || live.len() <= keep_recent {
        return Ok(0);
    }
    let first_kept = live[live.len() - keep_recent].seq;
    compress(db, scope, first_kept, delete).await
}
