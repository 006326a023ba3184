//! The panel's side of its conversation with the loader (`embed.js`) on the host page.
//!
//! Both sides use `postMessage` with objects tagged `concierge`:
//! - panel → loader, sent only to the host page's origin (from the fragment):
//!   `{concierge: "ready"}`, `{concierge: "close"}`,
//!   `{concierge: "message", role, content, kind}` (the loader's `message` event);
//! - loader → panel, accepted only from the parent window and its origin:
//!   `{concierge: "focus"}`, `{concierge: "reset"}`.

use js_sys::{Object, Reflect};
use leptos::prelude::{WindowListenerHandle, window_event_listener};
use wasm_bindgen::JsValue;

/// What the loader asks of the panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// The panel was opened: move focus into it.
    Focus,
    /// `Concierge.reset()`: start a new conversation.
    Reset,
}

/// The host page, as seen from the panel.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    origin: Option<String>,
}

impl Host {
    /// The host page at `origin` (no messages are sent when it is unknown).
    pub(crate) fn new(origin: Option<String>) -> Self {
        Self { origin }
    }

    /// The panel is running.
    pub(crate) fn ready(&self) {
        self.post(&[("concierge", "ready")]);
    }

    /// The visitor closed the panel (close button or Esc).
    pub(crate) fn close(&self) {
        self.post(&[("concierge", "close")]);
    }

    /// A message was sent or an answer completed.
    pub(crate) fn message(&self, role: &str, content: &str, kind: Option<&str>) {
        self.post(&[
            ("concierge", "message"),
            ("role", role),
            ("content", content),
            ("kind", kind.unwrap_or("")),
        ]);
    }

    fn post(&self, pairs: &[(&str, &str)]) {
        let Some(origin) = &self.origin else {
            return;
        };
        let Some(parent) = web_sys::window().and_then(|w| w.parent().ok().flatten()) else {
            return;
        };
        let object = Object::new();
        for (key, value) in pairs {
            let _ = Reflect::set(&object, &(*key).into(), &(*value).into());
        }
        let _ = parent.post_message(&object, origin);
    }

    /// Call `on` for each command the loader sends.
    pub(crate) fn listen(&self, on: impl Fn(Command) + 'static) -> WindowListenerHandle {
        let origin = self.origin.clone();
        window_event_listener(leptos::ev::message, move |ev| {
            let parent = web_sys::window().and_then(|w| w.parent().ok().flatten());
            let from_parent = match (ev.source(), parent) {
                (Some(source), Some(parent)) => Object::is(&source, &parent),
                _ => false,
            };
            if !from_parent || origin.as_deref() != Some(ev.origin().as_str()) {
                return;
            }
            let data = ev.data();
            let command = Reflect::get(&data, &JsValue::from_str("concierge"))
                .ok()
                .and_then(|v| v.as_string());
            match command.as_deref() {
                Some("focus") => on(Command::Focus),
                Some("reset") => on(Command::Reset),
                _ => {}
            }
        })
    }
}
