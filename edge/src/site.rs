//! Sites (merchants): their configuration and keys. Their storage (D1 rows, the KV and
//! isolate caches, compare-and-swap writes) is `bindings::d1_sites`.
//!
//! A site row holds SHA-256 digests of its public and secret keys, never the keys. The
//! configuration (persona, LLM settings, allowed origins, starter prompts, and each
//! template's own settings, [`TemplateSettings`]) is JSON; a site's own LLM key in it is
//! sealed ([`sealed`]).

use concierge_core::handoff::{
    self, DEFAULT_TIME_ZONE, DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, MIN_WAIT_SECONDS, OfficeHours,
    check_hours,
};
use concierge_core::template::Template;
use serde::{Deserialize, Serialize};
use worker::Env;

use crate::error::ApiError;

pub(crate) mod caps;
pub(crate) mod endpoint;
pub(crate) mod local_time;
pub(crate) mod scripted;
pub(crate) mod sealed;

/// Answers are capped at this many tokens unless the site says otherwise: a chat widget
/// wants short answers, and a runaway model must not stream forever.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 1024;

/// LLM settings of a site; unset fields fall back to the Worker's vars.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct LlmSettings {
    /// `openai` (any OpenAI-compatible API) or `ollama`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Chat model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A site's own upstream key stored in the clear before keys were sealed. Still used
    /// (for the site's own endpoints only) and sealed on the site's next update. Never
    /// returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The site's own upstream key, sealed ([`sealed`]); sent only to the site's own
    /// endpoints. Never returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_sealed: Option<String>,
    /// Embeddings endpoint, when it differs from `base_url` (same protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_base_url: Option<String>,
    /// Embedding model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_model: Option<String>,
    /// Cap on answer length in tokens (default [`DEFAULT_MAX_TOKENS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// How long to wait for the first token before giving up (default: the Worker's
    /// `LLM_FIRST_TOKEN_TIMEOUT_MS`, 20 s); slow self-hosted models may need more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_timeout_ms: Option<u32>,
    /// Embedding dimensions (default 1024, bge-m3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_dimensions: Option<u32>,
}

/// A site's configuration, as merchants set it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct SiteConfig {
    /// Persona text (markdown; its `Greeting:` line is the greeting). Default: the template's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// Default language for greetings: `vi` or `en`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Upstream LLM settings.
    #[serde(default)]
    pub llm: LlmSettings,
    /// Origins (scheme://host[:port]) whose pages may use the public key.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Suggested first questions shown by the widget.
    #[serde(default)]
    pub starter_prompts: Vec<String>,
    /// Title shown in the widget header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The site's public key in the clear (it is in every page that embeds the widget),
    /// for the console's embed snippet; set when the site is created and when its keys
    /// are rotated. Absent for sites created before the console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// The secret the site's user tokens are signed with, sealed ([`sealed`]); set only by
    /// `POST /admin/site/user-token-secret`. Never returned by the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_token_secret_sealed: Option<String>,
    /// Handoff to a person: off unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<HandoffSettings>,
    /// Each template's own settings, under the template's name (`rental`, `guarded`, …).
    #[serde(flatten)]
    pub templates: TemplateSettings,
}

/// Each template's settings in a site's config, under the template's name, as the JSON
/// the template's edge code wrote (`templates/<t>/settings.rs` reads, checks and writes
/// its own; this layer names no template).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(transparent)]
pub(crate) struct TemplateSettings(serde_json::Map<String, serde_json::Value>);

impl TemplateSettings {
    /// The settings under `key`, if set (`null` is unset). Settings that no longer read
    /// as `T` (never written by this code) are logged and unset.
    pub(crate) fn get<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let value = self.0.get(key).filter(|v| !v.is_null())?;
        match T::deserialize(value) {
            Ok(settings) => Some(settings),
            Err(error) => {
                let line = serde_json::json!({"level": "error", "msg": "template settings unreadable",
                    "template": key, "detail": error.to_string()});
                worker::console_error!("{line}");
                None
            }
        }
    }

    /// Set (or, `None`, unset) the settings under `key`.
    pub(crate) fn set<T: Serialize>(&mut self, key: &str, settings: Option<&T>) {
        match settings.and_then(|s| serde_json::to_value(s).ok()) {
            Some(value) => self.0.insert(key.to_string(), value),
            None => self.0.remove(key),
        };
    }

    /// Keep only the settings under `keys` (others are not any template's).
    pub(crate) fn retain(&mut self, keys: &[&str]) {
        self.0.retain(|key, _| keys.contains(&key.as_str()));
    }
}

