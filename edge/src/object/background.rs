//! Background turns (`Prefer: respond-async`) in the conversation's object: the turn
//! queue's consumer forwards each job ([`job`], the Worker's side), and the object answers
//! it in the conversation's line ([`answer`]) as it answers a streamed turn: its events
//! numbered into the object's log as they are produced, so the clients attached to `GET
//! …/events` see its text live and `GET …/stream` resumes it.

use std::rc::Rc;

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use serde::{Deserialize, Serialize};
use worker::{Env, Method, Response};

use super::Inner;
use super::client::{internal, stub};
use super::run::ObjectSink;
use crate::bindings::turn_queue::JobAnswerer;
use crate::error::ApiError;
use crate::site::Site;
use crate::templates::turn_context;

/// A background turn (`Prefer: respond-async`), forwarded by the turn queue's consumer:
/// the object answers it in the conversation's line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ObjectJob {
    pub site: Site,
    pub job: concierge_core::turn::TurnJob,
    /// Whether this is the job's last attempt (a failure then marks the message).
    pub last: bool,
}

/// What the object did with an [`ObjectJob`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JobOutcome {
    /// The stored reply's id; `None` when there was nothing to do.
    #[serde(default)]
    pub reply_id: Option<String>,
    /// Why it failed (for the consumer's log), and whether a retry may succeed.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub transient: bool,
}

/// Answer a background turn in the conversation's object (the turn queue's consumer):
/// the stored reply's id, `None` when there was nothing to do.
pub(crate) async fn job(env: &Env, job: ObjectJob) -> Result<Option<String>, ApiError> {
    let (site_id, conversation_id) = (job.site.id.clone(), job.job.conversation_id.clone());
    let body = serde_json::to_string(&job).map_err(|e| ApiError::Corrupt(e.to_string()))?;
    let req = internal(Method::Post, &site_id, &conversation_id, "job", Some(body))?;
    let mut response = stub(env, &site_id, &conversation_id)?
        .fetch_with_request(req)
        .await?;
    if response.status_code() != 200 {
        return Err(ApiError::Internal(worker::Error::RustError(format!(
            "job: the object answered {}",
            response.status_code()
        ))));
    }
    let outcome: JobOutcome = response.json().await?;
    match outcome.error {
        None => Ok(outcome.reply_id),
        // Transient: retried with backoff; otherwise the core marked the message already.
        Some(error) if outcome.transient => {
            Err(ApiError::Internal(worker::Error::RustError(error)))
        }
        Some(error) => Err(ApiError::Corrupt(error)),
    }
}

/// The turn queue's consumer hands its jobs to the conversation's object.
pub(crate) struct ObjectAnswers;

impl JobAnswerer for ObjectAnswers {
    async fn answer(
        env: &Env,
        site: Site,
        job: concierge_core::turn::TurnJob,
        last: bool,
    ) -> Result<Option<String>, ApiError> {
        self::job(env, ObjectJob { site, job, last }).await
    }
}

/// `POST https://object/job`: a background turn (the turn queue's job), answered in the
/// conversation's line, its events into the log (numbered, kept, sent to the watchers).
/// Always 200 with a [`JobOutcome`] (its error for the consumer to log and retry).
pub(super) async fn answer(inner: Rc<Inner>, job: ObjectJob) -> Result<Response, ApiError> {
    let env = inner.env.clone();
    let (assistant, services) = turn_context(&env, &job.site)?;
    let slot = inner.acquire_unbounded().await?;
    let mut sink = ObjectSink::new(&inner, None, None, None);
    let result = concierge_core::engine::answer_job_streamed(
        &services, &assistant, &job.job, job.last, &mut sink,
    )
    .await;
    sink.end();
    // The reply's embedding; the conversation read again for the next turn.
    let scope = Scope::new(&job.job.site_id, &job.job.conversation_id);
    let window = concierge_core::engine::Assistant::config(&assistant).history_window;
    let _ = futures_util::future::join(
        services.queue_flush(),
        services.store.read_turn(scope, window),
    )
    .await;
    drop(slot);
    let outcome = match result {
        Ok(outcome) => JobOutcome {
            reply_id: outcome.map(|o| o.reply.id),
            error: None,
            transient: false,
        },
        Err(error) => JobOutcome {
            reply_id: None,
            transient: error.is_transient(),
            error: Some(ApiError::Core(error).chain()),
        },
    };
    Ok(Response::from_json(&outcome)?)
}
