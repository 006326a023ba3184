//! Reading a turn's SSE body into its [`Turn`] and showing it in its entry.

use concierge_core::stream::sse::SseDecoder;
use js_sys::Uint8Array;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, ReadableStreamReadResult};

use crate::api;
use crate::rich;
use crate::turn::{Phase, StreamEvent, Turn};

use super::{Entry, MAX_EVENT_BYTES};

/// Read the SSE body into `turn`, updating `entry` as events arrive, and noting the last
/// event id in `last` (each one tells `live` when the turn is the panel's own, `own`).
/// `Ok` when the body ended (with
/// the turn over, or cut short), `Err` when reading failed (aborted, or the connection
/// broke).
pub(super) async fn read_stream(
    reader: &ReadableStreamDefaultReader,
    turn: &mut Turn,
    entry: Entry,
    last: &mut f64,
    own: bool,
) -> Result<(), ()> {
    // Payloads can be large (a 10,000-row table is over 1 MiB); the panel shows a capped
    // part of them, but reads them whole.
    let mut decoder = SseDecoder::with_limits(MAX_EVENT_BYTES, MAX_EVENT_BYTES);
    loop {
        let result = JsFuture::from(reader.read()).await.map_err(|_| ())?;
        let result: ReadableStreamReadResult = result.unchecked_into();
        if result.get_done().unwrap_or(true) {
            decoder.finish();
        } else {
            decoder.feed(&Uint8Array::new(&result.get_value()).to_vec());
        }
        let mut changed = false;
        while let Some(event) = decoder.next_event() {
            let Ok(event) = event else {
                continue;
            };
            if let Some(id) = event
                .id
                .and_then(|id| id.parse::<u32>().ok())
                .map(f64::from)
            {
                if own {
                    crate::live::turn(id);
                }
                *last = id;
            }
            let Some(json) = api::parse_json(event.data) else {
                continue;
            };
            if matches!(
                event.event,
                "tool_start" | "tool_end" | "progress" | "payload" | "completed"
            ) {
                rich::event(entry.key, event.event, event.data);
            }
            if let Some(event) = StreamEvent::from_sse(event.event, |path| api::field(&json, path))
            {
                let waiting = turn.phase == Phase::Waiting;
                changed |= turn.apply(event);
                if waiting && turn.phase == Phase::Streaming {
                    rich::event(entry.key, "text", "");
                }
            }
        }
        if changed {
            mirror(turn, entry);
        }
        if result.get_done().unwrap_or(true) {
            return Ok(());
        }
        if turn.phase.is_over() {
            let _ = reader.cancel();
            return Ok(());
        }
    }
}

/// Show `turn` in `entry`.
pub(super) fn mirror(turn: &Turn, entry: Entry) {
    if entry.text.with_untracked(|t| t.len() != turn.text.len()) {
        entry.text.set(turn.text.clone());
    }
    if entry.phase.get_untracked() != turn.phase {
        entry.phase.set(turn.phase);
    }
    if entry.activity.with_untracked(|a| *a != turn.activity) {
        entry.activity.set(turn.activity.clone());
    }
    // A notice or a refusal: no regenerate (`rich.js` shows no votes under it either).
    let fixed = turn.kind.as_deref().is_some_and(crate::stored::is_fixed);
    if entry.fixed.get_untracked() != fixed {
        entry.fixed.set(fixed);
    }
}
