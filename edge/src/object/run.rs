//! A turn inside the conversation's object: who may reach the conversation (from the
//! object's memory of it), its place in line, and the turn itself — run apart from the
//! response, its events into the object's log, which the poster's response follows; and
//! a background turn's job ([`job`]), whose events go to the log the same way (nobody
//! posted it, so no stream follows it; the watchers and resumers do).

use std::cell::RefCell;
use std::rc::Rc;

use concierge_core::conversation::Scope;
use concierge_core::engine::{RegenerateInput, TurnOutcome};
use concierge_core::error::Error;
use concierge_core::stream::ai_sdk::{AiSdkEncoder, HEADER_NAME, HEADER_VALUE};
use concierge_core::stream::native::{CLOSED_CODE, CLOSED_MESSAGE};
use concierge_core::turn::{Started, TurnEvent, TurnInput, TurnSink};
use futures_channel::oneshot;
use worker::Response;
use worker::web_sys::ReadableStream;

use super::accept::accept;
use super::client::{FIRST_EVENT_HEADER, Format, ObjectTurn, TurnKind};
use super::handoff::{self, Gate};
use super::log::Sink;
use super::openai::OpenAiAnswer;
use super::{Inner, LiveEvent, Names};
use crate::auth::reachable;
use crate::auth::{Admission, Visitor};
use crate::bindings::d1_store::remembered;
use crate::bindings::js_stream::{BodyWriter, Coalescing};
use crate::error::ApiError;
use crate::http::turn_json;
use crate::http::turn_stream::{Ended, TurnRun};
use crate::templates::turn_context;

/// What a turn's spawned run reports back to the request that posted it.
type StartedRx = oneshot::Receiver<Result<u64, ApiError>>;
type DoneRx = oneshot::Receiver<(Result<TurnOutcome, Error>, Option<Started>)>;

/// `POST https://object/turn`, step by step: [`admit`] (who may reach the conversation,
/// the rate limits), the turn's place in line, [`prepare`] (the run, or an acceptance
/// answered at once), the poster's stream ([`poster`]), the run spawned apart from the
/// response ([`Drive`]), and [`respond`].
pub(super) async fn turn(
    inner: Rc<Inner>,
    names: Names,
    mut job: ObjectTurn,
) -> Result<Response, ApiError> {
    let env = inner.env.clone();
    if job.site.id != names.site_id || job.conversation_id != names.conversation_id {
        return Err(ApiError::NotFound);
    }
    let (assistant, services) = turn_context(&env, &job.site)?;
    let mut assistant = assistant.with_debug_scripts(&env);
    let openai = job.openai.take().filter(|_| job.format == Format::OpenAi);
    if let Some(openai) = &openai {
        // The template's own fields of the request (`guarded`'s models).
        assistant.openai_request(&job.site, &openai.raw)?;
    }
    let admission = admit(&env, &job, &services).await?;
    // A regenerate replaces the last answer: while a turn runs there is none to replace
    // yet (409 `turn_in_progress`, as before); a message waits for its turn.
    let slot = match job.kind {
        TurnKind::Regenerate { .. } => inner
            .try_acquire()
            .ok_or(ApiError::Core(Error::TurnInProgress))?,
        TurnKind::Message { .. } => inner.acquire().await?,
    };
    // Deleted while it waited in line.
    if inner.deleted.get() {
        return Err(ApiError::NotFound);
    }
    let (format, conversation_id) = (job.format, job.conversation_id.clone());
    let run = match prepare(
        &inner,
        &names,
        job.kind,
        &job.site,
        &conversation_id,
        format,
        admission,
    )
    .await
    {
        Prepared::Run(run) => run,
        Prepared::Accept(input) => {
            let publish = |event| inner.publish(event);
            let drafted = job.site.drafted;
            let accepted = accept(&env, &publish, &services, &assistant, &input, drafted).await;
            drop(slot);
            return accepted;
        }
    };
    let collected = Rc::new(RefCell::new(Vec::new()));
    let streamed_openai = openai.as_ref().filter(|o| o.stream);
    let (sink, body) = poster(
        format,
        streamed_openai,
        &job.request_id,
        &conversation_id,
        &collected,
    )?;
    let (started_tx, started_rx) = oneshot::channel();
    let (done_tx, done_rx) = oneshot::channel();
    let drive = Drive {
        inner: inner.clone(),
        names,
        site: job.site,
        services,
        assistant,
        run,
        poster: sink,
        started_tx,
        done_tx,
        request_id: job.request_id,
    };
    // A reset (the debug route) stops the turn where it is: the future is dropped.
    let (task, handle) = futures_util::future::abortable(drive.run(slot));
    *inner.running.borrow_mut() = Some(handle);
    inner.state.wait_until(async move {
        let _ = task.await;
    });
    let answer = Answering {
        format,
        openai,
        conversation_id,
        collected,
    };
    respond(answer, body, started_rx, done_rx).await
}

