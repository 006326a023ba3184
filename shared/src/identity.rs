//! Who a visitor is, inside a site: signed user tokens and the identity a conversation
//! is bound to.
//!
//! The site comes from its key; a *user* of the site comes from exactly one of:
//! - a **signed user token** (`X-User-Token`), minted by the merchant's backend:
//!   `base64url(claims JSON) "." base64url(HMAC-SHA256(secret, first part))`, unpadded
//!   base64url, the MAC computed over the first part's ASCII text exactly as sent, keyed
//!   with the site's user-token secret (its ASCII bytes). Claims:
//!   `{"sub": "…", "role"?: "…", "permissions"?: ["…"], "department"?: "…", "exp": <Unix seconds>}`;
//!   other claims are ignored. A token lives at most [`MAX_TOKEN_LIFETIME_SECS`] (24 hours):
//!   one without `exp`, or whose `exp` is further from now than that (give or take
//!   [`CLOCK_SKEW_SECS`]), is refused, so a token that leaks stops working within a day.
//!   Checked by [`verify_user_token`];
//! - a call with the site's **secret key** whose body states the identity (checked with
//!   [`UserIdentity::new`], the same shape rules).
//!
//! Anything else (a public-key call without a valid token) is anonymous. A conversation
//! stores the identity it was created with, and only the same identity reaches it again
//! ([`may_access`]).
//!
//! ```
//! use concierge_core::identity::{sign_user_token, verify_user_token, TokenError};
//!
//! let secret = b"uts_0123456789abcdef0123456789abcdef";
//! let token = sign_user_token(br#"{"sub":"u-42","role":"TENANT","exp":2000003600}"#, secret);
//! let identity = verify_user_token(&token, secret, 2_000_000_000).unwrap();
//! assert_eq!(identity.sub, "u-42");
//! assert_eq!(identity.role.as_deref(), Some("TENANT"));
//! assert_eq!(
//!     verify_user_token(&token, secret, 2_000_003_600),
//!     Err(TokenError::Expired)
//! );
//! // Minted for longer than 24 hours: refused.
//! assert_eq!(
//!     verify_user_token(&token, secret, 1_900_000_000),
//!     Err(TokenError::LivesTooLong)
//! );
//! ```

use alloc::string::String;
use alloc::vec::Vec;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use core::fmt;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The longest token accepted, in bytes (header values beyond this are refused unread).
pub const MAX_TOKEN_BYTES: usize = 4096;
/// The longest a user token may live: its `exp` at most this many seconds from now.
pub const MAX_TOKEN_LIFETIME_SECS: u64 = 24 * 60 * 60;
/// How far the merchant's clock may run ahead of the Worker's: an `exp` up to
/// [`MAX_TOKEN_LIFETIME_SECS`] plus this from now is accepted.
pub const CLOCK_SKEW_SECS: u64 = 5 * 60;
/// The longest subject (`sub`, a body's `user_id`), in characters.
pub const MAX_SUBJECT_CHARS: usize = 128;
/// The longest role, in characters.
pub const MAX_ROLE_CHARS: usize = 64;
/// The most permission scopes.
pub const MAX_PERMISSIONS: usize = 32;
/// The longest permission scope, in characters.
pub const MAX_PERMISSION_CHARS: usize = 64;
/// The longest department, in characters.
pub const MAX_DEPARTMENT_CHARS: usize = 128;

/// A verified user of a site: from a signed token or a secret-key call's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserIdentity {
    /// The merchant's id for the user (the token's `sub`).
    pub sub: String,
    /// The user's role (e.g. `GUEST`, `TENANT`, `LANDLORD`), when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Permission scopes, when stated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
    /// The user's department, when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub department: Option<String>,
}

/// Which claim (or body field) has the wrong shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimError {
    /// `sub` / `user_id`: 1 to [`MAX_SUBJECT_CHARS`] characters, no control characters.
    Subject,
    /// `role`: 1 to [`MAX_ROLE_CHARS`] characters, no control characters.
    Role,
    /// `permissions`: at most [`MAX_PERMISSIONS`] scopes of 1 to [`MAX_PERMISSION_CHARS`]
    /// characters, no control characters.
    Permissions,
    /// `department`: 1 to [`MAX_DEPARTMENT_CHARS`] characters, no control characters.
    Department,
}

impl ClaimError {
    /// A message for the caller naming the rule.
    pub fn message(self) -> &'static str {
        match self {
            Self::Subject => "`sub` (or `user_id`) must be 1 to 128 characters.",
            Self::Role => "`role` must be 1 to 64 characters.",
            Self::Permissions => "`permissions` must be at most 32 scopes of 1 to 64 characters.",
            Self::Department => "`department` must be 1 to 128 characters.",
        }
    }
}

/// Why a user token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    /// Longer than [`MAX_TOKEN_BYTES`].
    TooLong,
    /// Not `<base64url>.<base64url>`, or the signed claims are not the expected JSON.
    Malformed,
    /// The signature does not match (tampered with, or signed with another secret).
    BadSignature,
    /// `exp` is not in the future.
    Expired,
    /// No `exp`: a token must expire.
    NoExpiry,
    /// `exp` is more than [`MAX_TOKEN_LIFETIME_SECS`] (plus [`CLOCK_SKEW_SECS`]) from now.
    LivesTooLong,
    /// A claim has the wrong shape.
    Claim(ClaimError),
}

