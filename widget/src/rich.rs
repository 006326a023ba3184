//! Rich turns: the answer's safe markdown, tool rows, a plan's progress bar, the payloads
//! (lists, tables, charts, sources, evidence, question chips), and feedback and copy on
//! each answer, drawn by `js/rich.js` from the answer's text and events (or its stored
//! message), in the panel's language. Plain JS keeps the widget in its download budget;
//! what it draws (and the safety rules: text only, safe links, caps) is specified there and
//! tested in Node (`tests/browser/markdown.mjs`) and Chromium
//! (`tests/tests/e2e/browser_rich.rs`, `browser_ux_render.rs`).

use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

use crate::i18n::{Lang, Strings};

#[wasm_bindgen(module = "/js/rich.js")]
extern "C" {
    #[wasm_bindgen(js_name = setup)]
    fn js_setup(words: &Array, lang: &str, origin: &str);
    /// Message `key` draws into `work` (tool rows, progress), `rich` (payloads,
    /// feedback and copy) and `activity` (a plan's stage, in the panel's words).
    pub(crate) fn mount(key: u32, work: &Element, rich: &Element, activity: &Element);
    /// The conversation, and the API headers feedback is sent with.
    pub(crate) fn conversation(id: &str, key: &str, embedder: &str, token: &str);
    /// A stored assistant message from history (`{id, kind, payloads, feedback}`).
    pub(crate) fn stored(key: u32, message: &JsValue);
    /// An event of message `key`'s answer: `tool_start`, `tool_end`, `progress`, `payload`,
    /// `completed` (with its JSON data), `text` (the answer's text began), `end` (the
    /// answer ended without completing) or `reset` (a retry starts over).
    pub(crate) fn event(key: u32, name: &str, data: &str);
    /// Replace `target`'s children with the assistant's `text` as safe markdown (GFM tables
    /// included), without rental's role label.
    pub(crate) fn markdown(target: &Element, text: &str);
}

/// The panel's words, language and the embedding page's origin (site-relative links).
pub(crate) fn setup(strings: &Strings, lang: Lang, origin: Option<&str>) {
    let [a, b, c] = strings.showing;
    let [working, done, failed] = strings.tool_states;
    let words = [
        working,
        done,
        failed,
        strings.table,
        a,
        b,
        c,
        strings.sources,
        strings.evidence,
        strings.follow_ups,
        strings.control,
    ];
    let presentation = [
        strings.currency,
        strings.charts[0],
        strings.charts[1],
        strings.charts[2],
        strings.charts[3],
        strings.vocabulary,
        strings.tool,
    ];
    let array = Array::new();
    for word in words
        .iter()
        .chain(&strings.feedback)
        .chain(&strings.stages)
        .chain(&presentation)
    {
        array.push(&JsValue::from_str(word));
    }
    js_setup(&array, lang.code(), origin.unwrap_or_default());
}
