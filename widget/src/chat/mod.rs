//! The conversation controller: [`use_chat`] returns a [`Chat`] handle holding the
//! reactive state every component reads, and the actions they call (send, stop, retry,
//! reset).
//!
//! - **Start**: resume the conversation whose id is stored in `localStorage` (its
//!   history), or create one (it comes with the greeting).
//!   A stored id the server no longer knows (404) starts a new conversation.
//! - **Send**: the visitor's message and an empty answer appear at once; the answer is
//!   then filled from the stream, chunk by chunk, through [`Turn`](crate::turn::Turn).
//! - **Resume** (`crate::live`, `js/live.js`): the Worker numbers every event of the
//!   conversation (`id:`). When the connection breaks mid-answer (not the visitor's stop),
//!   the panel asks for the events after the last one it read and reads them into the same
//!   answer: the rest arrives once. After a reload mid-answer, the history ends with the
//!   visitor's message and the panel follows the turn from its start (its first event id
//!   was kept with the conversation id).
//! - **Live**: other clients' turns are followed the same way as they start; messages from
//!   other tabs and people's replies (marked with their name) and the handoff's state (a
//!   notice) are added as they arrive.
//! - **Stop** asks the server to stop the turn (`POST …/stop`): the stream ends with what
//!   the server kept, marked stopped; **retry** sends the failed turn's message again into the
//!   same answer, with the same idempotency key, so the server stores it once and answers
//!   it again; **regenerate** answers the last message again in place of its answer (the
//!   server replaces the stored answer; a retry after a failed regenerate regenerates
//!   again); **reset** forgets the stored id and starts over.
//!
//! Answers are streamed in `follow` and read in `stream`; the stored conversation id is
//! kept in `storage`.

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::AbortController;

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use crate::api::{self, Api, ApiError, Role};
use crate::host::Host;
use crate::i18n::{Lang, Strings};
use crate::live;
use crate::options::Options;
use crate::rich;
use crate::stored::{self, Shown, StoredMessage};
use crate::turn::Phase;

mod follow;
mod storage;
mod stream;

use storage::{storage_get, storage_remove, storage_set};

/// The largest SSE line and event the panel reads (8 MiB).
const MAX_EVENT_BYTES: usize = 8 << 20;

/// The longest message the Worker accepts, in characters; `js/flow.js` counts towards it
/// and says so when a message is over it.
const MAX_MESSAGE_CHARS: usize = 4_000;

/// How a message looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// The visitor's or the assistant's.
    Plain,
    /// A person's reply; `activity` holds their name.
    Human,
    /// A notice about the conversation (the handoff's state), not a message.
    Notice,
}

/// One message on screen.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    /// Stable key for the list.
    pub key: u32,
    /// Who wrote it.
    pub role: Role,
    /// How it looks.
    pub look: Look,
    /// Its text so far.
    pub text: RwSignal<String>,
    /// Where it is (history and the visitor's messages are `Done`).
    pub phase: RwSignal<Phase>,
    /// What the assistant is doing before text arrives (`progress`); a person's name on
    /// their reply.
    pub activity: RwSignal<Option<String>>,
    /// A fixed text (a handoff notice, a refusal): no regenerate, no votes.
    pub fixed: RwSignal<bool>,
}

/// Whether the conversation is usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Loading config and conversation.
    Loading,
    /// Ready to chat.
    Ready,
    /// The conversation could not be started or loaded.
    Failed,
}

impl Status {
    /// A stable name, for `data-status` (styles and tests).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Loading => "loading",
            Self::Ready => "ready",
            Self::Failed => "failed",
        }
    }
}

/// The chat's state and actions. `Copy`: pass it to any component.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chat {
    /// Messages on screen, oldest first.
    pub entries: RwSignal<Vec<Entry>>,
    /// Whether the conversation is usable.
    pub status: RwSignal<Status>,
    /// The conversation's and the panel's language.
    pub lang: Lang,
    /// The panel's words, in `lang`.
    pub strings: &'static Strings,
    /// An answer is streaming.
    pub busy: RwSignal<bool>,
    options: StoredValue<Options>,
    api: StoredValue<Api>,
    host: StoredValue<Host>,
    conversation: StoredValue<Option<String>>,
    abort: StoredValue<Option<AbortController>, LocalStorage>,
    /// Bumped by reset, so a superseded stream cannot touch the new conversation.
    generation: StoredValue<u32>,
    /// The visitor message behind the last answer and its idempotency key (for retry).
    last_sent: StoredValue<(String, String)>,
    /// The last answer was asked for by regenerate (a retry regenerates again).
    regenerating: StoredValue<bool>,
    next_key: StoredValue<u32>,
}

