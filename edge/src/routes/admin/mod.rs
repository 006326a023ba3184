//! Admin routes. Creating a site takes the operator token; everything else takes the
//! site's secret key and acts on that site only.
//!
//! A body's `llm` is checked in `llm`.

use concierge_core::template::Template;
use worker::{Env, Request, Response};

use crate::auth::{self, Operator, SecretCaller};
use crate::bindings::d1_sites::{self, Change, VersionSource, Versions};
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;
use crate::site::{self, Site, SiteConfig, Snapshot, sealed};
use crate::templates::{self, SettingsPatch};

mod draft;
mod llm;
mod patch;
pub(crate) mod test_cases;
pub(crate) mod test_runs;
mod usage;

pub(crate) use draft::{
    discard_draft, draft_key, get_draft, get_version, publish, restore, update_draft, versions,
};

use llm::{KeyChange, LlmChange, LlmPatch};
pub(crate) use usage::usage;

/// Body of `POST /admin/sites` and `PATCH /admin/site`: every field optional on update.
/// Each template's settings are under its name ([`SettingsPatch`]); any other field is
/// refused ([`patch`] reads the body as a derived `deny_unknown_fields` would).
#[derive(Debug, Default)]
pub(crate) struct SitePatch {
    name: Option<String>,
    template: Option<String>,
    persona: Option<String>,
    language: Option<String>,
    llm: Option<LlmPatch>,
    allowed_origins: Option<Vec<String>>,
    starter_prompts: Option<Vec<String>>,
    title: Option<String>,
    /// Handoff to a person (`{"enabled", "wait_seconds"?, "time_zone"?, "office_hours"?}`,
    /// replaced whole; checked by [`HandoffSettings::checked`](crate::site::HandoffSettings::checked)).
    handoff: Option<crate::site::HandoffSettings>,
    /// Each template's settings.
    templates: SettingsPatch,
}

impl SitePatch {
    /// A `PATCH` body for the caller's site, with its `llm` checked.
    async fn read(
        req: &mut Request,
        env: &Env,
        caller: &SecretCaller,
    ) -> Result<(Self, Option<LlmChange>), ApiError> {
        let patch: Self = body::json(req).await?;
        let llm = patch
            .llm
            .as_ref()
            .map(|llm| llm.check(env, &caller.site.id))
            .transpose()?;
        Ok((patch, llm))
    }

    /// `site` with this body applied ([`Self::apply`]) and a legacy key sealed.
    fn applied(
        &self,
        env: &Env,
        mut site: Site,
        llm: Option<&LlmChange>,
    ) -> Result<Site, ApiError> {
        self.apply(env, &mut site, llm)?;
        site.seal_legacy_key(env);
        Ok(site)
    }

    /// Validate and apply onto `site`; `llm` is this body's checked `llm`; each
    /// template's settings last (they may seal a key for `site`).
    fn apply(&self, env: &Env, site: &mut Site, llm: Option<&LlmChange>) -> Result<(), ApiError> {
        if let Some(name) = &self.name {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > 200 {
                return Err(ApiError::bad_request("`name` must be 1 to 200 characters."));
            }
            site.name = name.to_string();
        }
        if let Some(template) = &self.template {
            // Only a built template: never a silent fallback to another one.
            site.template =
                Template::choose(template).map_err(|why| ApiError::bad_request(why.to_string()))?;
        }
        let config = &mut site.config;
        if let Some(persona) = &self.persona {
            config.persona = Some(persona.clone()).filter(|p| !p.trim().is_empty());
        }
        if let Some(language) = &self.language {
            if !matches!(language.as_str(), "vi" | "en") {
                return Err(ApiError::bad_request(
                    "`language` must be \"vi\" or \"en\".",
                ));
            }
            config.language = Some(language.clone());
        }
        if let Some(change) = llm {
            let old = std::mem::take(&mut config.llm);
            let same = |old: &Option<String>, new: &Option<String>| {
                old.as_deref().map(|u| u.trim_end_matches('/')) == new.as_deref()
            };
            let mut settings = change.settings.clone();
            match &change.key {
                KeyChange::Set(sealed) => settings.api_key_sealed = Some(sealed.clone()),
                KeyChange::Keep
                    if same(&old.base_url, &settings.base_url)
                        && same(&old.embed_base_url, &settings.embed_base_url) =>
                {
                    settings.api_key = old.api_key;
                    settings.api_key_sealed = old.api_key_sealed;
                }
                // Cleared, or the endpoints changed: the key stays behind.
                KeyChange::Keep | KeyChange::Clear => {}
            }
            config.llm = settings;
        }
        if let Some(origins) = &self.allowed_origins {
            let mut normalized = Vec::with_capacity(origins.len());
            for origin in origins {
                let origin = site::normalize_origin(origin).ok_or_else(|| {
                    ApiError::bad_request(format!("Not an origin (scheme://host[:port]): {origin}"))
                })?;
                if !normalized.contains(&origin) {
                    normalized.push(origin);
                }
            }
            config.allowed_origins = normalized;
        }
        if let Some(prompts) = &self.starter_prompts {
            if prompts.len() > 6
                || prompts
                    .iter()
                    .any(|p| p.trim().is_empty() || p.chars().count() > 200)
            {
                return Err(ApiError::bad_request(
                    "`starter_prompts`: at most 6, each 1 to 200 characters.",
                ));
            }
            config.starter_prompts = prompts.clone();
        }
        if let Some(title) = &self.title {
            config.title = Some(title.clone()).filter(|t| !t.trim().is_empty());
        }
        if let Some(handoff) = &self.handoff {
            config.handoff = Some(handoff.clone().checked()?);
        }
        self.templates.apply(env, site)
    }
}

