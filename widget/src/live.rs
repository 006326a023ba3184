//! The conversation beyond the panel's own requests, drawn by `js/live.js` (plain JS keeps
//! the widget in its download budget): resuming a turn after the connection broke or the
//! page reloaded (`GET /conversations/{id}/stream` after the last event id seen), and the
//! live stream (`GET /conversations/{id}/events`): other clients' turns, messages from
//! other tabs and from people, and the handoff's state. What it does is specified there
//! and tested in Chromium (`tests/tests/e2e/durable_browser.rs`).

use js_sys::{Array, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

#[wasm_bindgen(module = "/js/live.js")]
extern "C" {
    #[wasm_bindgen(js_name = start)]
    fn js_start(
        id: &str,
        site: &str,
        key: &str,
        embedder: &str,
        token: &str,
        words: &Array,
        on: &Closure<dyn Fn(String, String, String, JsValue)>,
    );
    /// Stop following the conversation.
    pub(crate) fn stop();
    /// Ask the server to stop the running turn (`POST …/stop`); when it stopped none,
    /// abort `request` instead.
    pub(crate) fn halt(request: &web_sys::AbortController);
    /// Whether the panel's own post waits in line (sent, its turn not started yet).
    pub(crate) fn queued() -> bool;
    /// The panel sends `text` and will read its turn.
    pub(crate) fn sending(text: &str);
    /// The panel read event `id` of the turn it reads (the first one is kept).
    pub(crate) fn turn(id: f64);
    /// The turn the panel read is over.
    pub(crate) fn done();
    /// After a reload: the event before the turn the panel was reading, or -2 (none).
    pub(crate) fn resumed() -> f64;
    /// A reader of the turn's events after `after` (-1: all), or null.
    pub(crate) fn reopen(after: f64, signal: Option<&AbortSignal>) -> Promise;
}

/// Follow conversation `id` live for site `site` with the API `headers`; `on(kind, text,
/// author, raw)` gets what arrives (see `js/live.js`).
pub(crate) fn start(
    id: &str,
    site: &str,
    headers: [&str; 3],
    words: [&str; 2],
    on: impl Fn(String, String, String, JsValue) + 'static,
) {
    let array = Array::new();
    for word in words {
        array.push(&JsValue::from_str(word));
    }
    let on = Closure::<dyn Fn(String, String, String, JsValue)>::new(on);
    let [key, embedder, token] = headers;
    js_start(id, site, key, embedder, token, &array, &on);
    on.forget();
}
