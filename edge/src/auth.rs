//! Who is calling: site keys, the operator token, origins and rate limits.
//!
//! - A site's **public key** (`pk_…`, sent by the widget as `X-API-Key`) is accepted only
//!   on behalf of a page of an origin the site allows (see [`check_origin`]), and is
//!   rate-limited per site and client address (see [`rate_limit`]).
//! - A site's **secret key** (`sk_…`) is for server-to-server calls and the site's admin
//!   routes (`X-API-Key` or `Authorization: Bearer`).
//! - The **operator token** (Worker secret `OPERATOR_TOKEN`) creates sites.
//!
//! - A **user token** (`X-User-Token`, signed by the merchant's backend with the site's
//!   user-token secret; see `concierge_core::identity`) says which user of the site a
//!   request speaks for ([`visitor`]).
//!
//! Keys are stored as SHA-256 digests and compared in constant time. Who may call a route
//! is a type (`callers`: [`Open`], [`Operator`], [`SecretCaller`], [`AnyKeyCaller`],
//! [`Admitted`]), named by the route table.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::{Conversation, Scope};
use concierge_core::identity::{self, UserIdentity};

use worker::{Env, Method, Request};

use crate::bindings::d1_sites;
use crate::bindings::d1_store::D1Store;
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::site::{self, KeyKind, Site};

mod admission;
mod callers;
pub(crate) mod draft;
pub(crate) use admission::Admission;
pub(crate) use callers::{Access, Admitted, AnyKeyCaller, Open, Operator, SecretCaller};

/// A verified site key: its site and kind (what [`SecretCaller`] and [`AnyKeyCaller`] hold).
#[derive(Debug)]
pub(crate) struct Caller {
    /// The site the key belongs to.
    pub site: Site,
    /// Which key was presented.
    pub kind: KeyKind,
}

pub(crate) use crate::runtime::sha256_hex;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compare two byte strings in time independent of where they differ.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    core::hint::black_box(diff) == 0
}

/// A new random key with `prefix` (`pk_` or `sk_`): 192 bits from the platform CSPRNG.
pub(crate) fn new_key(prefix: &str) -> Result<String, ApiError> {
    let mut bytes = [0u8; 24];
    crate::runtime::random_bytes(&mut bytes)?;
    Ok(format!("{prefix}{}", hex(&bytes)))
}

/// The key the request presents: `X-API-Key`, else `Authorization: Bearer`.
fn presented_key(req: &Request) -> Option<String> {
    let headers = req.headers();
    if let Ok(Some(key)) = headers.get("x-api-key") {
        return Some(key.trim().to_string());
    }
    let auth = headers.get("authorization").ok().flatten()?;
    auth.strip_prefix("Bearer ").map(|k| k.trim().to_string())
}

/// Which site keys a route accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// Only the site's secret key.
    Secret,
    /// The secret key or the public key (from an allowed origin).
    Any,
}

/// The site key the request presents, verified (and, for a public key, its origin) —
/// without its rate limits: they are the [`Admission`] returned, for the caller to check
/// before it stores or does anything costly (a turn checks it while it reads the
/// conversation).
async fn admitted_caller(
    req: &Request,
    env: &Env,
    keys: Keys,
) -> Result<(Caller, Admission), ApiError> {
    let key = presented_key(req).ok_or(ApiError::Unauthorized)?;
    let kind = if key.starts_with("pk_") {
        KeyKind::Public
    } else if key.starts_with("sk_") {
        KeyKind::Secret
    } else {
        return Err(ApiError::Unauthorized);
    };
    let (site, draft_key) = site_with_key(env, kind, &key).await?;
    if kind == KeyKind::Public {
        if keys == Keys::Secret {
            return Err(ApiError::Forbidden(
                "This route needs the site's secret key.",
            ));
        }
        check_origin(req, env, &site)?;
    }
    // After the origin check: the live origins decide where a public key (a draft key
    // too) may be used.
    let site = if draft_key {
        site.drafted()
    } else {
        draft::select(req, site, kind)?
    };
    let admission = Admission::new(req, env, &site, kind)?;
    Ok((Caller { site, kind }, admission))
}

