//! A site's test cases (issue 42, item 2; secret key): the questions with checks a
//! merchant keeps to run against the draft or the live configuration before publishing
//! (the runs: `super::test_runs`):
//! - `POST /admin/tests` (a `concierge_core::test_cases::TestCase`): 201 with the stored
//!   case and its id; 409 `limit_reached` at 100 cases;
//! - `GET /admin/tests`: the cases, oldest first;
//! - `DELETE /admin/tests/{id}`: 404 for an unknown id;
//! - `POST /admin/tests/propose`: a case proposed from a real conversation's answer.

use concierge_core::test_cases::{MAX_CASES, TestCase};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{Env, Request, Response};

use crate::auth::{self, SecretCaller};
use crate::error::ApiError;
use crate::http::body;
use crate::runtime::now_ms;

/// A stored case as D1 returns it.
#[derive(Debug, Deserialize)]
struct Row {
    id: String,
    body: String,
    created_at: f64,
}

/// A case (as JSON) as the API shows it: its id and creation time beside its fields.
fn case_json(id: &str, created_at: u64, mut case: serde_json::Value) -> serde_json::Value {
    case["id"] = id.into();
    case["created_at"] = created_at.into();
    case
}

/// `POST /admin/tests`.
pub(crate) async fn create(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    // Read through a JSON value (the Worker's size: the value reader serves every type).
    let body: serde_json::Value = body::json(&mut req).await?;
    let case = TestCase::deserialize(&body)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON body: {e}")))?;
    let case = case.checked().map_err(|err| ApiError::bad_request(err.0))?;
    // One serializer and one reader for the case's type (the Worker's size): the case is
    // stored as the JSON value's text, and listed as JSON values.
    let value = serde_json::to_value(&case).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let text = value.to_string();
    let id = format!("tc_{}", &auth::new_key("")?[..16]);
    let now = now_ms();
    // Written only while the site has fewer than the most cases (one statement: two
    // concurrent creations cannot both take the last place).
    let stored = env
        .d1("DB")?
        .prepare(
            "INSERT INTO test_cases (site_id, id, body, created_at) SELECT ?1, ?2, ?3, ?4 \
             WHERE (SELECT COUNT(*) FROM test_cases WHERE site_id = ?1) < ?5 RETURNING id",
        )
        .bind(&[
            caller.site.id.as_str().into(),
            id.as_str().into(),
            text.into(),
            JsValue::from_f64(now as f64),
            JsValue::from_f64(MAX_CASES as f64),
        ])?
        .first::<serde_json::Value>(None)
        .await?;
    if stored.is_none() {
        return Err(ApiError::LimitReached(format!(
            "This site has {MAX_CASES} test cases, the most it keeps: delete one first."
        )));
    }
    let body = serde_json::json!({"case": case_json(&id, now, value)});
    Ok(Response::from_json(&body)?.with_status(201))
}

