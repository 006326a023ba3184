//! Durable conversations: one Durable Object per conversation, [`ConversationObject`]
//! (binding `CONVERSATIONS`, named `"{site_id}/{conversation_id}"`, SQLite-backed). Its
//! SQLite is the conversation's record (`bindings::record`: its rows, in the schema the
//! shared D1 had, sent on to the site's object for the console); the object is the
//! conversation's home:
//!
//! - **one turn at a time**, first come first served ([`turn_line`]): a post that arrives
//!   while a turn runs waits for it (its response starts when its own turn starts); more
//!   than [`MAX_WAITING`](turn_line::MAX_WAITING) waiting → 429 `conversation_busy` with
//!   `retry-after`;
//! - **a turn outlives its client**: it runs in the object ([`run`]), not in the response;
//!   the poster's stream, a resumer's and the live watchers are subscribers of its events
//!   ([`log`]), each numbered conversation-wide (`id: <n>` on the native stream);
//! - **resumable** ([`watch`]): the current (or last) turn's events are kept in memory, so
//!   `GET …/stream` with `Last-Event-ID` sends exactly the rest, and `GET
//!   /api/chat/{id}/stream` replays a running turn from its start;
//! - **live** ([`watch`]): `GET …/events` follows every event of the conversation (`: ping`
//!   every [`PING_SECONDS`](watch::PING_SECONDS) s), the handoff's state first;
//! - **stoppable** ([`stop`]): `POST …/stop` ends the running turn, keeps what was shown
//!   (marked stopped) and lets the next post in line start;
//! - **reset-safe** ([`saved`]): a small turn record is persisted when a turn starts and
//!   ends (never per chunk). A new instance that finds a turn still `running` knows it
//!   died: the visitor's message is marked `answer_failed` in the record and one terminal `failed`
//!   (`turn_interrupted`) is recorded and served to anyone who resumes;
//! - **warm**: turns run in the object's isolate, whose memory of the conversation (the
//!   store's `remembered`) each turn refreshes, so the next one asks the model without
//!   reading its record first.
//!
//! Every turn of a stored conversation runs here, whatever the surface: the native post
//! (SSE, JSON, `Prefer: respond-async`), the AI SDK's `POST /api/chat`, regenerate, `POST
//! /v1/chat/completions` with a `chat_id` ([`openai`]: OpenAI's chunks or completion) and
//! MCP's `send_message` with a `conversation_id` (JSON); a background turn's job, from the
//! turn queue ([`background`]), streams its events into the log like a posted turn.
//!
//! The Worker (router) authenticates, validates and forwards ([`client`]); requests reach
//! the object only through the binding, so it trusts what they say. This file holds the
//! object itself and the routing of its internal requests.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures_channel::oneshot;
use worker::{DurableObject, Env, Request, Response, State, durable_object};

use crate::error::ApiError;

mod accept;
pub(crate) mod background;
pub(crate) mod client;
pub(crate) mod handoff;
mod live;
pub(crate) mod log;
pub(crate) mod openai;
mod run;
mod saved;
pub(crate) mod stop;
pub(crate) mod streams;
mod turn_line;
mod watch;

