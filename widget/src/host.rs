//! The panel's side of its conversation with the loader (`embed.js`) on the host page.
//!
//! The host page is the panel's parent window, and its origin the one the browser reports
//! ([`embedder_origin`]). Both sides use `postMessage` with objects tagged `concierge`:
//! - panel → loader, sent only to that origin:
//!   `{concierge: "ready"}`, `{concierge: "close"}`,
//!   `{concierge: "message", role, content, kind}` (the loader's `message` event);
//! - loader → panel, accepted only from the parent window and its origin:
//!   `{concierge: "focus"}`, `{concierge: "reset"}`, `{concierge: "identify", token}`.

use js_sys::{Object, Reflect};
use leptos::prelude::{WindowListenerHandle, window_event_listener};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

#[wasm_bindgen]
extern "C" {
    /// `Location` with `ancestorOrigins` (Chromium, WebKit), which web-sys lacks.
    #[wasm_bindgen(extends = web_sys::Location)]
    type AncestorLocation;

    /// The origins of the frames above this one, the parent's first; absent where the
    /// browser does not report them.
    #[wasm_bindgen(method, getter, js_name = ancestorOrigins)]
    fn ancestor_origins(this: &AncestorLocation) -> Option<web_sys::DomStringList>;
}

/// The origin of the page the panel is framed in: `None` when the panel is not framed
/// (opened top-level, it refuses to run). The parent's origin as the browser reports it
/// where it does; elsewhere `claimed`, the loader's word, which the panel page's
/// `frame-ancestors` policy has already limited to the site's own origins.
pub(crate) fn embedder_origin(claimed: Option<String>) -> Option<String> {
    let window = web_sys::window()?;
    let parent = window.parent().ok().flatten()?;
    if Object::is(&parent, &window) {
        return None;
    }
    let location: AncestorLocation = window.location().unchecked_into();
    match location.ancestor_origins() {
        Some(ancestors) => ancestors.item(0).filter(|origin| origin != "null"),
        None => claimed,
    }
}

/// What the loader asks of the panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// The panel was opened: move focus into it.
    Focus,
    /// `Concierge.reset()`: start a new conversation.
    Reset,
    /// `Concierge.identify(token)`: speak for the user of this signed token (`None`:
    /// anonymously) in a new conversation.
    Identify(Option<String>),
}

/// The host page, as seen from the panel.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    origin: Option<String>,
}

impl Host {
    /// The host page at `origin` ([`embedder_origin`]; no messages are sent when it is
    /// unknown).
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
                Some("identify") => {
                    let token = Reflect::get(&data, &JsValue::from_str("token"))
                        .ok()
                        .and_then(|v| v.as_string())
                        .map(|t| t.trim().to_string())
                        .filter(|t| !t.is_empty());
                    on(Command::Identify(token));
                }
                _ => {}
            }
        })
    }
}
