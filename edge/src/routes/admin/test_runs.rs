//! Runs of a site's test cases (issue 42, items 3–5; secret key, so a merchant's CI can
//! start one and poll it):
//! - `POST /admin/tests/runs {"target": "draft"|"live"}`: 202 with the run; every case is
//!   sent to the test queue (`TEST_QUEUE`), whose consumer ([`consume`]) answers a batch's
//!   cases in parallel through the same turn as any conversation (the conversation's
//!   object, `Accept: application/json`), each counted against the site's secret-key rate
//!   limit (a refused case is tried again later), checks the answer
//!   (`concierge_core::test_cases::Checks::first_failure`; a rubric judged by the site's
//!   model, its verdict kept) and keeps the result;
//! - `GET /admin/tests/runs/{id}`: the run's progress and its results per case.
//!
//! A case's conversation is deleted once its result is kept: test turns never show in the
//! site's conversations or statistics.

use concierge_core::boundary::{ConversationStore, ModelCall};
use concierge_core::chat::Role;
use concierge_core::conversation::{MessageKind, Scope, StoredMessage};
use concierge_core::engine::{self, NewConversation, Platform};
use concierge_core::identity::UserIdentity;
use concierge_core::test_cases::{self, Observed, TestCase};
use serde::Deserialize;
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use worker::{Env, Message, MessageBatch, MessageBuilder, MessageExt, Request, Response};

use crate::auth::{self, SecretCaller, Visitor};
use crate::bindings::d1_sites;
use crate::error::ApiError;
use crate::http::body;
use crate::object::client::{self, Format, ObjectTurn, TurnKind};
use crate::runtime::now_ms;
use crate::site::Site;

/// The test queue's name (`wrangler.toml`).
pub(crate) const QUEUE: &str = "concierge-tests";

/// How many times a case refused by the rate limit is tried before it is kept as an
/// error (2, 4, 8, 16 s apart).
const ATTEMPTS: u64 = 5;

/// A digest of the site's pending draft (`None` without one): what a run of the draft
/// ran, for the publish gate to know the draft has not changed since.
pub(crate) fn draft_mark(site: &Site) -> Option<String> {
    let text = serde_json::to_string(site.draft.as_deref()?).ok()?;
    // FNV-1a, 64 bits: a change detector, not a secret.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    Some(format!("{hash:016x}"))
}

/// Start a run of every case of `site` against its draft or its live configuration; the
/// run's id. 409 when the site has no case.
pub(crate) async fn start(env: &Env, site: &Site, draft: bool) -> Result<String, ApiError> {
    let db = env.d1("DB")?;
    let cases = db
        .prepare("SELECT id, body FROM test_cases WHERE site_id = ?1 ORDER BY created_at, id")
        .bind(&[site.id.as_str().into()])?
        .all()
        .await?
        .results::<Value>()?;
    if cases.is_empty() {
        return Err(ApiError::Conflict(
            "Trang này chưa có ca kiểm thử nào: hãy thêm một ca trước. (This site has no test \
             cases yet: add one first.)",
        ));
    }
    let run = format!("tr_{}", &auth::new_key("")?[..16]);
    let site_id = site.id.as_str();
    let mut statements = vec![
        db.prepare(
            "INSERT INTO test_runs (site_id, id, target, live_version, draft_mark, total, \
             created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(&[
            site_id.into(),
            run.as_str().into(),
            if draft { "draft" } else { "live" }.into(),
            JsValue::from_f64(site.version as f64),
            draft_mark(site)
                .filter(|_| draft)
                .map_or(JsValue::NULL, JsValue::from),
            JsValue::from_f64(cases.len() as f64),
            JsValue::from_f64(now_ms() as f64),
        ])?,
    ];
    let mut jobs = Vec::with_capacity(cases.len());
    for case in &cases {
        let id = case["id"].as_str().unwrap_or_default();
        let parsed: Value = serde_json::from_str(case["body"].as_str().unwrap_or("{}"))
            .map_err(|e| ApiError::Corrupt(e.to_string()))?;
        let name = parsed["name"].as_str().or(parsed["question"].as_str());
        statements.push(
            db.prepare(
                "INSERT INTO test_results (site_id, run_id, case_id, name) VALUES (?1, ?2, ?3, ?4)",
            )
            .bind(&[
                site_id.into(),
                run.as_str().into(),
                id.into(),
                name.unwrap_or(id).into(),
            ])?,
        );
        let job = json!({"site": site_id, "run": run, "case": id, "draft": draft});
        jobs.push(MessageBuilder::new(job.to_string()).build());
    }
    db.batch(statements).await?;
    env.queue("TEST_QUEUE")?.send_batch(jobs).await?;
    Ok(run)
}

