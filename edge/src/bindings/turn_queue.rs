//! Background turns (`Prefer: respond-async`) through the `TURN_QUEUE` Cloudflare Queue,
//! produced and consumed by this Worker, instead of `wait_until` (which the platform cuts
//! off about 30 s after the response).
//!
//! The route stores the visitor's message and sends a [`TurnJob`]; the consumer hands it to
//! a [`JobAnswerer`] — the conversation's Durable Object (`crate::object`), which answers it in the
//! conversation's line with the core's `concierge_core::engine::answer_job` — which does nothing when the
//! reply is already stored or a retry superseded the job, so a job delivered twice is
//! answered once — and publishes the stored reply live.
//!
//! Retries: a transient failure re-sends the job with the next attempt number after
//! `TURN_RETRY_BASE_SECONDS` × 2^attempt; the last of `TURN_MAX_ATTEMPTS` marks the
//! visitor's message (`answer_failed`, the error's code). An invocation that dies mid-turn
//! is not acknowledged, so the platform delivers the job again (the queue's
//! `max_retries`); a job that exhausts those lands on the dead-letter queue, whose consumer
//! marks the visitor's message `answer_failed: "turn_abandoned"`.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use concierge_core::turn::TurnJob;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use worker::{Env, Message, MessageBatch, MessageBuilder, MessageExt};

use super::d1_store::D1Store;
use super::queue::var_u32;
use super::services::SiteAssistants;
use crate::error::ApiError;
use crate::site::Site;

/// The turn queue's name (`wrangler.toml`).
pub(crate) const QUEUE: &str = "concierge-turns";
/// Its dead-letter queue's name (`wrangler.toml`).
pub(crate) const DEAD_LETTER_QUEUE: &str = "concierge-turns-failed";

/// One queue message: a job and its attempt (0 for the first).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TurnMessage {
    pub job: TurnJob,
    pub attempt: u32,
}

/// Send `job`'s attempt `attempt`, delayed by `delay_seconds`.
pub(crate) async fn send(
    env: &Env,
    job: TurnJob,
    attempt: u32,
    delay_seconds: u32,
) -> worker::Result<()> {
    let mut message = MessageBuilder::new(TurnMessage { job, attempt });
    if delay_seconds > 0 {
        message = message.delay_seconds(delay_seconds);
    }
    env.queue("TURN_QUEUE")?.send(message.build()).await
}

/// Who answers a background turn (the conversation's Durable Object, given by the entry
/// point): the stored reply's id, `None` when there was nothing to do.
pub(crate) trait JobAnswerer {
    async fn answer(
        env: &Env,
        site: Site,
        job: TurnJob,
        last: bool,
    ) -> Result<Option<String>, ApiError>;
}

/// Attempts and backoff of background turns.
#[derive(Debug, Clone, Copy)]
struct Retry {
    max_attempts: u32,
    base_delay: u32,
}

/// The turn queue's consumer: the batch's jobs run concurrently; each is acknowledged,
/// re-sent for a later attempt, or left to the platform to deliver again.
pub(crate) async fn consume<T, R: SiteAssistants, J: JobAnswerer>(
    batch: &MessageBatch<T>,
    env: &Env,
) {
    let retry = Retry {
        max_attempts: var_u32(env, "TURN_MAX_ATTEMPTS", 3).max(1),
        base_delay: var_u32(env, "TURN_RETRY_BASE_SECONDS", 2),
    };
    let messages = typed(batch);
    join_all(messages.iter().map(|m| settle::<R, J>(env, retry, m))).await;
}

/// The dead-letter queue's consumer: jobs whose invocations kept dying are marked failed.
pub(crate) async fn consume_dead_letters<T>(batch: &MessageBatch<T>, env: &Env) {
    for message in typed(batch) {
        if mark_failed(env, &message.body().job, "turn_abandoned").await {
            log(
                "turn abandoned",
                message.body(),
                "its deliveries are exhausted",
            );
            message.ack();
        } else {
            message.retry();
        }
    }
}

/// The batch's messages with their bodies (a malformed one is logged and acknowledged).
fn typed<T>(batch: &MessageBatch<T>) -> Vec<Message<TurnMessage>> {
    batch
        .raw_iter()
        .filter_map(|raw| match Message::<TurnMessage>::try_from(raw) {
            Ok(message) => Some(message),
            Err(err) => {
                let line = serde_json::json!({"level": "error", "msg": "malformed turn job", "detail": err.to_string()});
                worker::console_error!("{line}");
                None
            }
        })
        .collect()
}