/// `GET /admin/tests`.
pub(crate) async fn list(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let rows = env
        .d1("DB")?
        .prepare(
            "SELECT id, body, created_at FROM test_cases WHERE site_id = ?1 \
             ORDER BY created_at, id LIMIT ?2",
        )
        .bind(&[
            caller.site.id.as_str().into(),
            JsValue::from_f64(MAX_CASES as f64),
        ])?
        .all()
        .await?
        .results::<Row>()?;
    let cases = rows
        .iter()
        .map(|row| {
            let case: serde_json::Value = serde_json::from_str(&row.body)
                .map_err(|e| ApiError::Corrupt(format!("test case {}: {e}", row.id)))?;
            Ok::<_, ApiError>(case_json(&row.id, row.created_at as u64, case))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Response::from_json(&serde_json::json!({
        "count": cases.len(),
        "max": MAX_CASES,
        "cases": cases,
    }))?)
}

/// `DELETE /admin/tests/{id}`.
pub(crate) async fn delete(
    env: &Env,
    caller: SecretCaller,
    id: &str,
) -> Result<Response, ApiError> {
    let deleted = env
        .d1("DB")?
        .prepare("DELETE FROM test_cases WHERE site_id = ?1 AND id = ?2 RETURNING id")
        .bind(&[caller.site.id.as_str().into(), id.into()])?
        .first::<serde_json::Value>(None)
        .await?;
    if deleted.is_none() {
        return Err(ApiError::NotFound);
    }
    Ok(Response::from_json(&serde_json::json!({"deleted": id}))?)
}

/// Messages of a conversation a proposal reads at most (the answer and what came before).
const PROPOSAL_WINDOW: usize = 100;

/// Messages before the question a proposed case keeps at most.
const PROPOSAL_CONTEXT: usize = 6;

/// `POST /admin/tests/propose {"conversation_id", "message_id"?}`: a test case proposed
/// from a real turn of the site — the question the visitor asked, the messages before it
/// (at most 6, the greeting left out), and checks proposed from the stored answer
/// (`concierge_core::test_cases::propose`) — for the console to show, edited, before it
/// is saved with `POST /admin/tests`. The answer is `message_id` (an assistant message) or
/// the conversation's last answer; 404 when there is none.
pub(crate) async fn propose(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    use concierge_core::boundary::ConversationStore;
    use concierge_core::chat::Role;
    use concierge_core::conversation::Scope;
    let body: serde_json::Value = body::json(&mut req).await?;
    let Some(conversation_id) = body["conversation_id"].as_str() else {
        return Err(ApiError::bad_request("`conversation_id` is required."));
    };
    let wanted = body["message_id"].as_str();
    let services = crate::bindings::services::Services::new(env, &caller.site)?;
    let scope = Scope::new(&caller.site.id, conversation_id);
    let messages = services
        .store
        .load_recent_messages(scope, PROPOSAL_WINDOW)
        .await
        .map_err(ApiError::store)?;
    // What the visitor and the assistant said (the greeting, which every conversation
    // starts with, left out).
    let spoken = |m: &&concierge_core::conversation::StoredMessage| {
        !m.content.trim().is_empty()
            && matches!(m.role, Role::User | Role::Assistant)
            && m.kind != concierge_core::conversation::MessageKind::Greeting
    };
    let answer_at = messages
        .iter()
        .rposition(|m| {
            m.role == Role::Assistant && wanted.is_none_or(|id| m.id == id) && spoken(&m)
        })
        .ok_or(ApiError::NotFound)?;
    let question_at = messages[..answer_at]
        .iter()
        .rposition(|m| m.role == Role::User)
        .ok_or(ApiError::NotFound)?;
    let answer = &messages[answer_at];
    let tools: Vec<String> = answer
        .tool_steps
        .iter()
        .flat_map(|step| step.calls.iter().map(|call| call.name.clone()))
        .collect();
    let payloads: Vec<String> = answer
        .payloads
        .iter()
        .map(|p| p.kind().to_string())
        .collect();
    let before: Vec<_> = messages[..question_at].iter().filter(spoken).collect();
    let conversation: Vec<serde_json::Value> = before
        [before.len().saturating_sub(PROPOSAL_CONTEXT)..]
        .iter()
        .map(|m| {
            let role = if m.role == Role::User {
                "user"
            } else {
                "assistant"
            };
            serde_json::json!({"role": role, "content": m.content})
        })
        .collect();
    let checks = concierge_core::test_cases::propose(&answer.content, &tools, &payloads);
    let checks = serde_json::to_value(&checks).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let mut case = serde_json::json!({
        "question": messages[question_at].content,
        "checks": checks,
    });
    if !conversation.is_empty() {
        case["conversation"] = conversation.into();
    }
    let proposal = serde_json::json!({"case": case, "answer": answer.content});
    Ok(Response::from_json(&proposal)?)
}