/// Handoff to a person (`PATCH /admin/site {"handoff": {…}}`, replaced whole). On, the
/// widget offers "talk to a person" and a visitor's request for one
/// ([`concierge_core::handoff::asks_for_person`]) flags the conversation for the console
/// instead of reaching the model (`object::handoff`). Sites that set only `enabled`
/// (before office hours existed) read with the defaults.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffSettings {
    /// Whether the widget offers "talk to a person" and requests reach a person.
    pub enabled: bool,
    /// How long a request waits for a person before the assistant says nobody is free
    /// and carries on, in seconds ([`MIN_WAIT_SECONDS`]..=[`MAX_WAIT_SECONDS`]).
    #[serde(default = "default_wait_seconds")]
    pub wait_seconds: u32,
    /// The IANA time zone office hours are read in (default `Asia/Ho_Chi_Minh`).
    #[serde(default = "default_time_zone")]
    pub time_zone: String,
    /// When a person may answer; `None` (`null`): at any time.
    #[serde(default)]
    pub office_hours: Option<Vec<OfficeHours>>,
}

fn default_wait_seconds() -> u32 {
    DEFAULT_WAIT_SECONDS
}

fn default_time_zone() -> String {
    DEFAULT_TIME_ZONE.to_string()
}

impl Default for HandoffSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            wait_seconds: DEFAULT_WAIT_SECONDS,
            time_zone: default_time_zone(),
            office_hours: None,
        }
    }
}

impl HandoffSettings {
    /// These settings checked as a site sets them (the time zone trimmed, kept as
    /// written: the runtime's canonical name may be an older one, `Asia/Saigon`); a 400
    /// naming the field otherwise.
    pub(crate) fn checked(mut self) -> Result<Self, ApiError> {
        if !(MIN_WAIT_SECONDS..=MAX_WAIT_SECONDS).contains(&self.wait_seconds) {
            return Err(ApiError::bad_request(format!(
                "`handoff.wait_seconds` must be {MIN_WAIT_SECONDS} to {MAX_WAIT_SECONDS}."
            )));
        }
        self.time_zone = self.time_zone.trim().to_string();
        if !local_time::known_zone(&self.time_zone) {
            return Err(ApiError::bad_request(format!(
                "`handoff.time_zone`: `{}` is not an IANA time zone (e.g. \"Asia/Ho_Chi_Minh\").",
                self.time_zone.chars().take(64).collect::<String>()
            )));
        }
        if let Some(hours) = &self.office_hours {
            check_hours(hours)
                .map_err(|why| ApiError::bad_request(format!("`handoff`: {why}.")))?;
        }
        Ok(self)
    }

    /// Whether a person may answer at `now_ms` (Unix milliseconds) by the office hours.
    /// A zone the runtime no longer knows (never stored by [`checked`](Self::checked))
    /// counts as always open: the visitor is then told a person will answer.
    pub(crate) fn open_at(&self, now_ms: u64) -> bool {
        let Some(hours) = self.office_hours.as_deref() else {
            return true;
        };
        local_time::weekday_minutes(&self.time_zone, now_ms)
            .is_none_or(|(weekday, minutes)| handoff::open_at(weekday, minutes, Some(hours)))
    }
}

/// A site as loaded for a request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Site {
    pub id: String,
    pub name: String,
    /// The template the site runs.
    pub template: Template,
    pub config: SiteConfig,
    pub public_key_hash: String,
    pub secret_key_hash: String,
    /// Creation time, Unix milliseconds (0 in a copy cached before it was recorded).
    #[serde(default)]
    pub created_at: u64,
    /// The catalog vocabulary learned from the site's knowledge documents (a `shop`
    /// site's; `bindings::catalog`), for its classifier.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub catalog: Vec<String>,
    /// The pending draft the merchant edits (`None`: the draft is the live configuration).
    /// Never what a visitor gets: only a request that selects the draft runs it
    /// ([`Site::drafted`], `auth::draft`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<Box<Snapshot>>,
    /// The number of the live configuration in the site's versions (0 in a copy cached
    /// before versions existed).
    #[serde(default)]
    pub version: u64,
    /// Whether this copy runs the draft (a request that selected it), not the live
    /// configuration.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drafted: bool,
}

/// A configuration as a draft or a published version holds it: what the merchant edits
/// (the name, the template and the configuration), without the site's keys (its public
/// key and sealed user-token secret, which are always the live row's).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Snapshot {
    pub name: String,
    pub template: Template,
    pub config: SiteConfig,
}

impl Snapshot {
    /// `site`'s live configuration as a snapshot (its keys left out).
    pub(crate) fn of(site: &Site) -> Self {
        let mut config = site.config.clone();
        config.public_key = None;
        config.user_token_secret_sealed = None;
        Self {
            name: site.name.clone(),
            template: site.template,
            config,
        }
    }

    /// This snapshot as `site`'s configuration, with `site`'s keys.
    pub(crate) fn apply_to(&self, site: &mut Site) {
        let public_key = site.config.public_key.take();
        let user_token_secret = site.config.user_token_secret_sealed.take();
        site.name = self.name.clone();
        site.template = self.template;
        site.config = self.config.clone();
        site.config.public_key = public_key;
        site.config.user_token_secret_sealed = user_token_secret;
    }
}

