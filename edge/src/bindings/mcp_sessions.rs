//! MCP sessions: issued and verified without storage (`concierge_core::mcp::session`,
//! signed with the site's secret-key digest, so a key rotation ends them all), and ended
//! early by `DELETE /mcp` with a tombstone in Workers KV (the `CONFIG` namespace, key
//! `mcp-ended:{sha256 of the id}`) that lives until the session would have expired.
//!
//! KV is eventually consistent: another location may still accept an ended session for up
//! to a minute. Nothing else about a session is stored.

use concierge_core::boundary::MIN_TTL_SECONDS;
use concierge_core::mcp::session::{self, Session};
use worker::Env;

use crate::error::ApiError;
use crate::runtime::now_ms;
use crate::runtime::sha256_hex;
use crate::site::Site;

/// The KV namespace holding the tombstones.
const BINDING: &str = "CONFIG";

fn tombstone(id: &str) -> String {
    format!("mcp-ended:{}", sha256_hex(id))
}

/// A new session id for `site` at protocol `version`.
pub(crate) fn issue(site: &Site, version: &str) -> Result<String, ApiError> {
    let mut nonce = [0u8; 16];
    crate::runtime::random_bytes(&mut nonce)?;
    Ok(session::issue(
        site.secret_key_hash.as_bytes(),
        &site.id,
        version,
        now_ms(),
        &nonce,
    ))
}

/// The session `id` names for `site`: `None` when it does not verify, has expired or was
/// ended.
pub(crate) async fn find(env: &Env, site: &Site, id: &str) -> Result<Option<Session>, ApiError> {
    let Ok(found) = session::verify(site.secret_key_hash.as_bytes(), &site.id, id, now_ms()) else {
        return Ok(None);
    };
    let ended = env.kv(BINDING)?.get(&tombstone(id)).text().await?;
    Ok(ended.is_none().then_some(found))
}

/// End session `id` (already found): later requests naming it get 404.
pub(crate) async fn end(env: &Env, id: &str, found: &Session) -> Result<(), ApiError> {
    let left_secs = found.expires_ms.saturating_sub(now_ms()) / 1000 + 1;
    env.kv(BINDING)?
        .put(&tombstone(id), "1")?
        .expiration_ttl(left_secs.max(u64::from(MIN_TTL_SECONDS)))
        .execute()
        .await?;
    Ok(())
}
