//! The draft and the published versions of a site's configuration (issue 42; secret
//! key):
//! - `GET /admin/site/draft`: the draft (the live configuration when none is pending);
//! - `PATCH /admin/site/draft`: change the draft (the body of `PATCH /admin/site`); the
//!   live configuration, what visitors get, is unchanged;
//! - `DELETE /admin/site/draft`: drop the pending draft;
//! - `POST /admin/site/draft/key`: a draft key, a public key that runs the draft, for the
//!   console's Try it (`auth::draft`);
//! - `POST /admin/publish {"note"?, "draft_run"?, "live_run"?, "confirm_regressions"?}`:
//!   the draft goes live, atomically (one D1 batch), as a new version, past the publish
//!   gate when the site has test cases (`super::test_runs`);
//! - `GET /admin/versions`, `GET /admin/versions/{n}`: the versions kept (the last 100),
//!   newest first;
//! - `POST /admin/versions/{n}/restore {"note"?}`: version `n` goes live again, recorded
//!   as a new version (a pending draft stays pending).
//!
//! Every change that makes a configuration live makes the caches that serve visitors
//! forget the old one, as `PATCH /admin/site` does (`super::save`).

use serde::Deserialize;
use worker::{Env, Request, Response};

use super::{Planned, SitePatch, public_view, save, test_runs};
use crate::auth::{SecretCaller, draft};
use crate::bindings::d1_sites::{VersionSource, versions};
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;
use crate::site::{Site, Snapshot};

/// The longest note on a version, in characters.
const MAX_NOTE_CHARS: usize = 500;

/// The draft's view: the draft as a site (`site`), whether it differs from the live
/// configuration, and the live version.
fn draft_view(site: &Site) -> serde_json::Value {
    let mut view = public_view(&site.draft_site());
    view["draft_pending"] = site.draft.is_some().into();
    serde_json::json!({
        "site": view,
        "draft_pending": site.draft.is_some(),
        "live_version": site.version,
    })
}

/// `GET /admin/site/draft`.
pub(crate) async fn get_draft(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    // Read from D1: the console shows what it just saved.
    let site = fresh(env, &caller).await?;
    Ok(Response::from_json(&draft_view(&site))?)
}

/// The caller's site as D1 holds it now.
pub(super) async fn fresh(env: &Env, caller: &SecretCaller) -> Result<Site, ApiError> {
    let current = crate::bindings::d1_sites::read_for_update(&env.d1("DB")?, &caller.site.id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    Ok(current.site)
}

/// `PATCH /admin/site/draft`: the body applied to the draft (the live configuration when
/// none is pending); the live configuration is unchanged.
pub(crate) async fn update_draft(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let (patch, llm) = SitePatch::read(&mut req, env, &caller).await?;
    let site = save(env, &caller, &mut |current| {
        let draft = Snapshot::of(&patch.applied(env, current.draft_site(), llm.as_ref())?);
        Ok(Planned::new(
            current,
            current.clone(),
            Some(draft),
            VersionSource::Edited,
        ))
    })
    .await?;
    Ok(Response::from_json(&draft_view(&site))?)
}

/// `DELETE /admin/site/draft`: the pending draft dropped (the draft is then the live
/// configuration again).
pub(crate) async fn discard_draft(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let site = save(env, &caller, &mut |current| {
        Ok(Planned::new(
            current,
            current.clone(),
            None,
            VersionSource::Edited,
        ))
    })
    .await?;
    Ok(Response::from_json(&draft_view(&site))?)
}

/// `POST /admin/site/draft/key`: a draft key, a public key that runs the draft (the
/// console's Try it gives it to the panel).
pub(crate) async fn draft_key(caller: SecretCaller) -> Result<Response, ApiError> {
    let expires_at = now_ms() / 1000 + draft::KEY_SECS;
    Ok(Response::from_json(&serde_json::json!({
        "draft_key": draft::key(&caller.site, expires_at),
        "expires_at": expires_at,
    }))?)
}

/// Body of a restore (and the note of a publish).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoteBody {
    #[serde(default)]
    note: Option<String>,
}

impl NoteBody {
    /// The note, checked: trimmed, at most [`MAX_NOTE_CHARS`], blank as none.
    fn note(self) -> Result<Option<String>, ApiError> {
        let note = self
            .note
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty());
        if note
            .as_ref()
            .is_some_and(|n| n.chars().count() > MAX_NOTE_CHARS)
        {
            return Err(ApiError::bad_request(format!(
                "`note` must be at most {MAX_NOTE_CHARS} characters."
            )));
        }
        Ok(note)
    }
}

/// The answer to a change that made a configuration live.
fn live_answer(site: &Site) -> Result<Response, ApiError> {
    Ok(Response::from_json(&serde_json::json!({
        "version": site.version,
        "site": public_view(site),
    }))?)
}

