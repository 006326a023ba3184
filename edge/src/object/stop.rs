//! Stopping the running turn: `POST /conversations/{id}/stop` (the Worker checks the
//! caller as for every conversation route, then asks the object, `POST https://object/stop`).
//!
//! A message turn's engine step runs [`stoppable`]: a stop drops it where it is, and the
//! model's request with it (the upstream fetch is aborted when dropped, its connection
//! closed). Then [`finish`] ends the turn as the visitor saw it: the text streamed so far
//! is stored as the reply (metadata `"stopped": true`, so history shows it as stopped;
//! nothing is stored when nothing was shown), and the turn's one terminal event is
//! `completed` (`kind` `answer`) with `"reply": {"kind": "stopped", "stopped": true}` (as
//! a held turn's says `"kind": "held"`) — on the poster's stream, a resumer's and the live
//! watchers' alike (the AI SDK's stream gets its `finish`, the reply in its metadata). The
//! turn then releases the conversation and the next post in line starts.
//!
//! The stop answers 200 `{"stopped": true, "message_id"}` once the turn has ended, or 204
//! when no turn is running (none started, or it already ended). A regenerate, and a turn
//! that has not started yet (still waiting in line, or before its message is stored), are
//! not stopped.

use std::rc::Rc;

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::{MessageKind, Metadata, Role, Scope, StoredMessage};
use concierge_core::engine::TurnOutcome;
use concierge_core::error::Error;
use concierge_core::turn::{ReplyEnvelope, Started, TurnEvent, TurnSink};
use futures_channel::oneshot;
use futures_util::future::{AbortHandle, Abortable};
use worker::{Env, Method, Response};

use super::Inner;
use super::client::{internal, relay, stub};
use crate::bindings::services::Services;
use crate::error::ApiError;

/// The running turn's engine step, as a stop reaches it.
pub(crate) struct Stopper {
    handle: AbortHandle,
    /// The stops asked for: each is told the reply's id once the turn has ended.
    asked: Vec<oneshot::Sender<String>>,
}

impl std::fmt::Debug for Stopper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stopper").finish_non_exhaustive()
    }
}

/// Runs `step` (a message turn's engine step) so that a stop can end it: its output, or
/// `None` when it was stopped (then [`finish`] ends the turn).
pub(super) async fn stoppable<F: Future>(inner: &Inner, step: F) -> Option<F::Output> {
    let (handle, registration) = AbortHandle::new_pair();
    *inner.stopper.borrow_mut() = Some(Stopper {
        handle,
        asked: Vec::new(),
    });
    let output = Abortable::new(step, registration).await.ok();
    if output.is_some() {
        inner.stopper.borrow_mut().take();
    }
    output
}

/// Ends a stopped turn: what was streamed is stored as the reply, marked stopped, and
/// `completed` (`"reply": {"kind": "stopped", "stopped": true}`) goes to every stream
/// following the turn.
pub(super) async fn finish(
    inner: &Inner,
    services: &Services,
    site_id: &str,
    started: Option<Started>,
    sink: &mut dyn TurnSink,
) -> Result<TurnOutcome, Error> {
    let asked = inner
        .stopper
        .borrow_mut()
        .take()
        .map(|s| s.asked)
        .unwrap_or_default();
    let Some(started) = started else {
        // Stops are only asked of a started turn.
        return Err(Error::EmptyAnswer);
    };
    let shown: String = inner
        .log
        .borrow()
        .turn_events()
        .iter()
        .filter_map(|(_, event)| match event {
            TurnEvent::Chunk { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .concat();
    let mut metadata = Metadata::new();
    metadata.insert("stopped".into(), true.into());
    let mut reply = StoredMessage {
        id: started.reply_id.clone(),
        seq: 0,
        role: Role::Assistant,
        kind: MessageKind::Answer,
        content: shown,
        metadata,
        created_at: crate::runtime::now_ms(),
        tool_steps: Vec::new(),
        payloads: Vec::new(),
    };
    if !reply.content.trim().is_empty() {
        let scope = Scope::new(site_id, &started.conversation_id);
        match services
            .store
            .append_reply(scope, &started.user_message_id, &reply)
            .await
        {
            Ok(seq) => reply.seq = seq,
            Err(error) => {
                let line = serde_json::json!({"level": "error", "msg": "stopped reply not stored",
                    "site": site_id, "conversation_id": started.conversation_id,
                    "detail": error.to_string()});
                worker::console_error!("{line}");
            }
        }
    }
    sink.emit(TurnEvent::Completed {
        message_id: started.reply_id.clone(),
        kind: MessageKind::Answer,
        intent: None,
        confidence: None,
        usage: None,
        reply: Some(ReplyEnvelope {
            kind: "answer",
            data: serde_json::json!({"kind": "stopped", "stopped": true}),
        }),
    });
    for tx in asked {
        let _ = tx.send(started.reply_id.clone());
    }
    Ok(TurnOutcome {
        user_message_id: started.user_message_id,
        reply,
        intent: None,
        confidence: None,
        language: Default::default(),
        route: Vec::new(),
        usage: None,
    })
}

impl Inner {
    /// `POST https://object/stop`: stops the running turn and answers once it has ended
    /// (200 `{"stopped": true, "message_id"}`); 204 when no turn runs.
    pub(super) async fn stop_turn(self: &Rc<Self>) -> Result<Response, ApiError> {
        let running = self.log.borrow().turn.as_ref().is_some_and(|t| !t.ended);
        let asked = {
            let mut stopper = self.stopper.borrow_mut();
            match stopper.as_mut() {
                Some(stopper) if running => {
                    let (tx, rx) = oneshot::channel();
                    stopper.asked.push(tx);
                    stopper.handle.abort();
                    rx
                }
                _ => return Ok(Response::empty()?.with_status(204)),
            }
        };
        let message_id = asked
            .await
            .map_err(|_| ApiError::Internal(worker::Error::RustError("stop lost".into())))?;
        Ok(Response::from_json(
            &serde_json::json!({"stopped": true, "message_id": message_id}),
        )?)
    }
}

/// The Worker's side: asks conversation `conversation_id`'s object to stop its running
/// turn; its answer as the client's.
pub(crate) async fn stop(
    env: &Env,
    site_id: &str,
    conversation_id: &str,
) -> Result<Response, ApiError> {
    let req = internal(Method::Post, site_id, conversation_id, "stop", None)?;
    let response = stub(env, site_id, conversation_id)?
        .fetch_with_request(req)
        .await?;
    relay(response)
}
