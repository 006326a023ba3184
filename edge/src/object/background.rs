//! Background turns (`Prefer: respond-async`), the Worker's side: the turn queue's
//! consumer forwards each job to the conversation's object ([`job`]), which answers it in
//! the conversation's line as it answers a streamed turn (`run::job`): its events numbered
//! into the object's log as they are produced, so the clients attached to `GET …/events`
//! see its text live and `GET …/stream` resumes it.

use serde::{Deserialize, Serialize};
use worker::{Env, Method};

use super::client::{internal, stub};
use crate::bindings::turn_queue::JobAnswerer;
use crate::error::ApiError;
use crate::site::Site;

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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