/// [`admitted_caller`] with its rate limits checked.
async fn checked_caller(req: &Request, env: &Env, keys: Keys) -> Result<Caller, ApiError> {
    let (caller, admission) = admitted_caller(req, env, keys).await?;
    admission.check().await?;
    Ok(caller)
}

/// The site whose `kind` key is `key`, and whether `key` is one of its draft keys
/// (`draft`; the live site is returned); `Unauthorized` when there is none.
async fn site_with_key(env: &Env, kind: KeyKind, key: &str) -> Result<(Site, bool), ApiError> {
    if kind == KeyKind::Public
        && let Some(site) = draft::site_for_key(env, key).await?
    {
        return Ok((site, true));
    }
    let hash = sha256_hex(key);
    let site = d1_sites::find_by_key_hash(env, kind, &hash)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    let stored = match kind {
        KeyKind::Public => &site.public_key_hash,
        KeyKind::Secret => &site.secret_key_hash,
    };
    if !constant_time_eq(stored.as_bytes(), hash.as_bytes()) {
        return Err(ApiError::Unauthorized);
    }
    Ok((site, false))
}

/// The site whose public key the panel page is asked for (`/chat?site_key=pk_…`).
pub(crate) async fn panel_site(req: &Request, env: &Env) -> Result<Site, ApiError> {
    let url = req.url()?;
    let key = url
        .query_pairs()
        .find(|(name, _)| name == "site_key")
        .map(|(_, value)| value.trim().to_string())
        .filter(|key| key.starts_with("pk_"))
        .ok_or(ApiError::Unauthorized)?;
    site_with_key(env, KeyKind::Public, &key)
        .await
        .map(|(site, _)| site)
}

/// The request header in which the panel names the origin of the page framing it.
const EMBEDDER_HEADER: &str = "x-embedder-origin";

/// The origins the Worker itself is served at (var `WORKER_ORIGINS`, separated by spaces
/// or commas), where the panel runs. Configured, never taken from the request's `Host`,
/// which the client chooses.
pub(crate) fn own_origins(env: &Env) -> Vec<String> {
    let configured = env
        .var("WORKER_ORIGINS")
        .map(|v| v.to_string())
        .unwrap_or_default();
    configured
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(site::normalize_origin)
        .collect()
}

/// A public key is usable only on behalf of a page whose origin the site allows, compared
/// exactly (scheme, host and port):
/// - the page itself calling the API: its browser sends that page's `Origin`;
/// - the panel, from the Worker's own origin ([`own_origins`]), naming the page framing it
///   in [`EMBEDDER_HEADER`]. Its writes carry `Origin` like any browser write; its reads
///   (`GET`, which browsers send same-origin without `Origin`) qualify only when sent to
///   one of the Worker's own origins and marked `Sec-Fetch-Site: same-origin` — never on
///   that mark alone.
///
/// The panel page itself can be framed only by the site's origins (`frame-ancestors`,
/// `routes::widget::panel`), so the embedder it names is the page it really runs in.
fn check_origin(req: &Request, env: &Env, site: &Site) -> Result<(), ApiError> {
    let headers = req.headers();
    let header = |name: &str| headers.get(name).ok().flatten();
    let allowed = |origin: &str| site.config.allowed_origins.iter().any(|o| o == origin);
    let own = own_origins(env);
    let from_panel = match header("origin") {
        Some(origin) if allowed(&origin) => return Ok(()),
        Some(origin) => own.contains(&origin),
        None => {
            let read = matches!(req.method(), Method::Get | Method::Head);
            let same_origin = header("sec-fetch-site").as_deref() == Some("same-origin");
            let sent_to_own = req
                .url()
                .is_ok_and(|url| own.contains(&url.origin().ascii_serialization()));
            read && same_origin && sent_to_own
        }
    };
    if !from_panel {
        return Err(ApiError::Forbidden(if header("origin").is_some() {
            "This origin is not allowed for this site."
        } else {
            "A public key can only be used from a browser on an allowed origin."
        }));
    }
    match header(EMBEDDER_HEADER) {
        Some(embedder) if allowed(&embedder) => Ok(()),
        _ => Err(ApiError::Forbidden(
            "The page embedding the chat is not on an origin allowed for this site.",
        )),
    }
}

