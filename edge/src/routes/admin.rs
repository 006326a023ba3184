//! Admin routes. Creating a site takes the operator token; everything else takes the
//! site's secret key and acts on that site only.

use concierge_core::boundary::{CalendarDate, WarrantyRecord};
use concierge_core::flows::shop::warranty::{SERIAL_MAX_CHARS, SERIAL_MIN_CHARS, is_valid_serial};
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::auth::{self, Caller};
use crate::bindings::d1_store::D1Store;
use crate::routes::body;
use crate::site::{self, KeyKind, LlmSettings, Site, SiteConfig};
use crate::{ApiError, now_ms};

/// Body of `POST /admin/sites` and `PATCH /admin/site`: every field optional on update.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SitePatch {
    name: Option<String>,
    template: Option<String>,
    persona: Option<String>,
    language: Option<String>,
    llm: Option<LlmSettings>,
    allowed_origins: Option<Vec<String>>,
    starter_prompts: Option<Vec<String>>,
    title: Option<String>,
}

impl SitePatch {
    /// Validate and apply onto `site`.
    fn apply(self, site: &mut Site) -> Result<(), ApiError> {
        if let Some(name) = self.name {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > 200 {
                return Err(ApiError::bad_request("`name` must be 1 to 200 characters."));
            }
            site.name = name.to_string();
        }
        if let Some(template) = self.template {
            if !site::TEMPLATES.contains(&template.as_str()) {
                return Err(ApiError::bad_request(format!(
                    "`template` must be one of {}.",
                    site::TEMPLATES.join(", ")
                )));
            }
            site.template = template;
        }
        let config = &mut site.config;
        if let Some(persona) = self.persona {
            config.persona = Some(persona).filter(|p| !p.trim().is_empty());
        }
        if let Some(language) = self.language {
            if !matches!(language.as_str(), "vi" | "en") {
                return Err(ApiError::bad_request(
                    "`language` must be \"vi\" or \"en\".",
                ));
            }
            config.language = Some(language);
        }
        if let Some(llm) = self.llm {
            if let Some(provider) = &llm.provider
                && !matches!(provider.as_str(), "openai" | "ollama")
            {
                return Err(ApiError::bad_request(
                    "`llm.provider` must be \"openai\" or \"ollama\".",
                ));
            }
            if let Some(url) = &llm.base_url
                && site::normalize_origin(url).is_none()
            {
                return Err(ApiError::bad_request(
                    "`llm.base_url` must be an http(s) URL.",
                ));
            }
            if llm
                .first_token_timeout_ms
                .is_some_and(|ms| !(1_000..=120_000).contains(&ms))
            {
                return Err(ApiError::bad_request(
                    "`llm.first_token_timeout_ms` must be 1000 to 120000.",
                ));
            }
            if llm.max_tokens.is_some_and(|n| !(16..=32_768).contains(&n)) {
                return Err(ApiError::bad_request(
                    "`llm.max_tokens` must be 16 to 32768.",
                ));
            }
            let keep_key = config.llm.api_key.take();
            config.llm = LlmSettings {
                api_key: llm.api_key.clone().or(keep_key),
                ..llm
            };
        }
        if let Some(origins) = self.allowed_origins {
            let mut normalized = Vec::with_capacity(origins.len());
            for origin in &origins {
                let origin = site::normalize_origin(origin).ok_or_else(|| {
                    ApiError::bad_request(format!("Not an origin (scheme://host[:port]): {origin}"))
                })?;
                if !normalized.contains(&origin) {
                    normalized.push(origin);
                }
            }
            config.allowed_origins = normalized;
        }
        if let Some(prompts) = self.starter_prompts {
            if prompts.len() > 6
                || prompts
                    .iter()
                    .any(|p| p.trim().is_empty() || p.chars().count() > 200)
            {
                return Err(ApiError::bad_request(
                    "`starter_prompts`: at most 6, each 1 to 200 characters.",
                ));
            }
            config.starter_prompts = prompts;
        }
        if let Some(title) = self.title {
            config.title = Some(title).filter(|t| !t.trim().is_empty());
        }
        Ok(())
    }
}