/// `POST /admin/tests/runs`.
pub(crate) async fn create(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    // `{"target": "draft"|"live"}`, read through a JSON value (the Worker's size).
    let body: Value = body::json(&mut req).await?;
    let draft = match body
        .as_object()
        .map(|fields| (fields.len(), &body["target"]))
    {
        Some((1, Value::String(target))) if target == "draft" => true,
        Some((1, Value::String(target))) if target == "live" => false,
        _ => {
            return Err(ApiError::bad_request(
                "The body must be {\"target\": \"draft\"} or {\"target\": \"live\"}.",
            ));
        }
    };
    let site = super::draft::fresh(env, &caller).await?;
    let run = start(env, &site, draft).await?;
    let view = view(env, &site.id, &run).await?.ok_or(ApiError::NotFound)?;
    Ok(Response::from_json(&view)?.with_status(202))
}

/// `GET /admin/tests/runs/{id}`.
pub(crate) async fn get(env: &Env, caller: SecretCaller, id: &str) -> Result<Response, ApiError> {
    let view = view(env, &caller.site.id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Response::from_json(&view)?)
}

/// A run with its progress and results (`None`: no such run on this site):
/// `{id, target, live_version, draft_mark, created_at, total, done, passed, failed,
/// errors, finished, results: [{case_id, name, status, answer, failed, latency_ms,
/// tokens, verdict}]}`.
pub(crate) async fn view(env: &Env, site_id: &str, id: &str) -> Result<Option<Value>, ApiError> {
    let db = env.d1("DB")?;
    let Some(mut run) = db
        .prepare(
            "SELECT id, target, live_version, draft_mark, created_at, total FROM test_runs \
             WHERE site_id = ?1 AND id = ?2",
        )
        .bind(&[site_id.into(), id.into()])?
        .first::<Value>(None)
        .await?
    else {
        return Ok(None);
    };
    let results = db
        .prepare(
            "SELECT case_id, name, status, answer, failed, latency_ms, tokens, verdict \
             FROM test_results \
             WHERE site_id = ?1 AND run_id = ?2 ORDER BY rowid",
        )
        .bind(&[site_id.into(), id.into()])?
        .all()
        .await?
        .results::<Value>()?;
    let count = |status: &str| results.iter().filter(|r| r["status"] == status).count();
    let (passed, failed, errors) = (count("passed"), count("failed"), count("error"));
    let done = passed + failed + errors;
    run["done"] = done.into();
    run["passed"] = passed.into();
    run["failed"] = failed.into();
    run["errors"] = errors.into();
    run["finished"] = (done == results.len()).into();
    run["results"] = results.into();
    Ok(Some(run))
}

/// The test queue's consumer: a batch's cases run in parallel; a case refused by the rate
/// limit is sent again, later (and kept as an error on its last attempt).
pub(crate) async fn consume<T>(batch: &MessageBatch<T>, env: &Env) {
    // A job is sent as its JSON text (a `Value` would cross as a JS `Map`).
    let messages: Vec<(Message<String>, Value)> = batch
        .raw_iter()
        .filter_map(|raw| match Message::<String>::try_from(raw) {
            Ok(message) => {
                let job = serde_json::from_str(message.body()).unwrap_or_default();
                Some((message, job))
            }
            Err(err) => {
                let line = json!({"level": "error", "msg": "malformed test job", "detail": err.to_string()});
                worker::console_error!("{line}");
                None
            }
        })
        .collect();
    let runs = messages.iter().map(|(message, job)| async move {
        let attempt = job["attempt"].as_u64().unwrap_or(0);
        let last = attempt + 1 >= ATTEMPTS;
        match run_case(env, job, last).await {
            Err(ApiError::RateLimited) if !last => {
                let mut job = job.clone();
                job["attempt"] = (attempt + 1).into();
                let later = MessageBuilder::new(job.to_string())
                    .delay_seconds(2 << attempt)
                    .build();
                match env.queue("TEST_QUEUE") {
                    Ok(queue) if queue.send(later).await.is_ok() => message.ack(),
                    // Not sent again: the platform delivers this one again.
                    _ => message.retry(),
                }
            }
            Err(error) => {
                let line = json!({"level": "error", "msg": "test case not run",
                    "job": job, "error": error.chain()});
                worker::console_error!("{line}");
                message.ack();
            }
            Ok(()) => message.ack(),
        }
    });
    futures_util::future::join_all(runs).await;
}