/// Rate limits, through the Workers rate-limiting bindings (counted per Cloudflare
/// location; limits in `wrangler.toml`), after the key is verified so that requests
/// without a valid key cannot use up a site's budget:
/// - a public-key request counts first per site and client (`PUBLIC_RATE_LIMIT`), so one
///   visitor cannot use up the site's budget alone; a client is its IPv4 address, or its
///   IPv6 address's `/64` ([`client_key`]), so one subscriber's many addresses count once;
/// - every public-key request counts per site (`SITE_RATE_LIMIT`): the ceiling on what a
///   site's visitors can cost, however many clients they are;
/// - every secret-key request counts per site against a budget of its own
///   (`SECRET_RATE_LIMIT`), so visitors, however many, never lock the merchant's console
///   and servers out;
/// - starting a conversation with a public key has its own, tighter per-client limit
///   ([`limit_conversation_start`]).
///
/// A public-key request without a client address is refused (403) rather than put in a
/// bucket shared by all such requests; Cloudflare sets `CF-Connecting-IP` on every request
/// it serves (and `wrangler dev` too), so only a misrouted request lacks one. A limiter
/// that fails (binding missing or erroring) fails closed (503): a misconfigured deployment
/// shows at once instead of serving without limits.
/// `POST /conversations` with a public key: at most a few new conversations per minute per
/// site and client address (`CONVERSATION_RATE_LIMIT`), so anonymous visitors cannot fill
/// the store. Secret-key callers (the merchant's servers) are bounded by the site ceiling.
pub(crate) async fn limit_conversation_start(
    req: &Request,
    env: &Env,
    caller: &Caller,
) -> Result<(), ApiError> {
    if caller.kind != KeyKind::Public {
        return Ok(());
    }
    let client = client_key(req)?;
    let key = format!("{}:{client}", caller.site.id);
    limit(env, "CONVERSATION_RATE_LIMIT", &key).await
}

/// The key the client is limited under: its address as Cloudflare reports it, an IPv6
/// address cut to its `/64` (`concierge_core::client::client_key`). A request without an
/// address, or with one that is not an IP address, is refused.
pub(crate) fn client_key(req: &Request) -> Result<String, ApiError> {
    req.headers()
        .get("cf-connecting-ip")
        .ok()
        .flatten()
        .and_then(|ip| concierge_core::client::client_key(&ip))
        .ok_or(ApiError::Forbidden(
            "A public key can only be used by a client with a known address.",
        ))
}

/// One count against limiter `binding` for `key`; fails closed.
async fn limit(env: &Env, binding: &str, key: &str) -> Result<(), ApiError> {
    match crate::bindings::rate_limit::allow(env, binding, key).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(ApiError::RateLimited),
        Err(err) => {
            let line = serde_json::json!({"level": "error", "msg": "rate limiter unavailable",
                "binding": binding, "error": err.to_string()});
            worker::console_error!("{line}");
            Err(ApiError::Unavailable)
        }
    }
}

/// Check the operator token (`Authorization: Bearer <OPERATOR_TOKEN>`).
fn operator(req: &Request, env: &Env) -> Result<(), ApiError> {
    let expected = env
        .secret("OPERATOR_TOKEN")
        .map(|s| s.to_string())
        .or_else(|_| env.var("OPERATOR_TOKEN").map(|v| v.to_string()))
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or(ApiError::Forbidden(
            "Site creation is disabled: no operator token is configured.",
        ))?;
    let presented = presented_key(req).ok_or(ApiError::Unauthorized)?;
    // Compare digests so the comparison length does not depend on the presented token.
    if constant_time_eq(
        sha256_hex(&presented).as_bytes(),
        sha256_hex(&expected).as_bytes(),
    ) {
        Ok(())
    } else {
        Err(ApiError::Unauthorized)
    }
}

