//! The object's event log: every event it sends to clients gets the next conversation-wide
//! id; the current (or last) turn's events, and the live events around them, are kept in
//! memory, and fanned out to the clients attached (the poster's stream, resumers, the
//! `GET …/events` watchers).
//!
//! Ids never repeat, even after a reset: the object reserves them in blocks of
//! [`ID_BLOCK`] in its storage (one write per block, never one per event), and a new
//! instance starts after the last block reserved.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use concierge_core::stream::TurnEncoder;
use concierge_core::stream::ai_sdk::AiSdkEncoder;
use concierge_core::stream::native::NativeEncoder;
use concierge_core::stream::openai_out::OpenAiChunkEncoder;
use concierge_core::turn::TurnEvent;
use serde::{Deserialize, Serialize};

pub(crate) use super::live::{INTERRUPTED_CODE, LiveEvent, interrupted, interrupted_frame};

use crate::bindings::js_stream::Coalescing;

/// Ids reserved in storage at once.
pub(crate) const ID_BLOCK: u64 = 1_024;
/// Entries kept from before the current turn (for `Last-Event-ID` on the live stream).
const KEEP_BEFORE_TURN: usize = 256;

/// Why the streams of a reset object break.
pub(crate) const RESET: &str = "the conversation's object was reset";

/// The persisted record of the current (or last) turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TurnRecord {
    /// The turn (its first event's id, as text).
    pub turn_id: String,
    pub user_message_id: String,
    pub message_id: String,
    /// `running` or `done`.
    pub state: String,
    /// The id of its first event (`started`).
    pub first_event_id: u64,
}

/// One entry of the log.
#[derive(Debug, Clone)]
pub(crate) enum Entry {
    Turn(TurnEvent),
    Live(LiveEvent),
}

/// `entry` as a native SSE frame with id `id` (`request_id` in a `started`).
pub(crate) fn native_frame(id: u64, entry: &Entry, request_id: Option<&str>, out: &mut String) {
    match entry {
        Entry::Turn(event) => {
            let mut encoder = NativeEncoder::resume_at(id);
            if let Some(request_id) = request_id {
                encoder = encoder.with_request_id(request_id);
            }
            let _ = encoder.encode(event, out);
        }
        Entry::Live(event) => {
            let data = serde_json::to_string(event.data()).unwrap_or_else(|_| "null".into());
            out.push_str("event: ");
            out.push_str(event.name());
            out.push_str("\nid: ");
            out.push_str(&id.to_string());
            out.push_str("\ndata: ");
            out.push_str(&data);
            out.push_str("\n\n");
        }
    }
}

/// Where a client's events go.
pub(crate) enum Sink {
    /// The native stream of one turn (the poster's, a resumer's): ends after its terminal.
    Native {
        writer: Coalescing,
        request_id: Option<String>,
    },
    /// The AI SDK's UI message stream of one turn: ends after its terminal.
    AiSdk {
        writer: Coalescing,
        encoder: AiSdkEncoder,
    },
    /// OpenAI's `chat.completion.chunk` stream of one turn (`/v1/chat/completions`).
    OpenAi {
        writer: Coalescing,
        encoder: OpenAiChunkEncoder,
    },
    /// The turn's events gathered (a JSON answer).
    Collect(Rc<RefCell<Vec<TurnEvent>>>),
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Native { .. } => "Sink::Native",
            Self::AiSdk { .. } => "Sink::AiSdk",
            Self::OpenAi { .. } => "Sink::OpenAi",
            Self::Collect(_) => "Sink::Collect",
        })
    }
}