/// Create the chat for `options`, in `lang`, and start loading the conversation.
pub(crate) fn use_chat(options: Options, lang: Lang) -> Chat {
    let chat = Chat {
        entries: RwSignal::new(Vec::new()),
        status: RwSignal::new(Status::Loading),
        lang,
        strings: lang.strings(),
        busy: RwSignal::new(false),
        api: StoredValue::new(Api::new(&options)),
        host: StoredValue::new(Host::new(options.parent_origin.clone())),
        conversation: StoredValue::new(None),
        abort: StoredValue::new_local(None),
        generation: StoredValue::new(0),
        last_sent: StoredValue::new((String::new(), String::new())),
        regenerating: StoredValue::new(false),
        next_key: StoredValue::new(0),
        options: StoredValue::new(options),
    };
    chat.options
        .with_value(|o| rich::setup(chat.strings, lang, o.parent_origin.as_deref()));
    chat.start(chat.options.with_value(|o| o.reset));
    chat
}

impl Chat {
    /// The loader on the host page.
    pub(crate) fn host(&self) -> Host {
        self.host.get_value()
    }

    /// Whether the visitor has written anything in this conversation.
    pub(crate) fn visitor_has_written(&self) -> bool {
        self.entries
            .with(|entries| entries.iter().any(|e| e.role == Role::User))
    }

    /// Load (or create) the conversation. `fresh` forgets the stored one first.
    pub(crate) fn start(self, fresh: bool) {
        self.status.set(Status::Loading);
        let generation = self.generation.get_value();
        spawn_local(async move {
            let api = self.api.get_value();
            let key = self.options.with_value(Options::storage_key);
            if fresh {
                storage_remove(&key);
            }
            let lang = self.lang;
            let loaded = match storage_get(&key) {
                Some(id) => match api.history(&id).await {
                    Err(ApiError::Status(404)) => api.create(lang).await,
                    other => other,
                },
                None => api.create(lang).await,
            };
            if self.generation.get_value() != generation {
                return;
            }
            match loaded {
                Ok(conversation) => {
                    storage_set(&key, &conversation.id);
                    let headers = api.headers();
                    let [api_key, embedder, token] = headers;
                    rich::conversation(&conversation.id, api_key, embedder, token);
                    let answering = self.strings.handoff[3];
                    let site = self.options.with_value(|o| o.site_key.clone());
                    live::start(
                        &conversation.id,
                        &site,
                        headers,
                        [self.strings.person, answering],
                        move |kind, text, author, raw| self.arrived(&kind, text, author, &raw),
                    );
                    // The last message waits for its answer: follow the turn this panel
                    // was reading when the page went away, from its start.
                    let after = live::resumed();
                    let unanswered = conversation
                        .messages
                        .last()
                        .is_some_and(|m| m.role == Role::User);
                    self.conversation.set_value(Some(conversation.id));
                    let entries = conversation
                        .messages
                        .into_iter()
                        .map(|m| self.stored(m.role, m.content, &m.raw))
                        .collect();
                    self.entries.set(entries);
                    self.status.set(Status::Ready);
                    if unanswered && after > -2.0 {
                        self.follow_turn(after);
                    }
                }
                Err(_) => self.status.set(Status::Failed),
            }
        });
    }

    /// Send the visitor's `text`; false when it cannot be sent now (empty, over the
    /// length limit, an answer is streaming, or the conversation is not ready).
    pub(crate) fn send(self, text: &str) -> bool {
        let text = text.trim();
        if text.is_empty()
            || text.chars().count() > MAX_MESSAGE_CHARS
            || self.busy.get_untracked()
            || self.status.get_untracked() != Status::Ready
        {
            return false;
        }
        let user = self.entry(Role::User, text.to_string(), Phase::Done);
        let answer = self.entry(Role::Assistant, String::new(), Phase::Waiting);
        self.entries
            .update(|entries| entries.extend([user, answer]));
        self.last_sent
            .set_value((text.to_string(), idempotency_key()));
        live::sending(text);
        self.regenerating.set_value(false);
        self.host
            .with_value(|h| h.message(Role::User.as_str(), text, None));
        self.run(answer);
        true
    }

    /// Whether `entry` is the newest message (only it offers retry).
    pub(crate) fn is_last(&self, entry: &Entry) -> bool {
        self.entries
            .with(|entries| entries.last().is_some_and(|last| last.key == entry.key))
    }

    /// Send the failed answer's message again.
    pub(crate) fn retry(self) {
        let Some(last) = self.entries.with_untracked(|e| e.last().copied()) else {
            return;
        };
        if self.busy.get_untracked() || !matches!(last.phase.get_untracked(), Phase::Failed(_)) {
            return;
        }
        last.text.set(String::new());
        rich::event(last.key, "reset", "");
        last.phase.set(Phase::Waiting);
        self.run(last);
    }