/// What a case's turn gave: `(status, answer, failed check or error code, latency,
/// tokens, the rubric's verdict)`.
type Outcome = (
    &'static str,
    String,
    Option<String>,
    u64,
    Option<u64>,
    Option<String>,
);

/// Run one case of a run and keep its result.
async fn run_case(env: &Env, job: &Value, last: bool) -> Result<(), ApiError> {
    let field = |name: &str| job[name].as_str().unwrap_or_default().to_string();
    let (site_id, run, case_id) = (field("site"), field("run"), field("case"));
    let db = env.d1("DB")?;
    // The site as D1 holds it now (a draft changed a moment ago included).
    let Some(current) = d1_sites::read_for_update(&db, &site_id).await? else {
        return Ok(());
    };
    let site = match job["draft"].as_bool() {
        Some(true) => current.site.drafted(),
        _ => current.site,
    };
    let body = db
        .prepare("SELECT body FROM test_cases WHERE site_id = ?1 AND id = ?2")
        .bind(&[site_id.as_str().into(), case_id.as_str().into()])?
        .first::<Value>(None)
        .await?;
    let outcome = match body.as_ref().and_then(|b| b["body"].as_str()) {
        None => (
            "error",
            String::new(),
            Some("case_deleted".into()),
            0,
            None,
            None,
        ),
        Some(text) => {
            let value: Value =
                serde_json::from_str(text).map_err(|e| ApiError::Corrupt(e.to_string()))?;
            let case =
                TestCase::deserialize(&value).map_err(|e| ApiError::Corrupt(e.to_string()))?;
            match ask(env, site, &case, &run).await {
                Ok(outcome) => outcome,
                Err(ApiError::RateLimited) if !last => return Err(ApiError::RateLimited),
                Err(error) => {
                    let code = error.parts().1.into();
                    ("error", String::new(), Some(code), 0, None, None)
                }
            }
        }
    };
    let (status, answer, failed, latency, tokens, verdict) = outcome;
    db.prepare(
        "UPDATE test_results SET status = ?4, answer = ?5, failed = ?6, latency_ms = ?7, \
         tokens = ?8, finished_at = ?9, verdict = ?10 \
         WHERE site_id = ?1 AND run_id = ?2 AND case_id = ?3",
    )
    .bind(&[
        site_id.as_str().into(),
        run.as_str().into(),
        case_id.as_str().into(),
        status.into(),
        answer.into(),
        failed.map_or(JsValue::NULL, JsValue::from),
        JsValue::from_f64(latency as f64),
        tokens.map_or(JsValue::NULL, |t| JsValue::from_f64(t as f64)),
        JsValue::from_f64(now_ms() as f64),
        verdict.map_or(JsValue::NULL, JsValue::from),
    ])?
    .run()
    .await?;
    Ok(())
}

