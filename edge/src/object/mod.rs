//! Durable conversations: one Durable Object per conversation, [`ConversationObject`]
//! (binding `CONVERSATIONS`, named `"{site_id}/{conversation_id}"`, SQLite-backed). D1
//! stays the system of record; the object is the conversation's home while it is in use:
//!
//! - **one turn at a time**, first come first served: a post that arrives while a turn
//!   runs waits for it (its response starts when its own turn starts); more than
//!   [`MAX_WAITING`] waiting → 429 `conversation_busy` with `retry-after`;
//! - **a turn outlives its client**: it runs in the object, not in the response; the
//!   poster's stream, a resumer's and the live watchers are subscribers of its events
//!   ([`log`]), each numbered conversation-wide (`id: <n>` on the native stream);
//! - **resumable**: the current (or last) turn's events are kept in memory, so `GET
//!   …/stream` with `Last-Event-ID` sends exactly the rest, and `GET /api/chat/{id}/stream`
//!   replays a running turn from its start;
//! - **live**: `GET …/events` follows every event of the conversation (`: ping` every
//!   [`PING_SECONDS`] s);
//! - **reset-safe**: a small turn record is persisted when a turn starts and ends (never
//!   per chunk). A new instance that finds a turn still `running` knows it died: the
//!   visitor's message is marked `answer_failed` in D1 and one terminal `failed`
//!   (`turn_interrupted`) is recorded and served to anyone who resumes;
//! - **warm**: turns run in the object's isolate, whose memory of the conversation (the
//!   store's `remembered`) each turn refreshes, so the next one asks the model without
//!   reading D1 first.
//!
//! The Worker (router) authenticates, validates and forwards ([`client`]); requests reach
//! the object only through the binding, so it trusts what they say.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures_channel::oneshot;
use wasm_bindgen::JsValue;
use worker::{DurableObject, Env, Request, Response, ResponseBody, State, durable_object};

use crate::bindings::js_stream::{BodyWriter, Coalescing};
use crate::error::ApiError;

mod accept;
pub(crate) mod client;
pub(crate) mod handoff;
pub(crate) mod log;
mod run;

pub(crate) use log::LiveEvent;
use log::{Log, Persist, Sink, TurnRecord, Watcher};

/// Posts waiting for the running turn, at most; one more is refused (429).
pub(crate) const MAX_WAITING: usize = 4;
/// Seconds between `: ping` comments on the live stream.
pub(crate) const PING_SECONDS: u64 = 20;
/// How long after its end a turn is still replayed to the AI SDK's resume.
const AI_SDK_RESUME_MS: u64 = 60_000;

/// The storage key of the object's persisted state ([`Saved`], in the KV API of its SQLite
/// storage): one read when an instance starts, one write when a turn starts and ends.
const KEY_STATE: &str = "state";

/// What the object persists.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Saved {
    #[serde(default)]
    names: Option<Names>,
    /// Event ids below this may have been used.
    #[serde(default)]
    reserved: u64,
    /// The current (or last) turn.
    #[serde(default)]
    turn: Option<TurnRecord>,
}

/// Which conversation an object is.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Names {
    pub site_id: String,
    pub conversation_id: String,
}

/// The conversation's Durable Object (see the module's documentation).
#[durable_object(alarm)]
pub struct ConversationObject {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for ConversationObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationObject").finish_non_exhaustive()
    }
}

/// The object's state, shared with the turns it runs.
pub(crate) struct Inner {
    pub state: State,
    pub env: Env,
    pub names: RefCell<Option<Names>>,
    pub log: RefCell<Log>,
    /// Whether a turn holds the conversation.
    busy: Cell<bool>,
    /// Posts waiting for it, first come first served.
    waiting: RefCell<VecDeque<oneshot::Sender<()>>>,
    /// Whether the names are in storage (for the alarm, which comes with no request).
    names_saved: Cell<bool>,
    /// Stops the running turn (a simulated reset).
    running: RefCell<Option<futures_util::future::AbortHandle>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

/// What the object gives its hooks ([`handoff`]).
#[allow(dead_code)] // the handoff hooks' (owner B)
pub(crate) struct ObjectCtx<'a> {
    pub env: &'a Env,
    /// The object's state: storage, alarms.
    pub state: &'a State,
    pub site_id: &'a str,
    pub conversation_id: &'a str,
    inner: &'a Inner,
}

