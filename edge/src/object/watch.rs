//! Following the conversation from the object: a turn resumed (native, after an event id —
//! the current turn's, or an earlier one's to its end — or the AI SDK's replay), the last
//! turn's terminal event, and the live stream of every event, the handoff's state first
//! (`: ping` every [`PING_SECONDS`] s).

use std::rc::Rc;

use worker::Response;

use super::handoff;
use super::log::{self, Sink, Watcher};
use super::streams::{self, Grant};
use super::{Inner, Names};
use crate::bindings::js_stream::{BodyWriter, Coalescing};
use crate::error::ApiError;

/// Seconds between `: ping` comments on the live stream.
pub(crate) const PING_SECONDS: u64 = 20;
/// How long after its end a turn is still replayed to the AI SDK's resume.
const AI_SDK_RESUME_MS: u64 = 60_000;

impl Inner {
    /// `GET https://object/stream`: the current (or last) turn's events after `after`,
    /// then the rest as they come, then the end; 204 when there is nothing after `after`.
    /// An `after` before the current turn asks for an earlier turn: see [`earlier`].
    pub(super) fn resume(&self, after: Option<u64>) -> Result<Response, ApiError> {
        let mut log = self.log.borrow_mut();
        let first = log.turn.as_ref().map(|t| t.record.first_event_id);
        if let (Some(after), Some(first)) = (after, first)
            && after.saturating_add(1) < first
            && let Some(response) = earlier(&log, after, first)
        {
            return response;
        }
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
    pub(super) fn ai_sdk_resume(&self) -> Result<Response, ApiError> {
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
    pub(super) fn terminal(&self, ai_sdk: bool) -> Result<Response, ApiError> {
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

    /// `GET https://object/events`: the conversation's handoff state first (`handoff`
    /// `{state, since?, requested_at?, agent?}`, without an id: a snapshot, not an event of
    /// the log, so the client's `Last-Event-ID` stays its own), then every event from now
    /// on (after `after`, what is kept of the missed ones first), kept open, with a ping
    /// every [`PING_SECONDS`] s, within `grant`'s bounds ([`streams`]). A client that
    /// attaches after a reload knows at once who holds the conversation.
    pub(super) async fn events(
        self: Rc<Self>,
        names: &Names,
        after: Option<u64>,
        grant: Grant,
    ) -> Result<Response, ApiError> {
        // Over a cap: refused before anything is read (429 `too_many_streams`).
        streams::admit(&mut self.log.borrow_mut().watchers, &grant)?;
        // Events published while the state is read are sent after it.
        let before = self.log.borrow().next_id;
        let state = handoff::current(&self.ctx(names)).await;
        let (writer, body) = BodyWriter::new()?;
        let writer = Coalescing::new(writer);
        let watcher = {
            let mut log = self.log.borrow_mut();
            // Checked again: others may have attached while the state was read.
            streams::admit(&mut log.watchers, &grant)?;
            // Opens the stream at once (clients and proxies see it start).
            let mut out = String::from(": connected\n\n");
            out.push_str("event: handoff\ndata: ");
            out.push_str(&state.to_string());
            out.push_str("\n\n");
            match after {
                Some(after) => out.push_str(&log.frames_after(after)),
                None => {
                    for (id, entry) in log.entries.iter().filter(|(id, _)| *id >= before) {
                        log::native_frame(*id, entry, None, &mut out);
                    }
                }
            }
            writer.write_now(out.as_bytes());
            let watcher = Rc::new(Watcher { writer, grant });
            log.watchers.push(watcher.clone());
            watcher
        };
        streams::follow(self.clone(), watcher);
        sse(body)
    }
}

/// A resume of a turn before the current one (a client followed it from its start while
/// the next one began: another tab's turn, a notice answered at once): that turn's kept
/// events after `after`, to its terminal event — never the next turn's; 204 when they are
/// no longer all kept. `None` when none is kept (a new instance after a reset: the
/// current turn, the recorded failure, is the answer).
fn earlier(log: &log::Log, after: u64, first: u64) -> Option<Result<Response, ApiError>> {
    let mut out = String::new();
    let events = log
        .entries
        .iter()
        .filter(|(id, _)| *id > after && *id < first);
    for (id, entry) in events {
        if let log::Entry::Turn(event) = entry {
            log::native_frame(*id, entry, None, &mut out);
            if event.is_terminal() {
                break;
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    let whole = log.entries.front().is_some_and(|(id, _)| *id <= after + 1);
    Some(if whole { ended(&out) } else { no_content() })
}

/// An event stream of `frames`, ended.
fn ended(frames: &str) -> Result<Response, ApiError> {
    let (writer, body) = BodyWriter::new()?;
    let writer = Coalescing::new(writer);
    writer.write_now(frames.as_bytes());
    writer.close();
    sse(body)
}

/// 204: nothing to send.
fn no_content() -> Result<Response, ApiError> {
    Ok(Response::empty()?.with_status(204))
}

pub(super) use crate::http::turn_stream::sse;