/// `POST /admin/sites` (operator token): create a site; its keys are shown once.
pub(crate) async fn create_site(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    auth::operator(&req, env)?;
    let patch: SitePatch = body::json(&mut req).await?;
    if patch.name.is_none() {
        return Err(ApiError::bad_request("`name` is required."));
    }
    let public_key = auth::new_key("pk_")?;
    let secret_key = auth::new_key("sk_")?;
    let mut site = Site {
        id: format!("site_{}", &auth::new_key("")?[..16]),
        name: String::new(),
        template: "shop".into(),
        config: SiteConfig::default(),
        public_key_hash: auth::sha256_hex(&public_key),
        secret_key_hash: auth::sha256_hex(&secret_key),
    };
    patch.apply(&mut site)?;
    site::insert(&env.d1("DB")?, &site, now_ms()).await?;
    let body = serde_json::json!({"site": site.public_view(), "public_key": public_key, "secret_key": secret_key});
    Ok(Response::from_json(&body)?.with_status(201))
}

/// Authenticate the site's secret key.
async fn secret_caller(req: &Request, env: &Env) -> Result<Caller, ApiError> {
    let caller = auth::site_caller(req, env, false).await?;
    debug_assert_eq!(caller.kind, KeyKind::Secret);
    Ok(caller)
}

/// `GET /admin/site`: the site's configuration (no secrets).
pub(crate) async fn get_site(req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = secret_caller(&req, env).await?;
    Ok(Response::from_json(
        &serde_json::json!({"site": caller.site.public_view()}),
    )?)
}

/// `PATCH /admin/site`: update the site's configuration.
pub(crate) async fn update_site(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = secret_caller(&req, env).await?;
    let patch: SitePatch = body::json(&mut req).await?;
    let mut site = caller.site;
    patch.apply(&mut site)?;
    site::update(&env.d1("DB")?, &site, now_ms()).await?;
    site::uncache(&env.kv("CONFIG")?, &site).await;
    Ok(Response::from_json(
        &serde_json::json!({"site": site.public_view()}),
    )?)
}

/// `POST /admin/site/rotate-keys`: new public and secret keys; the old ones stop working.
pub(crate) async fn rotate_keys(req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = secret_caller(&req, env).await?;
    let mut site = caller.site;
    let old = site.clone();
    let public_key = auth::new_key("pk_")?;
    let secret_key = auth::new_key("sk_")?;
    site.public_key_hash = auth::sha256_hex(&public_key);
    site.secret_key_hash = auth::sha256_hex(&secret_key);
    site::update(&env.d1("DB")?, &site, now_ms()).await?;
    site::uncache(&env.kv("CONFIG")?, &old).await;
    Ok(Response::from_json(
        &serde_json::json!({"public_key": public_key, "secret_key": secret_key}),
    )?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WarrantyUpsert {
    records: Vec<WarrantyRecordIn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WarrantyRecordIn {
    serial: String,
    product: String,
    /// `YYYY-MM-DD`.
    warranty_until: String,
}

/// `POST /admin/warranty`: bulk upsert warranty records (all or nothing). Serials follow
/// the core's rule and are unique per site whatever their letter case; dates are
/// `YYYY-MM-DD` days that exist.
pub(crate) async fn upsert_warranty(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = secret_caller(&req, env).await?;
    let body: WarrantyUpsert = body::json(&mut req).await?;
    if body.records.is_empty() || body.records.len() > 500 {
        return Err(ApiError::bad_request(
            "`records` must hold 1 to 500 records.",
        ));
    }
    let mut records = Vec::with_capacity(body.records.len());
    for (i, record) in body.records.iter().enumerate() {
        let serial = record.serial.trim();
        if !is_valid_serial(serial) {
            return Err(ApiError::bad_request(format!(
                "records[{i}].serial must be {SERIAL_MIN_CHARS} to {SERIAL_MAX_CHARS} letters, digits or '-'."
            )));
        }
        let Some(warranty_until) = CalendarDate::parse_iso(&record.warranty_until) else {
            return Err(ApiError::bad_request(format!(
                "records[{i}].warranty_until must be a date that exists, as YYYY-MM-DD."
            )));
        };
        let product = record.product.trim();
        if product.is_empty() {
            return Err(ApiError::bad_request(format!(
                "records[{i}].product must not be empty."
            )));
        }
        records.push(WarrantyRecord {
            serial: serial.to_string(),
            product: product.to_string(),
            warranty_until,
        });
    }
    D1Store::new(env.d1("DB")?)
        .upsert_warranty(&caller.site.id, &records)
        .await
        .map_err(ApiError::store)?;
    Ok(Response::from_json(
        &serde_json::json!({"upserted": records.len()}),
    )?)
}