impl Sink {
    /// Sends turn event `event` (id `id`; `native` its frame, encoded once for every
    /// native client, without a request id).
    fn send(&mut self, id: u64, event: &TurnEvent, native: &mut Option<String>) {
        match self {
            Self::Native { writer, request_id } => {
                if let (Some(request_id), TurnEvent::Started { .. }) =
                    (request_id.as_deref(), event)
                {
                    let mut out = String::new();
                    native_frame(id, &Entry::Turn(event.clone()), Some(request_id), &mut out);
                    writer.write_now(out.as_bytes());
                    return;
                }
                let frame = native.get_or_insert_with(|| {
                    let mut out = String::new();
                    encode_turn(id, event, &mut out);
                    out
                });
                write(writer, event, frame);
            }
            Self::AiSdk { writer, encoder } => encoded(writer, encoder, event),
            Self::OpenAi { writer, encoder } => encoded(writer, encoder, event),
            Self::Collect(events) => events.borrow_mut().push(event.clone()),
        }
    }

    /// Breaks a stream (the object is reset): its reader sees an error.
    pub(crate) fn abort(&self) {
        match self {
            Self::Native { writer, .. }
            | Self::AiSdk { writer, .. }
            | Self::OpenAi { writer, .. } => writer.abort(RESET),
            Self::Collect(_) => {}
        }
    }

    /// Ends a stream (after its terminal event).
    pub(crate) fn close(&self) {
        match self {
            Self::Native { writer, .. }
            | Self::AiSdk { writer, .. }
            | Self::OpenAi { writer, .. } => writer.close(),
            Self::Collect(_) => {}
        }
    }
}

/// `event` in a stream of `encoder`'s format (nothing when the format cannot carry it).
fn encoded(writer: &Coalescing, encoder: &mut dyn TurnEncoder, event: &TurnEvent) {
    let mut out = String::new();
    let _ = encoder.encode(event, &mut out);
    if !out.is_empty() {
        write(writer, event, &out);
    }
}

fn write(writer: &Coalescing, event: &TurnEvent, frame: &str) {
    match event {
        TurnEvent::Chunk { .. } => writer.write_soon(frame.as_bytes()),
        _ => writer.write_now(frame.as_bytes()),
    }
}

/// A turn event's native frame with id `id`, without copying a chunk's text.
fn encode_turn(id: u64, event: &TurnEvent, out: &mut String) {
    let _ = NativeEncoder::resume_at(id).encode(event, out);
}

/// A client of `GET …/events`: every event, kept open, within its grant's bounds (see
/// [`streams`](super::streams)).
pub(crate) struct Watcher {
    pub writer: Coalescing,
    /// What it may watch, and until when.
    pub grant: super::streams::Grant,
}