/// Only the identity the conversation was created with reaches it; checked before the
/// post waits or anything is stored. A message of a conversation this object remembers
/// is checked from memory and its rate limits are answered as the turn's [`Admission`],
/// counted while the turn reads; otherwise both are checked first, at once (`None`).
async fn admit(
    env: &worker::Env,
    job: &ObjectTurn,
    services: &crate::bindings::services::Services,
) -> Result<Option<Admission>, ApiError> {
    let site = &job.site;
    let scope = Scope::new(&site.id, &job.conversation_id);
    let limits = (!job.limits.is_empty()).then(|| Admission::from_limits(env, &job.limits));
    let remembered = match (&job.kind, &job.visitor) {
        (TurnKind::Message { .. }, Visitor::Site) => true,
        (TurnKind::Message { .. }, visitor) => match remembered::conversation(scope) {
            Some(conversation) if !visitor.may_access(&conversation) => {
                return Err(ApiError::NotFound);
            }
            Some(_) => true,
            None => false,
        },
        (TurnKind::Regenerate { .. }, _) => false,
    };
    if remembered && job.format != Format::Accept {
        return Ok(limits);
    }
    let reached = async {
        match (&job.kind, &job.visitor) {
            (TurnKind::Message { .. }, Visitor::Site) => Ok(()),
            (_, visitor) => reachable(services, &site.id, &job.conversation_id, visitor).await,
        }
    };
    let admitted = async {
        match &limits {
            Some(limits) => limits.check().await,
            None => Ok(()),
        }
    };
    let (admitted, reached) = futures_util::future::join(admitted, reached).await;
    reached?;
    admitted?;
    Ok(None)
}

/// What a turn in line goes on to.
enum Prepared {
    /// The engine's run.
    Run(TurnRun),
    /// `Prefer: respond-async`: the message stored and queued, answered at once.
    Accept(TurnInput),
}

/// The turn's run; or, for `Prefer: respond-async`, its acceptance — unless handoff
/// answers the message itself (a request, a held conversation): that is answered at once,
/// as JSON, never queued for the model.
async fn prepare(
    inner: &Inner,
    names: &Names,
    kind: TurnKind,
    site: &crate::site::Site,
    conversation_id: &str,
    format: Format,
    admission: Option<Admission>,
) -> Prepared {
    match kind {
        TurnKind::Message {
            text,
            idempotency_key,
        } => {
            let input = TurnInput {
                site_id: site.id.clone(),
                conversation_id: conversation_id.to_string(),
                text,
                idempotency_key,
            };
            if format == Format::Accept
                && !handoff::intercepts(&inner.ctx(names), site, &input).await
            {
                return Prepared::Accept(input);
            }
            Prepared::Run(match admission {
                Some(limits) => TurnRun::Admitted(input, limits),
                None => TurnRun::Stored(input),
            })
        }
        TurnKind::Regenerate { expected } => Prepared::Run(TurnRun::Regenerate(RegenerateInput {
            site_id: site.id.clone(),
            conversation_id: conversation_id.to_string(),
            expected,
        })),
    }
}

/// The poster's side of the turn: a stream in its format (and its body), or the events
/// collected for a JSON answer.
fn poster(
    format: Format,
    streamed_openai: Option<&OpenAiAnswer>,
    request_id: &str,
    conversation_id: &str,
    collected: &Rc<RefCell<Vec<TurnEvent>>>,
) -> Result<(Sink, Option<ReadableStream>), ApiError> {
    let stream = || -> Result<_, ApiError> {
        let (writer, body) = BodyWriter::new()?;
        Ok((Coalescing::new(writer), Some(body)))
    };
    Ok(match (format, streamed_openai) {
        (Format::Native, _) => {
            let (writer, body) = stream()?;
            let request_id = Some(request_id.to_string());
            (Sink::Native { writer, request_id }, body)
        }
        (Format::AiSdk, _) => {
            let (writer, body) = stream()?;
            let encoder = AiSdkEncoder::new();
            (Sink::AiSdk { writer, encoder }, body)
        }
        (Format::OpenAi, Some(openai)) => {
            let (writer, body) = stream()?;
            let encoder = openai.encoder(conversation_id);
            (Sink::OpenAi { writer, encoder }, body)
        }
        (Format::Json | Format::Accept | Format::OpenAi, _) => {
            (Sink::Collect(collected.clone()), None)
        }
    })
}