/// Run one job and settle its message.
async fn settle<R: SiteAssistants, J: JobAnswerer>(
    env: &Env,
    retry: Retry,
    message: &Message<TurnMessage>,
) {
    let TurnMessage { job, attempt } = message.body().clone();
    let last = attempt + 1 >= retry.max_attempts;
    let outcome = answer::<R, J>(env, &job, last).await;
    let current = message.body();
    match outcome {
        Ok(Some(reply_id)) => log("turn answered", current, &reply_id),
        Ok(None) => log("turn skipped", current, "answered, superseded or gone"),
        Err(error) if error.is_transient() && !last => {
            log("turn retry", current, &error.chain());
            let delay = retry.base_delay.saturating_mul(1 << attempt.min(10));
            if let Err(err) = send(env, job, attempt + 1, delay).await {
                // Not re-sent: the platform delivers this attempt again.
                log("turn retry not queued", current, &err.to_string());
                message.retry();
                return;
            }
        }
        Err(error) => log("turn failed", current, &error.chain()),
    }
    message.ack();
}

/// Answer `job` with its site's services; the stored reply's id, or `None` when there was
/// nothing to do. A failure before the core runs (site lookup, bindings) on the last
/// attempt is marked here; the core marks its own.
async fn answer<R: SiteAssistants, J: JobAnswerer>(
    env: &Env,
    job: &TurnJob,
    last: bool,
) -> Result<Option<String>, ApiError> {
    let site = match super::d1_sites::find_by_id(env, &job.site_id).await {
        // A site deleted meanwhile ends its jobs.
        Ok(None) => return Ok(None),
        // A draft's job (the merchant's, never a visitor's) runs the draft.
        Ok(Some(site)) if job.draft => site.drafted(),
        Ok(Some(site)) => site,
        Err(error) => return Err(setup_failed(env, job, last, error).await),
    };
    if R::for_site(env, &site).is_err() {
        // Cannot happen through the API (an unbuilt template cannot be chosen): the job
        // ends, marked, rather than being answered by another template.
        let line = serde_json::json!({"level": "error", "msg": "template not built",
            "site": job.site_id, "template": site.template.as_str()});
        worker::console_error!("{line}");
        mark_failed(env, job, "template_unavailable").await;
        return Ok(None);
    }
    // The conversation's object answers it, in the conversation's line (one turn at a
    // time), and publishes the reply to the clients attached.
    J::answer(env, site, job.clone(), last).await
}

/// A failure before the core runs: marked on the last attempt, then returned.
async fn setup_failed(env: &Env, job: &TurnJob, last: bool, error: ApiError) -> ApiError {
    if last {
        mark_failed(env, job, SETUP_FAILED).await;
    }
    error
}

/// The code a visitor's message is marked with when its last attempt failed before the
/// core ran (site lookup, bindings): the store's, as the platform failed.
const SETUP_FAILED: &str = "store_unavailable";

/// Marks `job`'s visitor message `answer_failed: code`; whether that worked.
async fn mark_failed(env: &Env, job: &TurnJob, code: &str) -> bool {
    let scope = Scope::new(&job.site_id, &job.conversation_id);
    let marked = match D1Store::new(env) {
        Ok(store) => store
            .mark_answer_failed(scope, &job.user_message_id, &job.message_id, code)
            .await
            .map_err(ApiError::store),
        Err(err) => Err(ApiError::from(err)),
    };
    if let Err(error) = &marked {
        let line = serde_json::json!({
            "level": "error", "msg": "turn failure not marked", "site": job.site_id,
            "conversation_id": job.conversation_id, "message_id": job.message_id,
            "detail": error.chain(),
        });
        worker::console_error!("{line}");
    }
    marked.is_ok()
}

fn log(msg: &str, message: &TurnMessage, detail: &str) {
    let line = serde_json::json!({
        "level": if msg == "turn answered" || msg == "turn skipped" { "info" } else { "warn" },
        "msg": msg,
        "site": message.job.site_id,
        "conversation_id": message.job.conversation_id,
        "message_id": message.job.message_id,
        "attempt": message.attempt,
        "detail": detail,
    });
    worker::console_log!("{line}");
}