pub(crate) use log::LiveEvent;
use log::Log;

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
    /// Stops the running message turn's engine step (`POST …/stop`).
    stopper: RefCell<Option<stop::Stopper>>,
    /// The handoff's record as last read or written (see [`handoff`]); `None` until
    /// then. Every change goes through the object, so a turn checks it without a storage
    /// read.
    handoff: RefCell<Option<crate::bindings::d1_handoff::HandoffRecord>>,
    /// The conversation was deleted ([`saved`]'s `forget`): every request is 404
    /// (as an unknown conversation), whatever any isolate still remembers of it.
    deleted: Cell<bool>,
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
        let env = crate::bindings::retry::env(crate::bindings::count::env(env, "object"));
        let state = crate::bindings::count::state(state, &env);
        // The conversation's record, in this object's SQLite (`bindings::record`).
        let raw: wasm_bindgen::JsValue = state._inner().into();
        let storage = js_sys::Reflect::get(&raw, &"storage".into())
            .unwrap_or(wasm_bindgen::JsValue::UNDEFINED);
        let state = State::from(wasm_bindgen::JsCast::unchecked_into::<
            worker::worker_sys::DurableObjectState,
        >(raw));
        let env = crate::bindings::record::with_record(env, &storage);
        let inner = Rc::new(Inner {
            state,
            env,
            names: RefCell::new(None),
            log: RefCell::new(Log::default()),
            busy: Cell::new(false),
            waiting: RefCell::new(VecDeque::new()),
            running: RefCell::new(None),
            stopper: RefCell::new(None),
            names_saved: Cell::new(false),
            handoff: RefCell::new(None),
            deleted: Cell::new(false),
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
            // What the site's object could not take before (see `bindings::record`).
            let scope =
                concierge_core::conversation::Scope::new(&names.site_id, &names.conversation_id);
            if !self.inner.deleted.get()
                && crate::bindings::record::open_for(&self.inner.env, scope, false)
                    .await
                    .is_ok()
                && let Ok(store) = crate::bindings::d1_store::D1Store::new(&self.inner.env)
            {
                store.settled().await;
            }
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
        // Persisted with the first turn (or before a handoff, for the alarm's sake).
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
        let scope =
            concierge_core::conversation::Scope::new(&names.site_id, &names.conversation_id);
        let fresh = req
            .headers()
            .get(crate::bindings::record::FRESH_HEADER)?
            .is_some();
        if url.path() == "/sql" || (url.path() != "/forget" && !self.deleted.get()) {
            // The conversation's record: its tables, and its rows imported from the shared
            // D1 the first time (none for a conversation being created).
            crate::bindings::record::open_for(&self.env, scope, fresh)
                .await
                .map_err(|e| ApiError::store(crate::bindings::d1_store::service_error(e)))?;
        }
        if url.path() == "/sql" {
            // A write from the Worker (a deleted conversation's record is empty: it changes
            // nothing there).
            return self.run_sql(&mut req, scope, fresh).await;
        }
        if self.deleted.get() {
            return match (req.method(), url.path()) {
                (worker::Method::Post, "/forget") => Ok(Response::empty()?.with_status(204)),
                (worker::Method::Get, "/state") => self.debug_state().await,
                // A background turn queued before the delete: nothing to do.
                (worker::Method::Post, "/job") => {
                    Ok(Response::from_json(&background::JobOutcome::default())?)
                }
                _ => Err(ApiError::NotFound),
            };
        }
        match (req.method(), url.path()) {
            (worker::Method::Post, "/turn") => {
                let job: client::ObjectTurn = json_body(&mut req).await?;
                run::turn(self, names, job).await
            }
            (worker::Method::Post, "/job") => {
                let job: background::ObjectJob = json_body(&mut req).await?;
                run::job(self, names, job).await
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
                    let store = crate::bindings::d1_store::D1Store::new(&self.env)?;
                    let _ = store.read_turn(scope, window).await;
                }
                Ok(Response::empty()?.with_status(204))
            }
            (worker::Method::Post, "/publish") => {
                let event: LiveEvent = json_body(&mut req).await?;
                self.publish(event);
                Ok(Response::empty()?.with_status(204))
            }
            (worker::Method::Post, "/handoff") => {
                let op: handoff::HandoffOp = json_body(&mut req).await?;
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
            (worker::Method::Get, "/events") => {
                let grant = req
                    .headers()
                    .get(streams::GRANT_HEADER)?
                    .and_then(|g| serde_json::from_str::<streams::Grant>(&g).ok())
                    .ok_or_else(|| ApiError::bad_request("Which grant?"))?;
                self.events(&names, after, grant).await
            }
            (worker::Method::Post, "/forget") => {
                self.forget(&names).await?;
                Ok(Response::empty()?.with_status(204))
            }
            (worker::Method::Get, "/state") => self.debug_state().await,
            (worker::Method::Post, "/stop") => self.stop_turn().await,
            (worker::Method::Post, "/abort") => {
                self.reset().await;
                Ok(Response::empty()?.with_status(204))
            }
            _ => Err(ApiError::NotFound),
        }
    }

    /// `POST /sql`: statements from the Worker (`bindings::record::remote`) run as one
    /// batch on the record, answered once the site's object has what they wrote (a 503
    /// when it cannot take it: the record keeps it, and the alarm sends it later); a read
    /// sends nothing. The writes that create the conversation (`fresh`: its row, its
    /// greeting) are not waited for: they go with the record's next send, a few seconds
    /// later or with the first turn's, whichever comes first (the console lists no
    /// conversation before its visitor's first message), so a creation writes nothing to
    /// the site's object on its way.
    async fn run_sql(
        &self,
        req: &mut Request,
        scope: concierge_core::conversation::Scope<'_>,
        fresh: bool,
    ) -> Result<Response, ApiError> {
        let body = req.text().await?;
        let out = crate::bindings::record::run_remote(&self.env, &body).await;
        // What any isolate remembers of the conversation may be out of date now.
        crate::bindings::d1_store::remembered::forget(scope);
        let failed = |status: u16, detail: String| {
            let body = serde_json::json!({"error": {"code": "record", "message": detail}});
            Ok(Response::from_json(&body)?.with_status(status))
        };
        let out = match out {
            Ok(out) => out,
            Err(error) => return failed(500, error.to_string()),
        };
        // A read changes nothing: nothing to send (a turn running sends its own rows).
        if fresh || !crate::bindings::record::changed_last(&self.env) {
            return Ok(Response::ok(out)?.with_headers(json_headers()?));
        }
        let store = crate::bindings::d1_store::D1Store::new(&self.env)?;
        if let Err(error) = crate::bindings::record::settled(store.db()).await {
            // The alarm must know whose record it sends.
            if !self.names_saved.get() {
                self.save();
            }
            return failed(503, error.to_string());
        }
        Ok(Response::ok(out)?.with_headers(json_headers()?))
    }

    /// Numbers, keeps and sends a live event.
    pub(crate) fn publish(&self, event: LiveEvent) {
        let persist = self.log.borrow_mut().push_live(event);
        self.persist(persist);
    }
}

fn json_headers() -> worker::Result<worker::Headers> {
    let headers = worker::Headers::new();
    headers.set("content-type", "application/json")?;
    Ok(headers)
}

/// An internal request's JSON body, parsed in Rust from its text: one string across the
/// boundary instead of a JS object walked field by field (`Request::json`).
async fn json_body<T: serde::de::DeserializeOwned>(req: &mut Request) -> Result<T, ApiError> {
    let text = req.text().await?;
    serde_json::from_str(&text).map_err(|e| ApiError::Corrupt(e.to_string()))
}
