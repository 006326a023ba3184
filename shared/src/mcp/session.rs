//! MCP session ids that verify without storage.
//!
//! A session id is `{version}.{expires}.{nonce}.{mac}`: the negotiated protocol version,
//! the expiry (Unix milliseconds, lowercase hex), 16 random bytes (hex), and the unpadded
//! base64url HMAC-SHA256 of `mcp-session\n{site_id}\n` followed by the first three parts,
//! keyed with a secret of the site's (the Worker uses its secret key's digest, so rotating
//! the key ends every session). Only visible ASCII, as the transport requires.
//!
//! ```
//! use concierge_core::mcp::session::{issue, verify, SessionError};
//!
//! let id = issue(b"site-secret", "site-1", "2025-06-18", 1_000, &[7; 16]);
//! let session = verify(b"site-secret", "site-1", &id, 2_000).unwrap();
//! assert_eq!(session.version, "2025-06-18");
//! assert_eq!(verify(b"site-secret", "site-2", &id, 2_000), Err(SessionError::BadSignature));
//! ```

use alloc::format;
use alloc::string::String;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a session lasts after `initialize` (24 hours); then the client initializes
/// again.
pub const SESSION_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The longest session id accepted, in bytes.
pub const MAX_SESSION_ID_BYTES: usize = 160;

/// A verified session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Session {
    /// The protocol version negotiated at `initialize`.
    pub version: &'static str,
    /// When it ends, in Unix milliseconds.
    pub expires_ms: u64,
}

/// Why a session id does not verify (each is answered as an unknown session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionError {
    /// Not of the shape above, or naming an unsupported version.
    Malformed,
    /// Not issued for this site and secret, or altered.
    BadSignature,
    /// Past its expiry.
    Expired,
}

type HmacSha256 = Hmac<Sha256>;

fn signature(secret: &[u8], site_id: &str, payload: &str) -> HmacSha256 {
    let mut mac = match HmacSha256::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts every key length"),
    };
    mac.update(b"mcp-session\n");
    mac.update(site_id.as_bytes());
    mac.update(b"\n");
    mac.update(payload.as_bytes());
    mac
}

/// A new session id for `site_id` at protocol `version`, issued at `now_ms`, with 16
/// random bytes from the caller.
pub fn issue(secret: &[u8], site_id: &str, version: &str, now_ms: u64, nonce: &[u8; 16]) -> String {
    let mut payload = format!("{version}.{:x}.", now_ms.saturating_add(SESSION_TTL_MS));
    for byte in nonce {
        payload.push_str(&format!("{byte:02x}"));
    }
    let mac = signature(secret, site_id, &payload).finalize().into_bytes();
    format!("{payload}.{}", URL_SAFE_NO_PAD.encode(mac))
}

/// Verifies session id `id` for `site_id` at `now_ms`: the signature (constant time)
/// first, then the expiry.
pub fn verify(
    secret: &[u8],
    site_id: &str,
    id: &str,
    now_ms: u64,
) -> Result<Session, SessionError> {
    if id.len() > MAX_SESSION_ID_BYTES {
        return Err(SessionError::Malformed);
    }
    let (payload, mac) = id.rsplit_once('.').ok_or(SessionError::Malformed)?;
    let mac = URL_SAFE_NO_PAD
        .decode(mac)
        .map_err(|_| SessionError::Malformed)?;
    signature(secret, site_id, payload)
        .verify_slice(&mac)
        .map_err(|_| SessionError::BadSignature)?;
    let mut parts = payload.split('.');
    let (Some(version), Some(expires), Some(_nonce), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(SessionError::Malformed);
    };
    let version = super::supported(version).ok_or(SessionError::Malformed)?;
    let expires_ms = u64::from_str_radix(expires, 16).map_err(|_| SessionError::Malformed)?;
    if expires_ms <= now_ms {
        return Err(SessionError::Expired);
    }
    Ok(Session {
        version,
        expires_ms,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const SECRET: &[u8] = b"0123456789abcdef";

    #[test]
    fn an_issued_id_verifies_for_its_site_until_it_expires() {
        let id = issue(SECRET, "s1", "2025-11-25", 5_000, &[0xab; 16]);
        assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
        assert!(id.len() <= MAX_SESSION_ID_BYTES);
        let session = verify(SECRET, "s1", &id, 5_001).unwrap();
        assert_eq!(session.version, "2025-11-25");
        assert_eq!(session.expires_ms, 5_000 + SESSION_TTL_MS);
        assert_eq!(
            verify(SECRET, "s1", &id, 5_000 + SESSION_TTL_MS),
            Err(SessionError::Expired)
        );
    }

    #[test]
    fn another_site_secret_or_any_edit_does_not_verify() {
        let id = issue(SECRET, "s1", "2025-03-26", 0, &[1; 16]);
        assert_eq!(
            verify(SECRET, "s2", &id, 1),
            Err(SessionError::BadSignature)
        );
        assert_eq!(
            verify(b"another", "s1", &id, 1),
            Err(SessionError::BadSignature)
        );
        let later = id.replacen("2025-03-26", "2025-06-18", 1);
        assert_eq!(
            verify(SECRET, "s1", &later, 1),
            Err(SessionError::BadSignature)
        );
        let nonces_differ = issue(SECRET, "s1", "2025-03-26", 0, &[2; 16]);
        assert_ne!(id, nonces_differ);
    }

    #[test]
    fn junk_is_malformed() {
        for junk in ["", "abc", "a.b.c.d", &"x".repeat(MAX_SESSION_ID_BYTES + 1)] {
            assert!(verify(SECRET, "s1", junk, 0).is_err(), "{junk}");
        }
        // Signed but naming a version the server does not speak.
        let id = issue(SECRET, "s1", "2026-07-28", 0, &[3; 16]);
        assert_eq!(verify(SECRET, "s1", &id, 1), Err(SessionError::Malformed));
    }
}