/// The request header carrying a signed user token.
const USER_TOKEN_HEADER: &str = "x-user-token";

/// The user a request speaks for, inside its site.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) enum Visitor {
    /// A secret-key call without a user token: the site's own server, which reaches every
    /// conversation of its site (it can state any identity anyway).
    Site,
    /// A user verified by a signed token, or anonymous (`None`): reaches only the
    /// conversations created with the same identity.
    User(Option<UserIdentity>),
}

impl Visitor {
    /// Whether this visitor may reach `conversation` (of the caller's site).
    pub(crate) fn may_access(&self, conversation: &Conversation) -> bool {
        match self {
            Self::Site => true,
            Self::User(identity) => conversation.may_access(identity.as_ref()),
        }
    }
}

/// The request's signed user token (`X-User-Token`, an empty value counting as none),
/// verified under the site's user-token secret: `None` without one; 401
/// `invalid_user_token` when it does not verify or the site has no secret.
pub(crate) fn user_token(
    req: &Request,
    env: &Env,
    site: &Site,
) -> Result<Option<UserIdentity>, ApiError> {
    let Some(token) = req
        .headers()
        .get(USER_TOKEN_HEADER)
        .ok()
        .flatten()
        .filter(|t| !t.trim().is_empty())
    else {
        return Ok(None);
    };
    let secret = site
        .user_token_secret(env)?
        .ok_or(ApiError::InvalidUserToken(
            "This site accepts no user tokens: it has no user-token secret \
         (POST /admin/site/user-token-secret creates one).",
        ))?;
    let now_secs = crate::runtime::now_ms() / 1000;
    identity::verify_user_token(token.trim(), secret.as_bytes(), now_secs)
        .map(Some)
        .map_err(|err| ApiError::InvalidUserToken(err.message()))
}

/// When the request's user token expires (Unix ms), if it has one: call it only once
/// [`user_token`] accepted it.
pub(crate) fn user_token_expiry_ms(req: &Request) -> Option<u64> {
    let token = req.headers().get(USER_TOKEN_HEADER).ok().flatten()?;
    identity::user_token_expiry(token.trim()).map(|secs| secs.saturating_mul(1000))
}

/// Who `caller`'s request speaks for: the user of its token; without one, the site's own
/// server for a secret key, and an anonymous visitor for a public key.
pub(crate) fn visitor(req: &Request, env: &Env, caller: &Caller) -> Result<Visitor, ApiError> {
    match (user_token(req, env, &caller.site)?, caller.kind) {
        (Some(identity), _) => Ok(Visitor::User(Some(identity))),
        (None, KeyKind::Secret) => Ok(Visitor::Site),
        (None, KeyKind::Public) => Ok(Visitor::User(None)),
    }
}

/// The conversation `scope` names, if it exists on that site and `visitor` may reach it.
/// Every surface answers "not found" alike for a missing conversation, another site's, and
/// another identity's.
pub(crate) async fn reachable_conversation(
    store: &D1Store,
    scope: Scope<'_>,
    visitor: &Visitor,
) -> Result<Option<Conversation>, ApiError> {
    let conversation = store
        .load_conversation(scope)
        .await
        .map_err(ApiError::store)?;
    Ok(conversation.filter(|conversation| visitor.may_access(conversation)))
}

/// 404 unless conversation `conversation_id` of site `site_id` exists and `visitor` may
/// reach it.
pub(crate) async fn reachable(
    services: &Services,
    site_id: &str,
    conversation_id: &str,
    visitor: &Visitor,
) -> Result<(), ApiError> {
    let scope = Scope::new(site_id, conversation_id);
    reachable_conversation(&services.store, scope, visitor)
        .await?
        .map(|_| ())
        .ok_or(ApiError::NotFound)
}