/// A turn's run, apart from the response that posted it.
struct Drive {
    inner: Rc<Inner>,
    names: Names,
    site: crate::site::Site,
    services: crate::bindings::services::Services,
    assistant: crate::templates::SiteAssistant,
    run: TurnRun,
    /// The poster's stream, which follows the turn from its start.
    poster: Sink,
    started_tx: oneshot::Sender<Result<u64, ApiError>>,
    done_tx: oneshot::Sender<(Result<TurnOutcome, Error>, Option<Started>)>,
    request_id: String,
}

impl Drive {
    /// Runs the turn while holding its place in line (`slot`): through handoff's gate, the
    /// engine (stoppable for a message), then the turn's end and settlement.
    async fn run(self, slot: super::turn_line::Slot) {
        let _slot = slot;
        let Self {
            inner,
            names,
            site,
            services,
            assistant,
            run,
            poster,
            started_tx,
            done_tx,
            request_id,
        } = self;
        let refusal = run.refusal();
        let (site_id, conversation_id) =
            (run.site_id().to_string(), run.conversation_id().to_string());
        let visitor_text = match &run {
            TurnRun::Stored(input) | TurnRun::Admitted(input, _) => Some(input.text.clone()),
            _ => None,
        };
        let mut sink = ObjectSink::new(&inner, Some(poster), Some(started_tx), visitor_text);
        let gate = match &run {
            TurnRun::Stored(input) | TurnRun::Admitted(input, _) => {
                handoff::gate(&inner.ctx(&names), &site, input).await
            }
            TurnRun::Regenerate(_) => handoff::gate_regenerate(&inner.ctx(&names)).await,
            _ => Gate::Run,
        };
        let stoppable = !matches!(run, TurnRun::Regenerate(_));
        let result = match gate {
            // A message turn can be stopped (`POST …/stop`, see `stop`).
            Gate::Run if stoppable => {
                let step = run.run(&services, &assistant, &mut sink);
                match super::stop::stoppable(&inner, step).await {
                    Some(result) => result,
                    None => {
                        let started = sink.started.clone();
                        super::stop::finish(&inner, &services, &site_id, started, &mut sink).await
                    }
                }
            }
            Gate::Run => run.run(&services, &assistant, &mut sink).await,
            #[allow(unreachable_patterns)]
            gate => handoff::answer(&inner.ctx(&names), gate, &mut sink).await,
        };
        let began = sink.started.is_some();
        if let Some(tx) = sink.started_tx.take() {
            // Never started: nothing was stored, and the error is the HTTP answer.
            let refused = refusal.and_then(|r| r.borrow_mut().take());
            let early = match &result {
                Err(_) if refused.is_some() => refused.unwrap_or(ApiError::RateLimited),
                Err(error) => ApiError::from(error.clone()),
                Ok(_) => ApiError::Internal(worker::Error::RustError("turn never started".into())),
            };
            let _ = tx.send(Err(early));
        } else {
            sink.end();
        }
        let started = sink.started.take();
        let ended = Ended {
            site_id: &site_id,
            conversation_id: &conversation_id,
            began,
            request_id: &request_id,
        };
        ended.settle(&services, &assistant, &result).await;
        let _ = done_tx.send((result, started));
    }
}

/// How the poster is answered.
struct Answering {
    format: Format,
    openai: Option<OpenAiAnswer>,
    conversation_id: String,
    collected: Rc<RefCell<Vec<TurnEvent>>>,
}

/// The poster's answer: JSON once the whole turn ran (its answer, or the error that kept
/// it from starting); a stream as soon as it started, with its first event's id.
async fn respond(
    answer: Answering,
    body: Option<ReadableStream>,
    started_rx: StartedRx,
    done_rx: DoneRx,
) -> Result<Response, ApiError> {
    let Some(body) = body else {
        let (result, started) = done_rx
            .await
            .map_err(|_| ApiError::Internal(worker::Error::RustError("turn lost".into())))?;
        if let Ok(Err(early)) = started_rx.await {
            return Err(early);
        }
        if let Some(openai) = &answer.openai {
            return openai.completion(result, &answer.conversation_id);
        }
        let events = answer.collected.borrow_mut().drain(..).collect();
        return turn_json::answer(result, started, events);
    };
    let first = started_rx
        .await
        .map_err(|_| ApiError::Internal(worker::Error::RustError("turn ended early".into())))??;
    let mut response = super::watch::sse(body)?;
    let headers = response.headers_mut();
    headers.set(FIRST_EVENT_HEADER, &first.to_string())?;
    if answer.format == Format::AiSdk {
        headers.set(HEADER_NAME, HEADER_VALUE)?;
    }
    Ok(response)
}

/// The engine's sink inside the object: nothing is logged until the turn has started (a
/// turn that fails before that is answered with an HTTP error); then every event goes to
/// the log, which numbers it and sends it to the poster and everyone attached.
struct ObjectSink<'a> {
    inner: &'a Inner,
    /// The poster's stream, until the turn starts and it follows the turn.
    poster: Option<Sink>,
    started_tx: Option<oneshot::Sender<Result<u64, ApiError>>>,
    started: Option<Started>,
    /// The visitor's message, for the live watchers (a message turn's).
    visitor_text: Option<String>,
    /// Whether the turn ended `completed` (its reply stored).
    completed: bool,
}

