//! Answers streaming into the panel: the visitor's own turn, another client's turn the
//! live stream announced, or the one a reload interrupted; and the stored messages and
//! notices the live stream brings. A broken connection is resumed after the last event
//! read.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsValue;
use web_sys::AbortController;

use super::stream::{mirror, read_stream};
use super::{Chat, Entry, Look};
use crate::api::{ApiError, Role};
use crate::live;
use crate::rich;
use crate::turn::{Failure, Phase, Turn};

impl Chat {
    /// What the live stream brought (`js/live.js`): another client's turn to follow
    /// (`follow`, its first event id; `author` set when it surely is another tab's, which
    /// is followed even while the panel reads or waits for its own), a stored message
    /// (`user`, `assistant`: drawn from `raw` as history draws it) or a `notice`.
    pub(super) fn arrived(self, kind: &str, text: String, author: String, raw: &JsValue) {
        let role = if kind == "user" {
            Role::User
        } else {
            Role::Assistant
        };
        if kind == "follow" {
            if !author.is_empty() || !self.busy.get_untracked() {
                self.follow_turn(f64::from(text.parse::<u32>().unwrap_or(0)) - 1.0);
            }
            return;
        }
        self.host
            .with_value(|h| h.message(role.as_str(), &text, None));
        let entry = if kind == "notice" {
            let mut entry = self.entry(role, text, Phase::Done);
            entry.look = Look::Notice;
            entry
        } else {
            // As history shows it after a reload (`Chat::stored`).
            self.stored(role, text, raw)
        };
        self.place(entry);
    }

    /// Add `entry` to the log: while the panel's own post waits in line (`live::queued`),
    /// before its message and answer, the last two entries (what happens meanwhile comes
    /// first); else last. A notice always comes last: it tells what just happened (the
    /// wait for a person the panel's own request began comes after that request, as in
    /// history).
    fn place(self, entry: Entry) {
        let before = 2 * usize::from(entry.look != Look::Notice && live::queued());
        self.entries
            .update(|e| e.insert(e.len().saturating_sub(before), entry));
    }

    /// Show a turn this panel did not ask for (another tab's, or the one a reload
    /// interrupted) from the event after `after`; while the panel reads its own turn (or
    /// waits for it), alongside it.
    pub(super) fn follow_turn(self, after: f64) {
        let answer = self.entry(Role::Assistant, String::new(), Phase::Waiting);
        self.place(answer);
        self.follow(answer, Some(after));
    }

    /// Stream the answer to `last_sent` into `entry`.
    pub(super) fn run(self, entry: Entry) {
        self.follow(entry, None);
    }

    /// Stream an answer into `entry`: the answer to `last_sent`, or (`resume`) a running
    /// turn's events after that id. When the connection breaks mid-answer, the events
    /// after the last one read are asked for again. Another turn followed while the panel
    /// reads its own (`aside`) leaves the panel's own state (busy, stop, `live`) alone.
    fn follow(self, entry: Entry, resume: Option<f64>) {
        let Some(id) = self.conversation.get_value() else {
            return;
        };
        let aside = resume.is_some() && self.busy.get_untracked();
        let controller = AbortController::new().ok().filter(|_| !aside);
        let signal = controller.as_ref().map(AbortController::signal);
        if !aside {
            self.abort.set_value(controller);
            self.busy.set(true);
        }
        let generation = self.generation.get_value();
        let (content, key) = self.last_sent.get_value();
        // After a reload there is no message to send again: a retry regenerates.
        let regenerate = self.regenerating.get_value() || content.is_empty();
        spawn_local(async move {
            let mut turn = Turn::new();
            let api = self.api.get_value();
            let signal = signal.as_ref();
            let mut last = resume.unwrap_or(-1.0);
            let mut sent = match resume {
                Some(after) => reopen(after, signal).await,
                None if regenerate => api.regenerate(&id, signal).await.map(Some),
                None => api.send(&id, &content, &key, signal).await.map(Some),
            };
            loop {
                let read = match &sent {
                    Ok(Some(reader)) => {
                        read_stream(reader, &mut turn, entry, &mut last, !aside).await
                    }
                    // A reload found no turn to follow.
                    Ok(None) if turn == Turn::new() => break,
                    Ok(None) => Ok(()),
                    Err(ApiError::Status(status)) => {
                        turn.fail(Failure::from_status(*status));
                        Ok(())
                    }
                    Err(_) => Err(()),
                };
                if signal.is_some_and(web_sys::AbortSignal::aborted) {
                    // The visitor's stop.
                    turn.stop();
                }
                if turn.phase.is_over() || self.generation.get_value() != generation {
                    break;
                }
                // No answer, or the connection broke: once the turn has begun, ask for the
                // rest (after the last event read); else the network failed.
                if last < 0.0 || sent.as_ref().is_ok_and(Option::is_none) {
                    if read.is_err() {
                        turn.fail(Failure::Network);
                    }
                    turn.end();
                    break;
                }
                sent = reopen(last, signal).await;
                if sent.as_ref().is_ok_and(Option::is_none) {
                    turn.end();
                    break;
                }
            }
            if !aside {
                live::done();
            }
            mirror(&turn, entry);
            if turn.phase != Phase::Done {
                rich::event(entry.key, "end", "");
            }
            if self.generation.get_value() != generation {
                return;
            }
            if !aside {
                self.abort.set_value(None);
                self.busy.set(false);
            }
            // A turn with no answer to show: a held conversation's (a person answers), or
            // none at all after a reload.
            if turn.kind.as_deref() == Some("held") || (resume.is_some() && turn == Turn::new()) {
                self.entries.update(|e| e.retain(|e| e.key != entry.key));
            } else if turn.phase == Phase::Done {
                self.host.with_value(|h| {
                    h.message(Role::Assistant.as_str(), &turn.text, turn.kind.as_deref());
                });
            }
        });
    }
}

/// The reader `live::reopen` found (`None`: nothing more to read).
async fn reopen(
    after: f64,
    signal: Option<&web_sys::AbortSignal>,
) -> Result<Option<web_sys::ReadableStreamDefaultReader>, ApiError> {
    use wasm_bindgen::JsCast;
    let reader = wasm_bindgen_futures::JsFuture::from(live::reopen(after, signal))
        .await
        .map_err(|_| ApiError::Network)?;
    Ok(reader.dyn_into().ok())
}