/// Ask `case`'s question of `site` in a new conversation (after the case's conversation,
/// as its user), through the conversation's object like any turn, check the answer, then
/// delete the conversation.
async fn ask(env: &Env, site: Site, case: &TestCase, run: &str) -> Result<Outcome, ApiError> {
    let (assistant, services) = crate::templates::turn_context(env, &site)?;
    let conversation_id = open(&services, &assistant, &site, case).await?;
    let site_id = site.id.clone();
    let turn = ObjectTurn {
        limits: vec![("SECRET_RATE_LIMIT".into(), site_id.clone())],
        conversation_id: conversation_id.clone(),
        visitor: Visitor::Site,
        kind: TurnKind::Message {
            text: case.question.clone(),
            idempotency_key: None,
        },
        format: Format::Json,
        request_id: format!("{run}-{conversation_id}"),
        openai: None,
        site: site.clone(),
    };
    let started = now_ms();
    let answered = client::turn(env, &site_id, turn).await;
    let latency = now_ms().saturating_sub(started);
    let answered = match answered {
        Ok(mut response) => {
            let status = response.status_code();
            let body = response.json::<Value>().await.unwrap_or_default();
            Ok((status, body))
        }
        Err(error) => Err(error),
    };
    // Kept apart from the site's conversations and statistics: deleted once answered.
    super::super::conversations::erase(env, &site, &conversation_id).await?;
    match answered? {
        (200, answer) => Ok(assess(&services, case, &answer, latency).await),
        (429, _) => Err(ApiError::RateLimited),
        (_, error) => {
            let code = error["error"]["code"].as_str().unwrap_or("internal");
            Ok((
                "error",
                String::new(),
                Some(code.into()),
                latency,
                None,
                None,
            ))
        }
    }
}

/// The case's conversation: opened as its user (if it names one), with the turns it
/// starts from stored before its question; answers its id.
async fn open(
    services: &crate::bindings::services::Services,
    assistant: &crate::templates::SiteAssistant,
    site: &Site,
    case: &TestCase,
) -> Result<String, ApiError> {
    let identity = match &case.user {
        Some(user) => Some(
            UserIdentity::new(
                user.user_id.clone(),
                user.role.clone(),
                user.permissions.clone(),
                user.department.clone(),
            )
            .map_err(|why| ApiError::bad_request(why.message()))?,
        ),
        None => None,
    };
    let new = NewConversation {
        site_id: site.id.clone(),
        user_id: identity.as_ref().map(|i| i.sub.clone()),
        identity,
        language: None,
    };
    let created = engine::create_conversation(services, assistant, new).await?;
    let conversation_id = created.conversation.id;
    let scope = Scope::new(&site.id, &conversation_id);
    for turn in &case.conversation {
        let user = turn.role == "user";
        let message = StoredMessage {
            id: services.ids().new_id(),
            seq: 0,
            role: if user { Role::User } else { Role::Assistant },
            kind: if user {
                MessageKind::Text
            } else {
                MessageKind::Answer
            },
            content: turn.content.clone(),
            metadata: Default::default(),
            created_at: services.clock().now_ms(),
            tool_steps: Vec::new(),
            payloads: Vec::new(),
        };
        services
            .store
            .append_message(scope, &message)
            .await
            .map_err(ApiError::store)?;
    }
    Ok(conversation_id)
}

/// The case's checks on the answer (the turn's JSON), then its rubric, judged by the
/// site's model (the draft's for a run of the draft) once every other check passed; its
/// verdict kept.
async fn assess(
    services: &crate::bindings::services::Services,
    case: &TestCase,
    answer: &Value,
    latency: u64,
) -> Outcome {
    let names = |list: &Value, key: &str| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.get(key).unwrap_or(v).as_str().map(str::to_string))
            .collect()
    };
    let text = answer["message"].as_str().unwrap_or_default().to_string();
    let tools = names(&answer["tools"], "name");
    let payloads = names(&answer["payloads"], "kind");
    let usage = &answer["usage"];
    let tokens = usage["prompt_tokens"]
        .as_u64()
        .map(|prompt| prompt + usage["completion_tokens"].as_u64().unwrap_or(0));
    let seen = Observed {
        answer: &text,
        tools: &tools,
        payloads: &payloads,
        latency_ms: latency,
        tokens,
    };
    let mut failed = case.checks.first_failure(&seen);
    let mut verdict = None;
    if let (None, Some(rubric)) = (&failed, &case.checks.rubric) {
        let request = test_cases::judge_request(&case.question, &text, rubric);
        let Ok(reply) = engine::complete(services.model(), &ModelCall::new(&request)).await else {
            let code = Some("rubric_not_judged".into());
            return ("error", text, code, latency, tokens, None);
        };
        let (passed, why) = test_cases::verdict(&reply);
        if !passed {
            failed = Some(format!("rubric: {why}"));
        }
        verdict = Some(why);
    }
    let status = if failed.is_some() { "failed" } else { "passed" };
    (status, text, failed, latency, tokens, verdict)
}