impl TokenError {
    /// A message for the caller (never echoes the token).
    pub fn message(self) -> &'static str {
        match self {
            Self::TooLong => "The user token is longer than 4096 bytes.",
            Self::Malformed => {
                "The user token is malformed: expected base64url(JSON claims).base64url(HMAC-SHA256), \
                 with `sub` and `exp` claims."
            }
            Self::BadSignature => {
                "The user token's signature does not match: it was changed, or signed with \
                 another secret than the site's current user-token secret."
            }
            Self::Expired => "The user token has expired (`exp` is in the past).",
            Self::NoExpiry => {
                "The user token has no `exp`: every token must expire, at most 24 hours after \
                 it is minted."
            }
            Self::LivesTooLong => {
                "The user token lives too long: its `exp` is more than 24 hours from now. \
                 Mint tokens that expire within 24 hours."
            }
            Self::Claim(claim) => claim.message(),
        }
    }
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TokenError {}

/// The signed claims, as sent (unknown claims ignored).
#[derive(Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    permissions: Option<Vec<String>>,
    #[serde(default)]
    department: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
}

fn fits(text: &str, max_chars: usize) -> bool {
    !text.is_empty() && text.chars().count() <= max_chars && !text.chars().any(char::is_control)
}

impl UserIdentity {
    /// An identity whose fields follow the shape rules (the token's and the body's).
    pub fn new(
        sub: String,
        role: Option<String>,
        permissions: Vec<String>,
        department: Option<String>,
    ) -> Result<Self, ClaimError> {
        if !fits(&sub, MAX_SUBJECT_CHARS) {
            return Err(ClaimError::Subject);
        }
        if role.as_deref().is_some_and(|r| !fits(r, MAX_ROLE_CHARS)) {
            return Err(ClaimError::Role);
        }
        if permissions.len() > MAX_PERMISSIONS
            || permissions.iter().any(|p| !fits(p, MAX_PERMISSION_CHARS))
        {
            return Err(ClaimError::Permissions);
        }
        if department
            .as_deref()
            .is_some_and(|d| !fits(d, MAX_DEPARTMENT_CHARS))
        {
            return Err(ClaimError::Department);
        }
        Ok(Self {
            sub,
            role,
            permissions,
            department,
        })
    }
}

/// Whether a caller with identity `caller` (`None`: anonymous) may reach a conversation
/// created with identity `owner` (`None`: anonymous): only the same subject, and an
/// anonymous conversation only anonymously. Role, permissions and department are not
/// compared: the conversation belongs to the user, whatever the user's role now.
pub fn may_access(owner: Option<&UserIdentity>, caller: Option<&UserIdentity>) -> bool {
    match (owner, caller) {
        (None, None) => true,
        (Some(owner), Some(caller)) => owner.sub == caller.sub,
        _ => false,
    }
}

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length.
    match HmacSha256::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts every key length"),
    }
}

/// Verify `token` under `secret` at `now_secs` (Unix seconds): the signature (compared in
/// constant time) before anything else is read, then the claims' JSON, the expiry (in the
/// future, and at most [`MAX_TOKEN_LIFETIME_SECS`] away) and the claims' shapes.
pub fn verify_user_token(
    token: &str,
    secret: &[u8],
    now_secs: u64,
) -> Result<UserIdentity, TokenError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(TokenError::TooLong);
    }
    let (payload, signature) = token.split_once('.').ok_or(TokenError::Malformed)?;
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| TokenError::Malformed)?;
    let mut check = mac(secret);
    check.update(payload.as_bytes());
    check
        .verify_slice(&signature)
        .map_err(|_| TokenError::BadSignature)?;
    let json = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| TokenError::Malformed)?;
    let claims: Claims = serde_json::from_slice(&json).map_err(|_| TokenError::Malformed)?;
    let exp = claims.exp.ok_or(TokenError::NoExpiry)?;
    if exp <= now_secs {
        return Err(TokenError::Expired);
    }
    if exp - now_secs > MAX_TOKEN_LIFETIME_SECS + CLOCK_SKEW_SECS {
        return Err(TokenError::LivesTooLong);
    }
    UserIdentity::new(
        claims.sub,
        claims.role,
        claims.permissions.unwrap_or_default(),
        claims.department,
    )
    .map_err(TokenError::Claim)
}

/// The expiry (`exp`, Unix seconds) a token states, read without checking it: only for a
/// token [`verify_user_token`] accepted (a live stream ends at its token's expiry).
pub fn user_token_expiry(token: &str) -> Option<u64> {
    if token.len() > MAX_TOKEN_BYTES {
        return None;
    }
    let (payload, _) = token.split_once('.')?;
    let json = URL_SAFE_NO_PAD.decode(payload).ok()?;
    serde_json::from_slice::<Claims>(&json).ok()?.exp
}

/// A token for `claims_json` under `secret`, as a merchant's backend mints it (for tests
/// and tools; the Worker only verifies).
pub fn sign_user_token(claims_json: &[u8], secret: &[u8]) -> String {
    let payload = URL_SAFE_NO_PAD.encode(claims_json);
    let mut signer = mac(secret);
    signer.update(payload.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(signer.finalize().into_bytes());
    let mut token = payload;
    token.push('.');
    token.push_str(&signature);
    token
}

/// Whether `c` steers bidirectional text (embeddings, overrides, isolates, marks): such a
/// character can make a label read as something else (`U+202E` turns `txt.exe` around).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// A `user_id` given in a request body (with a public key only a label nobody proved), as
/// it is kept: trimmed, 1 to [`MAX_SUBJECT_CHARS`] characters, without control or
/// bidirectional-control characters; `None` when it breaks the rule.
pub fn user_label(text: &str) -> Option<&str> {
    let label = text.trim();
    let fine = !label.is_empty()
        && label.chars().count() <= MAX_SUBJECT_CHARS
        && !label.chars().any(|c| c.is_control() || is_bidi_control(c));
    fine.then_some(label)
}

#[cfg(test)]
mod tests;
