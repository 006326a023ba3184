//! `POST /ai/chat` — seed 002's `chatWithAI(query, {userId, clientIp})`: one question in,
//! one `ChatResponse` out (not streamed), on a session keyed by the verified user
//! (`user_{sub}`) or, anonymously, by the hashed client address (`ip_{sha256(ip)[..16]}`).
//! A session idle for more than 30 minutes starts a new conversation; the Cron Trigger
//! ([`cleanup`]) deletes idle sessions with their conversations.

use concierge_core::conversation::{Language, Scope, StoredMessage};
use concierge_core::engine::{self, NewConversation};
use concierge_core::flows::rental::SESSION_IDLE_MS;
use concierge_core::payload::Payload;
use concierge_core::turn::{TurnEvent, TurnInput};
use serde::Deserialize;
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use worker::{D1Database, Env, Request, Response};

use super::body;
use crate::auth::{self, Visitor};
use crate::bindings::d1_store::service_error;
use crate::bindings::services::Services;
use crate::site::{SiteAssistant, find_by_id};
use crate::{ApiError, now_ms};
use concierge_core::template::Template;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatBody {
    query: String,
}

#[derive(Debug, Deserialize)]
struct SessionRow {
    conversation_id: String,
    last_active_at: f64,
}

/// The seed's `ChatResponse.payload` from a stored reply: `DataPayload` (`mode` + `list` /
/// `table` / `chart`), `ControlPayload`, or none (content).
fn seed_payload(reply: &StoredMessage) -> Option<Value> {
    reply.payloads.iter().find_map(|payload| match payload {
        Payload::List(list) => Some(json!({"mode": "LIST", "list": list})),
        Payload::Table(table) => Some(json!({"mode": "TABLE", "table": table})),
        Payload::Chart(chart) => Some(json!({"mode": "CHART", "chart": seed_chart(chart)})),
        Payload::Control(control) => Some(serde_json::to_value(control).unwrap_or_default()),
        _ => None,
    })
}

/// The seed's chart object (`mimeType`, QuickChart `url`, `width`, `height`, `alt`) for
/// fidelity, plus `spec` (the chart's data, which the widget draws inline). The URL is built,
/// never fetched by the Worker.
fn seed_chart(chart: &concierge_core::payload::ChartPayload) -> Value {
    let kind = serde_json::to_value(chart.chart).unwrap_or_default();
    let datasets: Vec<Value> = chart
        .series
        .iter()
        .map(|s| json!({"label": s.name, "data": s.values}))
        .collect();
    let config = json!({"type": kind, "data": {"labels": chart.labels, "datasets": datasets}});
    let encoded = String::from(js_sys::encode_uri_component(&config.to_string()));
    json!({
        "mimeType": "image/png",
        "url": format!("https://quickchart.io/chart?c={encoded}&w=500&h=300"),
        "width": 500,
        "height": 300,
        "alt": chart.alt,
        "spec": chart,
    })
}

/// ISO-8601 UTC with `Z`.
fn iso(ms: u64) -> String {
    let date = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    date.to_iso_string().as_string().unwrap_or_default()
}

