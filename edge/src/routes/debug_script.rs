//! `POST /debug/conversations/{id}/script`: stage a scripted turn for a conversation (see
//! [`crate::site::scripted`] for the script's steps). Authorised exactly like the
//! conversation routes (key, origin, identity); 204 once staged. A 404 unless the var
//! `DEBUG_ROUTES` is on: it does not exist in production.

use concierge_core::boundary::KvCache;
use concierge_core::conversation::Scope;
use worker::{Env, Request, Response};

use crate::auth::{self, Access, AnyKeyCaller};
use crate::bindings::services::Services;
use crate::error::ApiError;
use crate::http::body;
use crate::site::scripted::{self, FLAG, Script};

/// Largest script accepted (a 10,000-row table fits).
const MAX_SCRIPT_BYTES: usize = 2 * 1024 * 1024;

pub(crate) async fn stage(
    mut req: Request,
    env: &Env,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    if !crate::runtime::var_on(env, FLAG) {
        return Err(ApiError::NotFound);
    }
    let caller = AnyKeyCaller::from_request(&req, env).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    let services = Services::new(env, &caller.site)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    auth::reachable_conversation(&services.store, scope, &visitor)
        .await?
        .ok_or(ApiError::NotFound)?;
    let raw: serde_json::Value =
        body::json_up_to(&mut req, MAX_SCRIPT_BYTES, "The script is over 2 MiB.").await?;
    let script: Script = serde_json::from_value(raw.clone())
        .map_err(|e| ApiError::bad_request(format!("Invalid script: {e}")))?;
    script.check().map_err(ApiError::bad_request)?;
    let key = scripted::key(&caller.site.id, conversation_id);
    crate::bindings::kv_cache::WorkerKvCache::from_env(env)?
        .put(&key, &raw.to_string(), scripted::TTL_SECONDS)
        .await
        .map_err(|_| ApiError::Unavailable)?;
    Ok(Response::empty()?.with_status(204))
}