/// The site as the admin API shows it: no key digests, no upstream key, no template's
/// write-only secret (flags say which are set).
pub(super) fn public_view(site: &Site) -> serde_json::Value {
    let mut config = site.config.clone();
    let legacy = config.llm.api_key.take().is_some();
    let has_key = config.llm.api_key_sealed.take().is_some() || legacy;
    let has_token_secret = config.user_token_secret_sealed.take().is_some();
    let flags = templates::public_settings(&mut config.templates);
    let mut view = serde_json::json!({
        "id": site.id,
        "name": site.name,
        "template": site.template,
        "config": config,
        "llm_api_key_set": has_key,
        "user_token_secret_set": has_token_secret,
        "version": site.version,
        "draft_pending": site.draft.is_some(),
    });
    for (flag, value) in flags {
        view[flag] = value;
    }
    view
}

/// `POST /admin/sites` (operator token): create a site; its keys are shown once.
pub(crate) async fn create_site(
    mut req: Request,
    env: &Env,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let patch: SitePatch = body::json(&mut req).await?;
    if patch.name.is_none() {
        return Err(ApiError::bad_request("`name` is required."));
    }
    let public_key = auth::new_key("pk_")?;
    let secret_key = auth::new_key("sk_")?;
    let now = now_ms();
    let mut site = Site {
        id: format!("site_{}", &auth::new_key("")?[..16]),
        name: String::new(),
        template: Template::default(),
        config: SiteConfig::default(),
        public_key_hash: auth::sha256_hex(&public_key),
        secret_key_hash: auth::sha256_hex(&secret_key),
        created_at: now,
        catalog: Vec::new(),
        draft: None,
        version: 1,
        drafted: false,
    };
    let llm = patch
        .llm
        .as_ref()
        .map(|llm| llm.check(env, &site.id))
        .transpose()?;
    patch.apply(env, &mut site, llm.as_ref())?;
    site.config.public_key = Some(public_key.clone());
    d1_sites::insert(&env.d1("DB")?, &site, now).await?;
    let body = serde_json::json!({"site": public_view(&site), "public_key": public_key, "secret_key": secret_key});
    Ok(Response::from_json(&body)?.with_status(201))
}

/// `GET /admin/site`: the site's configuration (no secrets).
pub(crate) async fn get_site(caller: SecretCaller) -> Result<Response, ApiError> {
    Ok(Response::from_json(
        &serde_json::json!({"site": public_view(&caller.site)}),
    )?)
}

/// How many times an update is re-applied when the site changed under it.
const SAVE_ATTEMPTS: usize = 5;

/// What a change of a site is to write ([`save`]): the site as it is to be, its pending
/// draft afterwards, and, when the live configuration changes, why (a new version).
pub(super) struct Planned {
    pub site: Site,
    pub draft: Option<Snapshot>,
    pub source: Option<VersionSource>,
    pub note: Option<String>,
    pub restored_from: Option<u64>,
    /// The publish gate's record of the regressions a publish was confirmed over (JSON).
    pub regressions: Option<String>,
}

impl Planned {
    /// `site` with `draft` pending (none when it is `site`'s live configuration), the
    /// live configuration recorded as a new version (`source`) when it differs from
    /// `before`'s.
    pub(super) fn new(
        before: &Site,
        site: Site,
        draft: Option<Snapshot>,
        source: VersionSource,
    ) -> Self {
        let live = Snapshot::of(&site);
        let changed = live != Snapshot::of(before);
        Self {
            draft: draft.filter(|draft| *draft != live),
            site,
            source: changed.then_some(source),
            note: None,
            restored_from: None,
            regressions: None,
        }
    }
}