/// A run's counts for the comparison: `{passed, total}`.
fn rate(run: &Value) -> Value {
    json!({"passed": run["passed"], "total": run["total"]})
}

/// The publish gate's comparison of run `draft_run` (of `site`'s pending draft) with
/// `live_run` (of its live configuration): `{draft_run, live_run, draft: {passed, total},
/// live: {passed, total}, regressions: [{case_id, name}]}`, the regressions being every
/// case that passed on live and did not pass on the draft. 404 for a run that is not the
/// site's; 409 when a run is unfinished, of the wrong target, or of a draft or live
/// configuration that has changed since.
pub(crate) async fn compare(
    env: &Env,
    site: &Site,
    draft_run: &str,
    live_run: &str,
) -> Result<Value, ApiError> {
    let draft = view(env, &site.id, draft_run)
        .await?
        .ok_or(ApiError::NotFound)?;
    let live = view(env, &site.id, live_run)
        .await?
        .ok_or(ApiError::NotFound)?;
    if draft["target"] != "draft" || live["target"] != "live" {
        return Err(ApiError::Conflict(
            "`draft_run` phải là một lượt chạy với bản nháp và `live_run` với bản đang chạy. \
             (`draft_run` must be a run of the draft and `live_run` one of the live \
             configuration.)",
        ));
    }
    if draft["finished"] != true || live["finished"] != true {
        return Err(ApiError::Conflict(
            "Các lượt kiểm thử chưa chạy xong; hãy đợi rồi thử lại. (The test runs are not \
             finished yet; wait and try again.)",
        ));
    }
    let mark = draft_mark(site);
    if draft["draft_mark"].as_str() != mark.as_deref()
        || live["live_version"].as_u64() != Some(site.version)
    {
        return Err(ApiError::Conflict(
            "Bản nháp hoặc bản đang chạy đã thay đổi sau lượt kiểm thử; hãy chạy lại. (The \
             draft or the live configuration changed after the test runs; run them again.)",
        ));
    }
    let passed = |run: &Value, case: &Value| {
        run["results"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["case_id"] == case["case_id"] && r["status"] == "passed")
    };
    let regressions: Vec<Value> = live["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|case| case["status"] == "passed" && !passed(&draft, case))
        .map(|case| json!({"case_id": case["case_id"], "name": case["name"]}))
        .collect();
    Ok(json!({
        "draft_run": draft_run,
        "live_run": live_run,
        "draft": rate(&draft),
        "live": rate(&live),
        "regressions": regressions,
    }))
}

/// `GET /admin/tests/compare?draft_run=…&live_run=…`: [`compare`].
pub(crate) async fn get_compare(
    req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let url = req.url()?;
    let param = |name: &str| {
        url.query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
            .ok_or_else(|| ApiError::bad_request(format!("`{name}` is required.")))
    };
    let (draft_run, live_run) = (param("draft_run")?, param("live_run")?);
    let site = super::draft::fresh(env, &caller).await?;
    Ok(Response::from_json(
        &compare(env, &site, &draft_run, &live_run).await?,
    )?)
}

/// `POST /admin/publish/check`: the publish gate's two runs started, of the draft and of
/// the live configuration → 202 `{"draft_run", "live_run"}`; 409 when no draft is pending
/// or the site has no test case.
pub(crate) async fn check(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let site = super::draft::fresh(env, &caller).await?;
    if site.draft.is_none() {
        return Err(ApiError::Conflict(
            "Nothing to publish: the draft is the live configuration.",
        ));
    }
    let draft_run = start(env, &site, true).await?;
    let live_run = start(env, &site, false).await?;
    let body = json!({"draft_run": draft_run, "live_run": live_run});
    Ok(Response::from_json(&body)?.with_status(202))
}

/// How many test cases `site_id` has.
pub(crate) async fn case_count(env: &Env, site_id: &str) -> Result<u64, ApiError> {
    let row = env
        .d1("DB")?
        .prepare("SELECT COUNT(*) AS n FROM test_cases WHERE site_id = ?1")
        .bind(&[site_id.into()])?
        .first::<Value>(None)
        .await?;
    Ok(row.and_then(|r| r["n"].as_u64()).unwrap_or(0))
}