    /// Whether `entry` is the last answer, finished (or stopped), to a visitor's message:
    /// the one answer that offers regenerate.
    pub(crate) fn can_regenerate(&self, entry: &Entry) -> bool {
        entry.role == Role::Assistant
            && entry.look == Look::Plain
            && !entry.fixed.get()
            && !self.busy.get()
            && matches!(entry.phase.get(), Phase::Done | Phase::Stopped)
            && self.is_last(entry)
            && self.visitor_has_written()
    }

    /// Answer the last visitor's message again, streaming into the last answer in place.
    pub(crate) fn regenerate(self) {
        let Some(last) = self.entries.with_untracked(|e| e.last().copied()) else {
            return;
        };
        if self.busy.get_untracked()
            || last.role != Role::Assistant
            || last.look != Look::Plain
            || last.fixed.get_untracked()
            || !matches!(last.phase.get_untracked(), Phase::Done | Phase::Stopped)
        {
            return;
        }
        self.regenerating.set_value(true);
        last.text.set(String::new());
        rich::event(last.key, "reset", "");
        last.phase.set(Phase::Waiting);
        self.run(last);
    }

    /// Stop the streaming answer (what arrived stays): the server stops the turn, whose
    /// stream then ends (stopped) with what it keeps; when no turn could be stopped there
    /// (it has not started yet), the request is dropped.
    pub(crate) fn halt(self) {
        self.abort.with_value(|c| c.as_ref().map(live::halt));
    }

    /// Drop the streaming answer's request (what arrived stays).
    fn stop(self) {
        self.abort
            .with_value(|c| c.as_ref().map(AbortController::abort));
    }

    /// Speak for the user of `token` (`None`: anonymously) from now on, in a new
    /// conversation (the current one belongs to the previous identity).
    pub(crate) fn identify(self, token: Option<String>) {
        self.api.update_value(|api| api.set_user_token(token));
        self.reset();
    }

    /// Forget this conversation and start a new one.
    pub(crate) fn reset(self) {
        self.stop();
        live::stop();
        self.generation.update_value(|g| *g += 1);
        self.busy.set(false);
        self.conversation.set_value(None);
        self.entries.set(Vec::new());
        self.start(true);
    }

    fn entry(self, role: Role, text: String, phase: Phase) -> Entry {
        let mut key = 0;
        self.next_key.update_value(|k| {
            key = *k;
            *k += 1;
        });
        Entry {
            key,
            role,
            look: Look::Plain,
            text: RwSignal::new(text),
            phase: RwSignal::new(phase),
            activity: RwSignal::new(None),
            fixed: RwSignal::new(false),
        }
    }

    /// A stored message (from history or the live stream, `raw` as the API sent it) as
    /// the live panel showed it (`crate::stored`): a handoff line as a notice in the
    /// panel's words, a person's reply with their name, an answer as it ended.
    fn stored(self, role: Role, text: String, raw: &JsValue) -> Entry {
        let mut entry = self.entry(role, text, Phase::Done);
        if role == Role::User {
            return entry;
        }
        let text = |path: &[&str]| api::field(raw, path);
        let flag = |key: &str| {
            Reflect::get(raw, &"metadata".into())
                .and_then(|m| Reflect::get(&m, &key.into()))
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false)
        };
        let (kind, handoff) = (text(&["kind"]), text(&["metadata", "handoff"]));
        let name = text(&["metadata", "agent"])
            .or_else(|| text(&["author", "name"]))
            .or_else(|| text(&["metadata", "author", "name"]));
        let message = StoredMessage {
            kind: kind.as_deref().unwrap_or_default(),
            handoff: handoff.as_deref(),
            name: name.as_deref(),
            stopped: flag("stopped"),
            incomplete: flag("incomplete"),
        };
        match stored::shown(message, self.strings) {
            Shown::Notice(words) => {
                entry.look = Look::Notice;
                entry.text.set(words);
            }
            Shown::Person(name) => {
                entry.look = Look::Human;
                entry.activity.set(Some(name));
            }
            Shown::Assistant { phase, fixed } => {
                entry.phase.set(phase);
                entry.fixed.set(fixed);
                rich::stored(entry.key, raw);
            }
        }
        entry
    }
}

/// A fresh idempotency key for one visitor message: unique within its conversation (the
/// time, and 64 random bits).
fn idempotency_key() -> String {
    let random = || (js_sys::Math::random() * f64::from(u32::MAX)) as u32;
    format!(
        "w-{:x}-{:08x}{:08x}",
        js_sys::Date::now() as u64,
        random(),
        random()
    )
}