/// Apply `plan` to the site row as read from D1 (not to a cached copy) and save it only if
/// the row is unchanged meanwhile, else plan again on the new row (a few times); when the
/// presented key was rotated meanwhile, nothing is written (401). The site as saved (its
/// draft and live version set); the caches that serve visitors forget the old one.
pub(super) async fn save(
    env: &Env,
    caller: &SecretCaller,
    plan: &mut dyn FnMut(&Site) -> Result<Planned, ApiError>,
) -> Result<Site, ApiError> {
    let id = caller.site.id.as_str();
    let presented = caller.site.secret_key_hash.as_bytes();
    let db = env.d1("DB")?;
    for _ in 0..SAVE_ATTEMPTS {
        let current = d1_sites::read_for_update(&db, id)
            .await?
            .ok_or(ApiError::Unauthorized)?;
        if !auth::constant_time_eq(current.site.secret_key_hash.as_bytes(), presented) {
            return Err(ApiError::Unauthorized);
        }
        let planned = plan(&current.site)?;
        let change = Change {
            site: &planned.site,
            draft: planned.draft.as_ref(),
            version: planned.source.map(|source| Versions {
                source,
                note: planned.note.as_deref(),
                restored_from: planned.restored_from,
                regressions: planned.regressions.as_deref(),
            }),
        };
        if let Some(version) = d1_sites::save_config(&db, &current, change, now_ms()).await? {
            let mut site = planned.site;
            let hashes = [site.public_key_hash.as_str(), site.secret_key_hash.as_str()];
            d1_sites::uncache(&env.kv("CONFIG")?, id, &hashes).await;
            site.draft = planned.draft.map(Box::new);
            site.version = version;
            site.drafted = false;
            return Ok(site);
        }
    }
    Err(ApiError::Conflict(
        "The site kept changing during this update; try again.",
    ))
}

/// `PATCH /admin/site`: update the live configuration at once (a new version when it
/// changed). A pending draft takes the same change, so publishing it does not undo it.
pub(crate) async fn update_site(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let (patch, llm) = SitePatch::read(&mut req, env, &caller).await?;
    let site = save(env, &caller, &mut |current| {
        let site = patch.applied(env, current.clone(), llm.as_ref())?;
        let draft = match current.draft {
            Some(_) => Some(Snapshot::of(&patch.applied(
                env,
                current.draft_site(),
                llm.as_ref(),
            )?)),
            None => None,
        };
        Ok(Planned::new(current, site, draft, VersionSource::Edited))
    })
    .await?;
    Ok(Response::from_json(
        &serde_json::json!({"site": public_view(&site)}),
    )?)
}

/// `POST /admin/site/rotate-keys`: new public and secret keys; the old ones stop working
/// (at once on this Worker, everywhere within 30 s: see `site::cache`). Only the key
/// columns are written, and only if the presented secret key is still the site's: of two
/// rotations with the same key, one wins and the other gets 401.
pub(crate) async fn rotate_keys(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let public_key = auth::new_key("pk_")?;
    let secret_key = auth::new_key("sk_")?;
    let old_secret = caller.site.secret_key_hash.as_str();
    let old_public = d1_sites::replace_keys(
        &env.d1("DB")?,
        &caller.site.id,
        old_secret,
        &public_key,
        &auth::sha256_hex(&secret_key),
        now_ms(),
    )
    .await?
    .ok_or(ApiError::Unauthorized)?;
    let cache = env.kv("CONFIG")?;
    d1_sites::uncache(&cache, &caller.site.id, &[&old_public, old_secret]).await;
    Ok(Response::from_json(
        &serde_json::json!({"public_key": public_key, "secret_key": secret_key}),
    )?)
}

/// `POST /admin/site/user-token-secret`: a new random secret for signing the site's user
/// tokens (`X-User-Token`), shown once and stored sealed; it replaces the previous one,
/// whose tokens stop verifying (at once on this Worker, everywhere within the site cache's
/// bound). Written only if the presented secret key is still the site's.
pub(crate) async fn rotate_user_token_secret(
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let secret = auth::new_key("uts_")?;
    let sealed = sealed::seal_bound(env, &site::user_token_binding(&caller.site.id), &secret)?;
    save(env, &caller, &mut |current| {
        let mut site = current.clone();
        site.config.user_token_secret_sealed = Some(sealed.clone());
        let draft = current.draft.as_deref().cloned();
        Ok(Planned::new(current, site, draft, VersionSource::Edited))
    })
    .await?;
    Ok(Response::from_json(&serde_json::json!({"user_token_secret": secret}))?.with_status(201))
}
