//! A site's own LLM API key, sealed at rest.
//!
//! The key is encrypted with AES-256-GCM under a key derived from the Worker secret
//! `SITE_KEYS_SECRET`, with a fresh random 96-bit nonce each time and the site id as
//! associated data (a sealed key copied into another site's row does not open). Stored as
//! `v1.<base64url(nonce ‖ ciphertext ‖ tag)>`. Without the secret, keys are refused rather
//! than stored in the clear.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use worker::Env;

use crate::error::ApiError;

/// The Worker secret the sealing key is derived from.
const SECRET_NAME: &str = "SITE_KEYS_SECRET";
/// Shorter secrets are treated as missing: the sealing key is only as strong as this.
const MIN_SECRET_CHARS: usize = 32;
/// Version tag of the stored form.
const PREFIX: &str = "v1.";
const NONCE_BYTES: usize = 12;

/// Why a sealed key could not be opened (logged; the site's calls then go without a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// `SITE_KEYS_SECRET` is missing or too short.
    NoSecret,
    /// Not a `v1.` value, or not base64.
    Malformed,
    /// Wrong secret, another site's value, or tampered with.
    Rejected,
}

impl OpenError {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::NoSecret => "no SITE_KEYS_SECRET configured",
            Self::Malformed => "malformed sealed key",
            Self::Rejected => "sealed key does not open with this secret for this site",
        }
    }
}

fn cipher(env: &Env) -> Option<Aes256Gcm> {
    let secret = env
        .secret(SECRET_NAME)
        .map(|s| s.to_string())
        .ok()
        .filter(|s| s.chars().count() >= MIN_SECRET_CHARS)?;
    let mut hasher = Sha256::new();
    hasher.update(b"concierge/site-llm-key/v1\0");
    hasher.update(secret.as_bytes());
    let key: [u8; 32] = hasher.finalize().into();
    Some(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&key)))
}

/// Seal `plaintext` for site `site_id` (its LLM key).
pub(crate) fn seal(env: &Env, site_id: &str, plaintext: &str) -> Result<String, ApiError> {
    seal_bound(env, site_id, plaintext).map_err(|_| {
        ApiError::Forbidden(
            "This service cannot store LLM API keys: no encryption secret is configured.",
        )
    })
}

/// Seal `plaintext` bound to `binding` (the associated data: it opens only with the same
/// binding). `Err` when sealing is not configured.
pub(crate) fn seal_bound(env: &Env, binding: &str, plaintext: &str) -> Result<String, ApiError> {
    let cipher = cipher(env).ok_or(ApiError::Forbidden(
        "This service cannot store secrets: no encryption secret is configured.",
    ))?;
    let mut nonce = [0u8; NONCE_BYTES];
    crate::runtime::random_bytes(&mut nonce)?;
    let payload = Payload {
        msg: plaintext.as_bytes(),
        aad: binding.as_bytes(),
    };
    let sealed = cipher
        .encrypt(Nonce::from_slice(&nonce), payload)
        .map_err(|_| ApiError::Internal(worker::Error::RustError("sealing failed".into())))?;
    let mut bytes = nonce.to_vec();
    bytes.extend_from_slice(&sealed);
    Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// Open a value made by [`seal`] for the same site.
pub(crate) fn open(env: &Env, site_id: &str, sealed: &str) -> Result<String, OpenError> {
    open_bound(env, site_id, sealed)
}

/// Open a value made by [`seal_bound`] with the same binding.
pub(crate) fn open_bound(env: &Env, binding: &str, sealed: &str) -> Result<String, OpenError> {
    let cipher = cipher(env).ok_or(OpenError::NoSecret)?;
    let bytes = sealed
        .strip_prefix(PREFIX)
        .and_then(|b64| URL_SAFE_NO_PAD.decode(b64).ok())
        .filter(|b| b.len() > NONCE_BYTES)
        .ok_or(OpenError::Malformed)?;
    let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
    let payload = Payload {
        msg: ciphertext,
        aad: binding.as_bytes(),
    };
    let plaintext = cipher
        .decrypt(Nonce::from_slice(nonce), payload)
        .map_err(|_| OpenError::Rejected)?;
    String::from_utf8(plaintext).map_err(|_| OpenError::Rejected)
}