impl Site {
    /// This site running its draft (itself when no draft is pending): for a request that
    /// selected the draft (the console's Try it, a secret-key call), never a visitor's.
    pub(crate) fn drafted(mut self) -> Self {
        if let Some(draft) = self.draft.take() {
            draft.apply_to(&mut self);
        }
        self.drafted = true;
        self
    }

    /// The draft as a site (the live configuration when no draft is pending).
    pub(crate) fn draft_site(&self) -> Self {
        self.clone().drafted()
    }

    /// The site's own upstream key in the clear, if it has one that opens. A key that does
    /// not open (secret missing or changed) is logged and treated as absent: the site's
    /// calls then go without one, never with the operator's.
    pub(crate) fn llm_key(&self, env: &Env) -> Option<String> {
        let llm = &self.config.llm;
        let key = match &llm.api_key_sealed {
            Some(value) => match sealed::open(env, &self.id, value) {
                Ok(key) => Some(key),
                Err(err) => {
                    let line = serde_json::json!({"level": "error", "msg": "site LLM key unusable",
                        "site": self.id, "reason": err.as_str()});
                    worker::console_error!("{line}");
                    None
                }
            },
            None => llm.api_key.clone(),
        };
        key.filter(|k| !k.is_empty())
    }

    /// The secret the site's user tokens are signed with: `Ok(None)` when the site has
    /// none; an error when it has one that does not open (logged).
    pub(crate) fn user_token_secret(&self, env: &Env) -> Result<Option<String>, ApiError> {
        let Some(value) = &self.config.user_token_secret_sealed else {
            return Ok(None);
        };
        sealed::open_bound(env, &user_token_binding(&self.id), value)
            .map(Some)
            .map_err(|err| {
                let line = serde_json::json!({"level": "error", "msg": "user-token secret unusable",
                    "site": self.id, "reason": err.as_str()});
                worker::console_error!("{line}");
                ApiError::Unavailable
            })
    }

    /// Seal a key stored in the clear before keys were sealed (on the site's next update);
    /// left as it is when sealing is not configured.
    pub(crate) fn seal_legacy_key(&mut self, env: &Env) {
        let llm = &mut self.config.llm;
        let Some(plain) = llm.api_key.take() else {
            return;
        };
        if llm.api_key_sealed.is_some() {
            return;
        }
        match sealed::seal(env, &self.id, &plain) {
            Ok(value) => llm.api_key_sealed = Some(value),
            Err(_) => llm.api_key = Some(plain),
        }
    }
}

/// What a site's sealed user-token secret is bound to (so that it opens only as that
/// site's user-token secret, never as its LLM key or another site's).
pub(crate) fn user_token_binding(site_id: &str) -> String {
    format!("{site_id}#user-token-secret")
}

/// Which of a site's keys a digest is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Public,
    Secret,
}

/// Check and normalise an origin: `scheme://host[:port]`, no path. A host in Unicode
/// (`https://cửa-hàng.vn`) comes out in the ASCII form a browser sends in `Origin`.
pub(crate) fn normalize_origin(origin: &str) -> Option<String> {
    let url = worker::Url::parse(&ascii_host(origin)).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    let serialized = url.origin().ascii_serialization();
    (serialized != "null").then_some(serialized)
}

/// `url` with a Unicode host written as ASCII: each label lowercased and, when not ASCII,
/// Punycode-encoded (`xn--…`), as browsers send it. The Worker's URL parser is built
/// without Unicode domain tables (`idna_adapter` pinned to its table-free 1.0 line in
/// `Cargo.lock`: 45 KB of the Worker's gzip) and refuses non-ASCII hosts, so a merchant's
/// Unicode domain is turned into its ASCII name here, before parsing. The parser then judges
/// the ASCII name, the address a request really goes to. Anything else is left as it is.
pub(crate) fn ascii_host(url: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if url.is_ascii() {
        return Cow::Borrowed(url);
    }
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return Cow::Borrowed(url);
    };
    let rest = &url[start..];
    let authority = &rest[..rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len())];
    let host_start = authority.rfind('@').map_or(0, |i| i + 1);
    let host_port = &authority[host_start..];
    let host_end = host_port
        .rfind(':')
        .filter(|&i| host_port[i + 1..].bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or(host_port.len());
    let host = &host_port[..host_end];
    if host.is_ascii() {
        return Cow::Borrowed(url);
    }
    let mut out = String::with_capacity(url.len() + 16);
    out.push_str(&url[..start + host_start]);
    for (i, label) in host.split('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        let label = label.to_lowercase();
        if label.is_ascii() {
            out.push_str(&label);
        } else {
            match idna::punycode::encode_str(&label) {
                Some(encoded) => {
                    out.push_str("xn--");
                    out.push_str(&encoded);
                }
                None => return Cow::Borrowed(url),
            }
        }
    }
    out.push_str(&url[start + host_start + host_end..]);
    Cow::Owned(out)
}