impl std::fmt::Debug for ObjectCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectCtx")
            .field("site_id", &self.site_id)
            .field("conversation_id", &self.conversation_id)
            .finish_non_exhaustive()
    }
}

#[allow(dead_code)] // the handoff hooks' (owner B)
impl ObjectCtx<'_> {
    /// Sends a live event (already stored) to the attached clients, numbered and kept.
    pub(crate) fn publish(&self, event: LiveEvent) {
        self.inner.publish(event);
    }

    /// Now, in Unix milliseconds.
    pub(crate) fn now_ms(&self) -> u64 {
        crate::runtime::now_ms()
    }
}

impl DurableObject for ConversationObject {
    fn new(state: State, env: Env) -> Self {
        let inner = Rc::new(Inner {
            state,
            env,
            names: RefCell::new(None),
            log: RefCell::new(Log::default()),
            busy: Cell::new(false),
            waiting: RefCell::new(VecDeque::new()),
            running: RefCell::new(None),
            names_saved: Cell::new(false),
        });
        // Nothing is delivered until the object knows where it stands (its ids, a turn
        // that died with the last instance).
        let loading = inner.clone();
        let _load = inner.state.block_concurrency_while(async move {
            loading.load().await;
            Ok(())
        });
        Self { inner }
    }

    async fn fetch(&self, req: Request) -> worker::Result<Response> {
        match self.inner.clone().serve(req).await {
            Ok(response) => Ok(response),
            Err(error) => error.into_response(),
        }
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let names = self.inner.names.borrow().clone();
        if let Some(names) = names {
            handoff::alarm(&self.inner.ctx(&names)).await;
        }
        Response::empty()
    }
}

impl Inner {
    fn ctx<'a>(&'a self, names: &'a Names) -> ObjectCtx<'a> {
        ObjectCtx {
            env: &self.env,
            state: &self.state,
            site_id: &names.site_id,
            conversation_id: &names.conversation_id,
            inner: self,
        }
    }

    /// Reads what the last instance left: its names, its reserved ids, and its last turn —
    /// still `running`, it died with that instance: recorded as failed.
    async fn load(self: Rc<Self>) {
        let saved: Saved = self
            .state
            .storage()
            .get::<String>(KEY_STATE)
            .await
            .ok()
            .flatten()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let Saved {
            names,
            reserved,
            turn: record,
        } = saved;
        self.names_saved.set(names.is_some());
        {
            let mut log = self.log.borrow_mut();
            log.next_id = reserved;
            log.reserved = reserved;
        }
        *self.names.borrow_mut() = names.clone();
        if let (Some(names), Some(record)) = (names, record)
            && record.state == "running"
        {
            self.recover(&names, record).await;
        }
    }

    /// A turn that died with the last instance: its visitor's message is marked in D1,
    /// and one terminal `failed` is recorded for whoever resumes.
    async fn recover(&self, names: &Names, record: TurnRecord) {
        use concierge_core::boundary::ConversationStore;
        use concierge_core::conversation::Scope;
        let scope = Scope::new(&names.site_id, &names.conversation_id);
        let marked = match self.env.d1("DB") {
            Ok(db) => crate::bindings::d1_store::D1Store::new(db)
                .mark_answer_failed(
                    scope,
                    &record.user_message_id,
                    &record.message_id,
                    log::INTERRUPTED_CODE,
                )
                .await
                .is_ok(),
            Err(_) => false,
        };
        crate::bindings::d1_store::remembered::forget(scope);
        let line = serde_json::json!({
            "level": "warn", "msg": "turn interrupted", "site": names.site_id,
            "conversation_id": names.conversation_id, "message_id": record.message_id,
            "marked": marked,
        });
        worker::console_warn!("{line}");
        let persist = {
            let mut log = self.log.borrow_mut();
            let mut record =
                log.begin_turn(&record.user_message_id, &record.message_id, Vec::new());
            record.state = "done".into();
            let persist = log.push_turn(log::interrupted(), crate::runtime::now_ms());
            if let Some(turn) = log.turn.as_mut() {
                turn.record = record;
            }
            persist
        };
        self.persist(persist);
        self.save_turn();
    }

    /// Writes what a log change asks for (a new block of ids).
    fn persist(&self, persist: Persist) {
        if persist.reserved.is_some() {
            self.save();
        }
    }