impl Watcher {
    /// Whether it is still kept: a client that left, or that stopped reading while more
    /// than [`MAX_UNREAD_WRITES`](super::streams::MAX_UNREAD_WRITES) writes waited for it,
    /// is dropped (its stream broken).
    pub(crate) fn kept(&self) -> bool {
        if self.writer.is_gone() {
            return false;
        }
        if self.writer.unread_writes() > super::streams::MAX_UNREAD_WRITES {
            self.writer.abort(super::streams::TOO_SLOW);
            return false;
        }
        true
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

/// The current (or last) turn.
#[derive(Debug)]
pub(crate) struct TurnLog {
    pub record: TurnRecord,
    /// Whether its terminal event was sent.
    pub ended: bool,
    /// When it ended (ms).
    pub ended_at_ms: Option<u64>,
    /// The streams following it (ended with it).
    pub followers: Vec<Sink>,
}

/// The object's log (see the module's documentation).
#[derive(Debug, Default)]
pub(crate) struct Log {
    /// The next event's id.
    pub next_id: u64,
    /// Ids below this are reserved in storage.
    pub reserved: u64,
    /// Recent entries, oldest first: at most [`KEEP_BEFORE_TURN`] from before the current
    /// turn, then all of its own.
    pub entries: VecDeque<(u64, Entry)>,
    pub turn: Option<TurnLog>,
    pub watchers: Vec<Rc<Watcher>>,
}

/// What the caller must persist after a log change.
#[derive(Debug, Default)]
#[must_use]
pub(crate) struct Persist {
    /// A new reserved bound for ids.
    pub reserved: Option<u64>,
}

impl Log {
    /// The next id, reserving a new block when this one is used up.
    fn take_id(&mut self, persist: &mut Persist) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if self.next_id >= self.reserved {
            self.reserved = self.next_id + ID_BLOCK;
            persist.reserved = Some(self.reserved);
        }
        id
    }

    /// A turn starts: its record, and the streams that follow it from its start.
    pub(crate) fn begin_turn(
        &mut self,
        user_message_id: &str,
        message_id: &str,
        followers: Vec<Sink>,
    ) -> TurnRecord {
        while self.entries.len() > KEEP_BEFORE_TURN {
            self.entries.pop_front();
        }
        let first = self.next_id;
        let record = TurnRecord {
            turn_id: first.to_string(),
            user_message_id: user_message_id.to_string(),
            message_id: message_id.to_string(),
            state: "running".into(),
            first_event_id: first,
        };
        self.turn = Some(TurnLog {
            record: record.clone(),
            ended: false,
            ended_at_ms: None,
            followers,
        });
        record
    }

    /// A turn event: numbered, kept, sent to its followers and the watchers; a terminal
    /// one ends the turn's streams.
    pub(crate) fn push_turn(&mut self, event: TurnEvent, now_ms: u64) -> Persist {
        let mut persist = Persist::default();
        let Some(turn) = self.turn.as_mut().filter(|t| !t.ended) else {
            return persist;
        };
        let id = {
            let id = self.next_id;
            self.next_id += 1;
            if self.next_id >= self.reserved {
                self.reserved = self.next_id + ID_BLOCK;
                persist.reserved = Some(self.reserved);
            }
            id
        };
        let mut native = None;
        for follower in &mut turn.followers {
            follower.send(id, &event, &mut native);
        }
        if !self.watchers.is_empty() {
            let frame = native.get_or_insert_with(|| {
                let mut out = String::new();
                encode_turn(id, &event, &mut out);
                out
            });
            self.watchers.retain(|w| w.kept());
            for watcher in &self.watchers {
                write(&watcher.writer, &event, frame);
            }
        }
        if event.is_terminal() {
            turn.ended = true;
            turn.ended_at_ms = Some(now_ms);
            turn.record.state = "done".into();
            for follower in turn.followers.drain(..) {
                follower.close();
            }
        }
        self.entries.push_back((id, Entry::Turn(event)));
        persist
    }

    /// A live event from outside a turn: numbered, kept, sent to the watchers.
    pub(crate) fn push_live(&mut self, event: LiveEvent) -> Persist {
        let mut persist = Persist::default();
        let id = self.take_id(&mut persist);
        let entry = Entry::Live(event);
        if !self.watchers.is_empty() {
            let mut frame = String::new();
            native_frame(id, &entry, None, &mut frame);
            self.watchers.retain(|w| w.kept());
            for watcher in &self.watchers {
                watcher.writer.write_now(frame.as_bytes());
            }
        }
        self.entries.push_back((id, entry));
        if self.turn.as_ref().is_none_or(|t| t.ended) {
            while self.entries.len() > KEEP_BEFORE_TURN {
                self.entries.pop_front();
            }
        }
        persist
    }

    /// The current turn's events (id, event), from its start.
    pub(crate) fn turn_events(&self) -> Vec<(u64, TurnEvent)> {
        let Some(turn) = &self.turn else {
            return Vec::new();
        };
        let first = turn.record.first_event_id;
        self.entries
            .iter()
            .filter(|(id, _)| *id >= first)
            .filter_map(|(id, entry)| match entry {
                Entry::Turn(event) => Some((*id, event.clone())),
                Entry::Live(_) => None,
            })
            .collect()
    }

    /// Every kept entry after `after`, as native frames.
    pub(crate) fn frames_after(&self, after: u64) -> String {
        let mut out = String::new();
        for (id, entry) in self.entries.iter().filter(|(id, _)| *id > after) {
            native_frame(*id, entry, None, &mut out);
        }
        out
    }
}
