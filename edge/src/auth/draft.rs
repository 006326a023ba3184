//! Running a site's draft (issue 42). A request runs the draft, never the live
//! configuration, only when:
//! - it comes with the site's **secret key** and `X-Concierge-Draft: 1` ([`DRAFT_HEADER`]:
//!   the merchant's servers, CI); with a public key that header is refused (403);
//! - or it comes with a **draft key** (`pk_draft_…`, from `POST /admin/site/draft/key`
//!   with the secret key): a public key for the draft, which the console's Try it gives
//!   the real panel in place of the site's public key. Like a public key it works only
//!   from the site's allowed origins, with the visitors' rate limits; it names its site and
//!   its expiry, with an HMAC of both under the digest of the site's secret key (which never
//!   leaves D1), so only a secret-key holder can make one, and rotating the keys voids
//!   every draft key.
//!
//! A visitor's widget has the site's public key: visitors are always answered by the live
//! configuration.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use worker::{Env, Request};

use crate::error::ApiError;
use crate::site::{KeyKind, Site};

/// The request header with which the secret key runs the draft.
pub(crate) const DRAFT_HEADER: &str = "x-concierge-draft";

/// How long a draft key works, in seconds.
pub(crate) const KEY_SECS: u64 = 12 * 3600;

/// How a draft key starts (a public key's prefix, so the widget and the panel page take it
/// as one).
const PREFIX: &str = "pk_draft_";

fn mac(site: &Site, expires_at: u64) -> Hmac<Sha256> {
    let mut mac = match Hmac::<Sha256>::new_from_slice(site.secret_key_hash.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts every key length"),
    };
    mac.update(format!("concierge-draft\n{}\n{expires_at}", site.id).as_bytes());
    mac
}

/// A draft key for `site`, working until `expires_at` (Unix seconds).
pub(crate) fn key(site: &Site, expires_at: u64) -> String {
    let tag = mac(site, expires_at).finalize().into_bytes();
    let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{expires_at}_{}_{hex}", site.id)
}

/// The live site whose draft key `key` is: `Ok(None)` when `key` is not a draft key;
/// 401 when it is one that does not verify, has expired, or names no site.
pub(crate) async fn site_for_key(env: &Env, key: &str) -> Result<Option<Site>, ApiError> {
    let Some(rest) = key.strip_prefix(PREFIX) else {
        return Ok(None);
    };
    let parsed = rest.split_once('_').and_then(|(expiry, rest)| {
        let (site_id, hex) = rest.rsplit_once('_')?;
        Some((expiry.parse::<u64>().ok()?, site_id, hex))
    });
    let Some((expires_at, site_id, hex)) = parsed else {
        return Err(ApiError::Unauthorized);
    };
    let now = crate::runtime::now_ms() / 1000;
    if expires_at <= now || expires_at > now + KEY_SECS || hex.len() != 64 {
        return Err(ApiError::Unauthorized);
    }
    let tag = (0..32)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()
        .ok_or(ApiError::Unauthorized)?;
    let site = crate::bindings::d1_sites::find_by_id(env, site_id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    mac(&site, expires_at)
        .verify_slice(&tag)
        .map_err(|_| ApiError::Unauthorized)?;
    Ok(Some(site))
}

/// `site` as the request selects it: its draft when [`DRAFT_HEADER`] asks for it with the
/// secret key (403 with a public key), else itself.
pub(crate) fn select(req: &Request, site: Site, kind: KeyKind) -> Result<Site, ApiError> {
    let value = req.headers().get(DRAFT_HEADER).ok().flatten();
    let asked = value.is_some_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    match (asked, kind) {
        (false, _) => Ok(site),
        (true, KeyKind::Secret) => Ok(site.drafted()),
        (true, KeyKind::Public) => Err(ApiError::Forbidden(
            "Only the site's secret key runs the draft (the console's Try it uses a draft \
             key from POST /admin/site/draft/key); visitors always get the live configuration.",
        )),
    }
}