    /// Persists the object's state: its names, its reserved ids, the current turn's record
    /// (not waited on by anyone: `allowUnconfirmed`).
    fn save(&self) {
        let saved = {
            let log = self.log.borrow();
            Saved {
                names: self.names.borrow().clone(),
                reserved: log.reserved,
                turn: log.turn.as_ref().map(|t| t.record.clone()),
            }
        };
        self.names_saved.set(saved.names.is_some());
        if let Ok(text) = serde_json::to_string(&saved) {
            self.put(KEY_STATE, &text);
        }
    }

    /// Persists the current turn's record (with the rest of the state).
    fn save_turn(&self) {
        self.save();
    }

    /// `storage.put(key, value, {allowUnconfirmed: true})`: outgoing messages (the turn's
    /// chunks, its model call) do not wait for the write to be confirmed.
    fn put(&self, key: &str, value: &str) {
        let storage = self.state.storage();
        let raw: &JsValue = storage.as_raw().as_ref();
        let put = js_sys::Reflect::get(raw, &"put".into())
            .ok()
            .and_then(|f| wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(f).ok());
        if let Some(put) = put {
            let options = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&options, &"allowUnconfirmed".into(), &true.into());
            let _ = put.call3(raw, &key.into(), &value.into(), &options);
        }
    }

    /// The names of the object, from the request's headers (kept, and persisted the first
    /// time, for alarms and recovery).
    fn learn_names(&self, req: &Request) -> Result<Names, ApiError> {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .ok()
                .flatten()
                .filter(|v| !v.is_empty())
        };
        let (Some(site_id), Some(conversation_id)) = (
            header(client::SITE_HEADER),
            header(client::CONVERSATION_HEADER),
        ) else {
            return Err(ApiError::bad_request("Which conversation?"));
        };
        let known = self.names.borrow().clone();
        if let Some(known) = known {
            if known.site_id != site_id || known.conversation_id != conversation_id {
                return Err(ApiError::NotFound);
            }
            return Ok(known);
        }
        let names = Names {
            site_id,
            conversation_id,
        };
        // Persisted with the first turn (or by `ensure_saved`, for the alarm's sake).
        *self.names.borrow_mut() = Some(names.clone());
        Ok(names)
    }

    /// One internal request.
    async fn serve(self: Rc<Self>, mut req: Request) -> Result<Response, ApiError> {
        let names = self.learn_names(&req)?;
        let url = req.url()?;
        let query = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        let after = query("after").and_then(|a| a.parse::<u64>().ok());
        match (req.method(), url.path()) {
            (worker::Method::Post, "/turn") => {
                let job: client::ObjectTurn = req.json().await?;
                run::turn(self, names, job).await
            }
            (worker::Method::Post, "/job") => {
                let job: client::ObjectJob = req.json().await?;
                run::job(self, job).await
            }
            // Started (and its storage read) by now; the conversation read into this
            // isolate's memory (the store's `remembered`) for its first turn.
            (worker::Method::Post, "/warm") => {
                use concierge_core::boundary::ConversationStore;
                let window = query("window").and_then(|w| w.parse::<usize>().ok());
                if let Some(window) = window {
                    let scope = concierge_core::conversation::Scope::new(
                        &names.site_id,
                        &names.conversation_id,
                    );
                    let store = crate::bindings::d1_store::D1Store::new(self.env.d1("DB")?);
                    let _ = store.read_turn(scope, window).await;
                }
                Ok(Response::empty()?.with_status(204))
            }
            (worker::Method::Post, "/publish") => {
                let event: LiveEvent = req.json().await?;
                self.publish(event);
                Ok(Response::empty()?.with_status(204))
            }
            (worker::Method::Post, "/handoff") => {
                let op: handoff::HandoffOp = req.json().await?;
                // A handoff may set an alarm: the object must know its names then.
                if !self.names_saved.get() {
                    self.save();
                }
                handoff::handle(&self.ctx(&names), op).await
            }
            (worker::Method::Get, "/stream") => {
                if query("format").as_deref() == Some("ai_sdk") {
                    self.ai_sdk_resume()
                } else {
                    self.resume(after)
                }
            }
            (worker::Method::Get, "/terminal") => {
                self.terminal(query("format").as_deref() == Some("ai_sdk"))
            }
            (worker::Method::Get, "/events") => self.events(after),
            (worker::Method::Post, "/abort") => {
                self.reset().await;
                Ok(Response::empty()?.with_status(204))
            }
            _ => Err(ApiError::NotFound),
        }
    }

    /// Numbers, keeps and sends a live event.
    pub(crate) fn publish(&self, event: LiveEvent) {
        let persist = self.log.borrow_mut().push_live(event);
        self.persist(persist);
    }

    /// `GET https://object/stream`: the current (or last) turn's events after `after`,
    /// then the rest as they come, then the end; 204 when there is nothing after `after`.
    fn resume(&self, after: Option<u64>) -> Result<Response, ApiError> {
        let mut log = self.log.borrow_mut();
        let events = log.turn_events();
        let pending: Vec<&(u64, concierge_core::turn::TurnEvent)> = match after {
            // No id: the whole turn.
            None => events.iter().collect(),
            Some(after) => events.iter().filter(|(id, _)| *id > after).collect(),
        };
        let ended = log.turn.as_ref().is_none_or(|t| t.ended);
        if pending.is_empty() && ended {
            return Ok(Response::empty()?.with_status(204));
        }
        let (writer, body) = BodyWriter::new()?;
        let writer = Coalescing::new(writer);
        let mut out = String::new();
        for (id, event) in &pending {
            log::native_frame(*id, &log::Entry::Turn(event.clone()), None, &mut out);
        }
        writer.write_now(out.as_bytes());
        if ended {
            writer.close();
        } else if let Some(turn) = log.turn.as_mut() {
            turn.followers.push(Sink::Native {
                writer,
                request_id: None,
            });
        }
        sse(body)
    }

    /// `GET https://object/stream?format=ai_sdk`: a turn in progress (or ended less than a
    /// minute ago) replayed from its start as a UI message stream; else 204.
    fn ai_sdk_resume(&self) -> Result<Response, ApiError> {
        let now = crate::runtime::now_ms();
        let mut log = self.log.borrow_mut();
        let recent = log.turn.as_ref().is_some_and(|t| {
            !t.ended
                || t.ended_at_ms
                    .is_some_and(|at| now.saturating_sub(at) < AI_SDK_RESUME_MS)
        });
        if !recent {
            return Ok(Response::empty()?.with_status(204));
        }
        let events = log.turn_events();
        let (writer, body) = BodyWriter::new()?;
        let writer = Coalescing::new(writer);
        let mut encoder = concierge_core::stream::ai_sdk::AiSdkEncoder::new();
        let mut out = String::new();
        for (_, event) in &events {
            let _ = concierge_core::stream::TurnEncoder::encode(&mut encoder, event, &mut out);
        }
        writer.write_now(out.as_bytes());
        let ended = log.turn.as_ref().is_none_or(|t| t.ended);
        if ended {
            writer.close();
        } else if let Some(turn) = log.turn.as_mut() {
            turn.followers.push(Sink::AiSdk { writer, encoder });
        }
        let mut response = sse(body)?;
        response.headers_mut().set(
            concierge_core::stream::ai_sdk::HEADER_NAME,
            concierge_core::stream::ai_sdk::HEADER_VALUE,
        )?;
        Ok(response)
    }

    /// `GET https://object/terminal`: the terminal event of the last turn, encoded (after
    /// the poster's stream broke: the turn was recorded as failed by this new instance);
    /// the interrupted failure when it has none.
    fn terminal(&self, ai_sdk: bool) -> Result<Response, ApiError> {
        let log = self.log.borrow();
        let ended = log.turn.as_ref().is_some_and(|t| t.ended);
        let found = log
            .entries
            .iter()
            .rev()
            .find(|(_, e)| matches!(e, log::Entry::Turn(t) if t.is_terminal()))
            .filter(|_| ended && !ai_sdk);
        let text = match found {
            Some((id, entry)) => {
                let mut out = String::new();
                log::native_frame(*id, entry, None, &mut out);
                out
            }
            None => log::interrupted_frame(None, ai_sdk),
        };
        Ok(Response::ok(text)?)
    }

    /// `GET https://object/events`: every event from now on (after `after`, what is kept
    /// of the missed ones first), kept open, with a ping every [`PING_SECONDS`] s.
    fn events(&self, after: Option<u64>) -> Result<Response, ApiError> {
        let (writer, body) = BodyWriter::new()?;
        let writer = Coalescing::new(writer);
        let mut log = self.log.borrow_mut();
        // Opens the stream at once (clients and proxies see it start).
        let mut out = String::from(": connected\n\n");
        if let Some(after) = after {
            out.push_str(&log.frames_after(after));
        }
        writer.write_now(out.as_bytes());
        let watcher = Rc::new(Watcher { writer });
        log.watchers.push(watcher.clone());
        wasm_bindgen_futures::spawn_local(async move {
            loop {
                worker::Delay::from(std::time::Duration::from_secs(PING_SECONDS)).await;
                if watcher.writer.is_gone() {
                    break;
                }
                watcher.writer.write_now(b": ping\n\n");
            }
        });
        sse(body)
    }

    /// `POST https://object/abort` (the debug route): the object loses everything it held
    /// in memory, as when the platform resets it — the running turn stops where it is, the
    /// streams following it and the live streams break — and starts again from its storage
    /// (the start-up a new instance runs: a turn still `running` is recorded as failed).
    ///
    /// Not `ctx.abort()`: under `wrangler dev` the object shares its isolate, and so the Rust
    /// futures executor, with the Worker; an abort cancels the executor's pending microtask
    /// and every Rust future of the isolate stalls (seen: every later request "hung").
    async fn reset(self: Rc<Self>) {
        if let Some(running) = self.running.borrow_mut().take() {
            running.abort();
        }
        let (followers, watchers) = {
            let mut log = self.log.borrow_mut();
            let followers: Vec<Sink> = log
                .turn
                .as_mut()
                .map(|t| t.followers.drain(..).collect())
                .unwrap_or_default();
            let watchers = std::mem::take(&mut log.watchers);
            *log = Log::default();
            (followers, watchers)
        };
        // Started again first, so whoever the break sends back finds the failure recorded.
        self.clone().load().await;
        for follower in &followers {
            follower.abort();
        }
        for watcher in &watchers {
            watcher.writer.abort(log::RESET);
        }
    }

    /// Waits for the conversation: at once when no turn runs, else after the turns ahead;
    /// 429 when [`MAX_WAITING`] posts already wait.
    async fn acquire(self: &Rc<Self>) -> Result<Slot, ApiError> {
        if !self.busy.get() {
            self.busy.set(true);
            return Ok(Slot(self.clone()));
        }
        let rx = {
            let mut waiting = self.waiting.borrow_mut();
            waiting.retain(|tx| !tx.is_canceled());
            if waiting.len() >= MAX_WAITING {
                return Err(ApiError::ConversationBusy);
            }
            let (tx, rx) = oneshot::channel();
            waiting.push_back(tx);
            rx
        };
        rx.await
            .map_err(|_| ApiError::Internal(worker::Error::RustError("slot lost".into())))?;
        Ok(Slot(self.clone()))
    }

    /// The conversation after every turn ahead, however many wait (background turns: the
    /// queue's consumer waits rather than being refused).
    async fn acquire_unbounded(self: &Rc<Self>) -> Result<Slot, ApiError> {
        if !self.busy.get() {
            self.busy.set(true);
            return Ok(Slot(self.clone()));
        }
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().push_back(tx);
        rx.await
            .map_err(|_| ApiError::Internal(worker::Error::RustError("slot lost".into())))?;
        Ok(Slot(self.clone()))
    }

    /// The conversation at once when no turn runs or waits.
    fn try_acquire(self: &Rc<Self>) -> Option<Slot> {
        if self.busy.get() {
            return None;
        }
        self.busy.set(true);
        Some(Slot(self.clone()))
    }

    /// The turn holding the conversation ended: the next post waiting takes it.
    fn release(&self) {
        loop {
            let next = self.waiting.borrow_mut().pop_front();
            match next {
                Some(tx) => {
                    if tx.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    self.busy.set(false);
                    return;
                }
            }
        }
    }
}

/// The conversation, held by one turn; released when dropped.
pub(crate) struct Slot(Rc<Inner>);

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Slot")
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A `text/event-stream` response of `body`.
fn sse(body: worker::web_sys::ReadableStream) -> Result<Response, ApiError> {
    let mut response = Response::from_body(ResponseBody::Stream(body))?;
    let headers = response.headers_mut();
    headers.set("content-type", "text/event-stream; charset=utf-8")?;
    headers.set("cache-control", "no-cache, no-transform")?;
    headers.set("x-accel-buffering", "no")?;
    Ok(response)
}