/// `POST /admin/publish {"note"?, "draft_run"?, "live_run"?, "confirm_regressions"?}`:
/// the pending draft goes live, atomically, as a new version; 409
/// when no draft is pending. A site with test cases passes the publish gate first: its
/// two runs (`draft_run`, `live_run`) finished on the draft and the live configuration
/// as they are, and, when the draft fails cases that pass on live, `confirm_regressions`
/// (else 409 `regressions`, naming them); the confirmation and those cases are recorded
/// with the version (`regressions`).
pub(crate) async fn publish(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    // Read through a JSON value (the Worker's size: no deserializer of its own).
    let body: serde_json::Value = body::json(&mut req).await?;
    let fields = ["note", "draft_run", "live_run", "confirm_regressions"];
    let text = |name: &str| match &body[name] {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(text) => Ok(Some(text.clone())),
        _ => Err(ApiError::bad_request(format!("`{name}` must be a string."))),
    };
    if let Some(unknown) = body
        .as_object()
        .ok_or_else(|| ApiError::bad_request("The body must be a JSON object."))?
        .keys()
        .find(|key| !fields.contains(&key.as_str()))
    {
        return Err(ApiError::bad_request(format!("Unknown field `{unknown}`.")));
    }
    let note = NoteBody {
        note: text("note")?,
    }
    .note()?;
    let (draft_run, live_run) = (text("draft_run")?, text("live_run")?);
    let confirmed = body["confirm_regressions"] == true;
    let mut record = None;
    let mut mark = None;
    if test_runs::case_count(env, &caller.site.id).await? > 0 {
        let site = fresh(env, &caller).await?;
        let (Some(draft_run), Some(live_run)) = (&draft_run, &live_run) else {
            return Err(ApiError::Conflict(
                "Trang này có ca kiểm thử: hãy chạy chúng với bản nháp và bản đang chạy \
                 (POST /admin/publish/check) rồi xuất bản kèm `draft_run` và `live_run`. \
                 (This site has test cases: run them against the draft and the live \
                 configuration (POST /admin/publish/check), then publish with `draft_run` \
                 and `live_run`.)",
            ));
        };
        let mut comparison = test_runs::compare(env, &site, draft_run, live_run).await?;
        let names: Vec<&str> = comparison["regressions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|case| case["name"].as_str())
            .collect();
        if !names.is_empty() {
            if !confirmed {
                let (count, list) = (names.len(), names.join("; "));
                return Err(ApiError::Regressions(format!(
                    "Bản nháp trượt {count} ca đang đạt trên bản đang chạy: {list}. Gửi lại \
                     với \"confirm_regressions\": true để vẫn xuất bản. (The draft fails \
                     {count} cases that pass on the live configuration: {list}. Send again \
                     with \"confirm_regressions\": true to publish anyway.)"
                )));
            }
            comparison["confirmed"] = true.into();
            record = Some(comparison.to_string());
        }
        mark = Some(test_runs::draft_mark(&site));
    }
    let site = save(env, &caller, &mut |current| {
        let Some(draft) = current.draft.as_deref() else {
            return Err(ApiError::Conflict(
                "Nothing to publish: the draft is the live configuration.",
            ));
        };
        if mark
            .as_ref()
            .is_some_and(|mark| *mark != test_runs::draft_mark(current))
        {
            return Err(ApiError::Conflict(
                "Bản nháp đã thay đổi sau lượt kiểm thử; hãy chạy lại. (The draft changed \
                 after the test runs; run them again.)",
            ));
        }
        let mut site = current.clone();
        draft.apply_to(&mut site);
        Ok(Planned {
            site,
            draft: None,
            source: Some(VersionSource::Published),
            note: note.clone(),
            restored_from: None,
            regressions: record.clone(),
        })
    })
    .await?;
    live_answer(&site)
}

/// A version as listed: its number, when and how it went live, its note.
fn version_json(version: &versions::Version, live: u64) -> serde_json::Value {
    serde_json::json!({
        "version": version.number,
        "published_at": version.published_at,
        "source": version.source,
        "note": version.note,
        "restored_from": version.restored_from,
        "regressions": version.regressions,
        "live": version.number == live,
    })
}

/// `GET /admin/versions`: the versions kept, newest first.
pub(crate) async fn versions(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let site = fresh(env, &caller).await?;
    let list = versions::list(&env.d1("DB")?, &site.id).await?;
    let listed: Vec<_> = list.iter().map(|v| version_json(v, site.version)).collect();
    Ok(Response::from_json(&serde_json::json!({
        "live_version": site.version,
        "draft_pending": site.draft.is_some(),
        "versions": listed,
    }))?)
}

/// Version `n` of the caller's site (404 when `n` is not a kept version's number).
async fn version(
    env: &Env,
    caller: &SecretCaller,
    number: &str,
) -> Result<versions::Version, ApiError> {
    let number = number
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or(ApiError::NotFound)?;
    versions::get(&env.d1("DB")?, &caller.site.id, number)
        .await?
        .ok_or(ApiError::NotFound)
}

/// `GET /admin/versions/{n}`: one version with its configuration (no secrets).
pub(crate) async fn get_version(
    env: &Env,
    caller: SecretCaller,
    number: &str,
) -> Result<Response, ApiError> {
    let found = version(env, &caller, number).await?;
    let mut site = caller.site.clone();
    found.snapshot.apply_to(&mut site);
    // A version holds no keys: the view shows none.
    site.config.public_key = None;
    site.config.user_token_secret_sealed = None;
    let mut body = version_json(&found, caller.site.version);
    body["site"] = public_view(&site);
    if let Some(view) = body["site"].as_object_mut() {
        view.retain(|key, _| key != "version" && key != "draft_pending");
    }
    Ok(Response::from_json(&body)?)
}

/// `POST /admin/versions/{n}/restore`: version `n` goes live again, as a new version
/// (404 when it is not kept; 409 when it is the live one).
pub(crate) async fn restore(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
    number: &str,
) -> Result<Response, ApiError> {
    let found = version(env, &caller, number).await?;
    let note = body::json::<NoteBody>(&mut req).await?.note()?;
    let site = save(env, &caller, &mut |current| {
        if current.version == found.number {
            return Err(ApiError::Conflict(
                "That version is the live configuration already.",
            ));
        }
        let mut site = current.clone();
        found.snapshot.apply_to(&mut site);
        let draft = current.draft.as_deref().cloned();
        let mut planned = Planned::new(current, site, draft, VersionSource::Restored);
        planned.source = Some(VersionSource::Restored);
        planned.note = note.clone();
        planned.restored_from = Some(found.number);
        Ok(planned)
    })
    .await?;
    live_answer(&site)
}