impl<'a> ObjectSink<'a> {
    /// A sink for a turn of `inner`'s: `poster` follows it from its start,
    /// `started_tx` learns its first event's id, `visitor_text` is published first.
    fn new(
        inner: &'a Inner,
        poster: Option<Sink>,
        started_tx: Option<oneshot::Sender<Result<u64, ApiError>>>,
        visitor_text: Option<String>,
    ) -> Self {
        Self {
            inner,
            poster,
            started_tx,
            started: None,
            visitor_text,
            completed: false,
        }
    }

    /// After the engine: a turn that started ends with exactly one terminal event (the
    /// engine always ends a turn it started; should it ever not, the log ends it), and
    /// its record is saved — unless it completed: its stored reply says it ended (an
    /// instance that finds the record still `running` looks for it, `Inner::load`), so a
    /// completed turn writes its object's storage three times, not four.
    fn end(&mut self) {
        if self.started.is_none() {
            return;
        }
        let open = self
            .inner
            .log
            .borrow()
            .turn
            .as_ref()
            .is_some_and(|t| !t.ended);
        if open {
            self.emit(TurnEvent::Failed {
                code: CLOSED_CODE,
                message: CLOSED_MESSAGE,
            });
        }
        if !self.completed {
            self.inner.save_turn();
        }
    }
}

impl TurnSink for ObjectSink<'_> {
    fn started(&mut self, started: &Started) {
        if let Some(text) = self.visitor_text.take() {
            // The other clients of the conversation see the visitor's message first.
            let message = serde_json::json!({
                "id": started.user_message_id, "role": "user", "kind": "text",
                "content": text, "created_at": crate::runtime::now_ms(),
            });
            // Persisted with the turn's record, just below.
            let _ = self
                .inner
                .log
                .borrow_mut()
                .push_live(LiveEvent::Message(message));
        }
        let followers = self.poster.take().into_iter().collect();
        let record = self.inner.log.borrow_mut().begin_turn(
            &started.user_message_id,
            &started.reply_id,
            followers,
        );
        self.inner.save_turn();
        self.started = Some(started.clone());
        if let Some(tx) = self.started_tx.take() {
            let _ = tx.send(Ok(record.first_event_id));
        }
    }

    fn emit(&mut self, event: TurnEvent) {
        if self.started.is_none() {
            return;
        }
        self.completed = matches!(event, TurnEvent::Completed { .. });
        let persist = self
            .inner
            .log
            .borrow_mut()
            .push_turn(event, crate::runtime::now_ms());
        self.inner.persist(persist);
    }
}

/// `POST https://object/job`: a background turn (the turn queue's job), answered in the
/// conversation's line, its events into the log (numbered, kept, sent to the watchers).
/// Always 200 with a [`JobOutcome`](super::background::JobOutcome) (its error for the consumer to log and retry).
///
/// The handoff's gate holds for it as for a live turn: a job that comes to run while a
/// person holds the conversation (queued before the take-over) leaves the stored message
/// to the person — nothing to do, no model call.
pub(super) async fn job(
    inner: Rc<Inner>,
    names: Names,
    job: super::background::ObjectJob,
) -> Result<Response, ApiError> {
    let env = inner.env.clone();
    let (assistant, services) = turn_context(&env, &job.site)?;
    let slot = inner.acquire_unbounded().await?;
    if inner.deleted.get() || handoff::held(&inner.ctx(&names)).await {
        drop(slot);
        return Ok(Response::from_json(
            &super::background::JobOutcome::default(),
        )?);
    }
    let mut sink = ObjectSink::new(&inner, None, None, None);
    let result = concierge_core::engine::answer_job_streamed(
        &services, &assistant, &job.job, job.last, &mut sink,
    )
    .await;
    sink.end();
    // The reply's embedding; the conversation read again for the next turn.
    let scope = Scope::new(&job.job.site_id, &job.job.conversation_id);
    let window = concierge_core::engine::Assistant::config(&assistant).history_window;
    futures_util::future::join(
        services.queue_flush(),
        services.store.refresh(scope, window),
    )
    .await;
    drop(slot);
    let outcome = match result {
        Ok(outcome) => super::background::JobOutcome {
            reply_id: outcome.map(|o| o.reply.id),
            error: None,
            transient: false,
        },
        Err(error) => super::background::JobOutcome {
            reply_id: None,
            transient: error.is_transient(),
            error: Some(ApiError::Core(error).chain()),
        },
    };
    Ok(Response::from_json(&outcome)?)
}