/// `POST /ai/chat` `{query}`: 200 `{kind, sessionId, timestamp, message, payload?}`.
pub(crate) async fn chat(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::site_caller(&req, env, true).await?;
    let visitor = auth::visitor(&req, env, &caller)?;
    if caller.site.template != Template::Rental {
        return Err(ApiError::NotFound);
    }
    let body: ChatBody = body::json(&mut req).await?;
    let query = body.query.trim().to_string();
    if query.is_empty() {
        return Err(ApiError::bad_request("`query` must not be empty."));
    }
    let identity = match visitor {
        Visitor::User(identity) => identity,
        Visitor::Site => None,
    };
    let session_id = match &identity {
        Some(identity) => format!("user_{}", identity.sub),
        None => {
            let ip = req
                .headers()
                .get("cf-connecting-ip")
                .ok()
                .flatten()
                .unwrap_or_default();
            format!("ip_{}", &auth::sha256_hex(&ip)[..16])
        }
    };
    let site = caller.site;
    let db = env.d1("DB")?;
    let now = now_ms();
    let session: Option<SessionRow> = db
        .prepare("SELECT conversation_id, last_active_at FROM rental_sessions WHERE site_id = ?1 AND session_id = ?2")
        .bind(&[site.id.as_str().into(), session_id.as_str().into()])?
        .first(None)
        .await?;
    let assistant = SiteAssistant::for_site(&site)?;
    let services = Services::new(env, &site)?;
    let live = session.filter(|s| now.saturating_sub(s.last_active_at as u64) <= SESSION_IDLE_MS);
    let conversation_id = match live {
        Some(session) => session.conversation_id,
        None => {
            let new = NewConversation {
                site_id: site.id.clone(),
                user_id: identity.as_ref().map(|i| i.sub.clone()),
                identity,
                language: site.config.language.as_deref().and_then(Language::parse),
            };
            engine::create_conversation(&services, &assistant, new)
                .await?
                .conversation
                .id
        }
    };
    db.prepare(
        "INSERT INTO rental_sessions (site_id, session_id, conversation_id, last_active_at) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (site_id, session_id) DO UPDATE SET conversation_id = excluded.conversation_id, \
         last_active_at = excluded.last_active_at",
    )
    .bind(&[
        site.id.as_str().into(),
        session_id.as_str().into(),
        conversation_id.as_str().into(),
        JsValue::from_f64(now as f64),
    ])?
    .run()
    .await?;
    let input = TurnInput {
        site_id: site.id.clone(),
        conversation_id,
        text: query,
        idempotency_key: None,
    };
    let mut sink = |_event: TurnEvent| {};
    let outcome = engine::run_turn(&services, &assistant, &input, &mut sink).await;
    services.queue_flush().await;
    let reply = outcome?.reply;
    let kind = reply.meta_str("kind").unwrap_or("CONTENT").to_string();
    let mut response = json!({
        "kind": kind,
        "sessionId": session_id,
        "timestamp": iso(reply.created_at),
        "message": reply.content,
    });
    if let Some(payload) = seed_payload(&reply) {
        response["payload"] = payload;
    }
    Ok(Response::from_json(&response)?)
}

/// The Cron Trigger: deletes sessions idle for more than 30 minutes, with their
/// conversations (at most 100 per run; the next run takes the rest).
pub(crate) async fn cleanup(env: &Env) -> Result<usize, ApiError> {
    #[derive(Debug, Deserialize)]
    struct Idle {
        site_id: String,
        session_id: String,
        conversation_id: String,
    }
    let db: D1Database = env.d1("DB")?;
    let cutoff = now_ms().saturating_sub(SESSION_IDLE_MS);
    let idle: Vec<Idle> = db
        .prepare(
            "SELECT site_id, session_id, conversation_id FROM rental_sessions \
             WHERE last_active_at < ?1 ORDER BY last_active_at LIMIT 100",
        )
        .bind(&[JsValue::from_f64(cutoff as f64)])?
        .all()
        .await?
        .results()?;
    let mut deleted = 0;
    for session in idle {
        let Some(site) = find_by_id(env, &session.site_id).await? else {
            continue;
        };
        let services = Services::new(env, &site)?;
        let scope = Scope::new(&session.site_id, &session.conversation_id);
        let owned = services
            .store
            .delete_conversation(scope)
            .await
            .map_err(ApiError::store)?;
        if let Some(ids) = owned {
            use concierge_core::boundary::VectorIndex;
            let _ = services.vectors.delete(&ids).await;
        }
        db.prepare(
            "DELETE FROM rental_sessions WHERE site_id = ?1 AND session_id = ?2 AND last_active_at < ?3",
        )
        .bind(&[
            session.site_id.as_str().into(),
            session.session_id.as_str().into(),
            JsValue::from_f64(cutoff as f64),
        ])
        .map_err(service_error)
        .map_err(ApiError::store)?
        .run()
        .await?;
        deleted += 1;
    }
    Ok(deleted)
}
