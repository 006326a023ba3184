//! Rich turns: tool rows, a plan's progress bar and the payloads (lists, tables, charts,
//! sources, evidence, question chips), drawn by `js/rich.js` from a turn's state. The
//! drawing is plain JS to keep the widget in its download budget; what it draws (and the
//! safety rules: text only, safe links, caps) is specified there and tested in Chromium
//! (`tests/tests/e2e/browser_rich.rs`).

use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

use crate::i18n::{Lang, Strings};
use crate::turn::Turn;

#[wasm_bindgen(module = "/js/rich.js")]
extern "C" {
    #[wasm_bindgen(js_name = setup)]
    fn js_setup(words: &Array, lang: &str, origin: &str);
    /// Payloads are JSON texts (streamed) or objects (history).
    #[wasm_bindgen(js_name = update)]
    fn js_update(key: u32, tools: &Array, percent: i32, message: &str, payloads: &Array);
    /// Message `key` draws into `work` (tool rows, progress) and `rich` (payloads).
    pub(crate) fn mount(key: u32, work: &Element, rich: &Element);
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
    js_setup(
        &strings_array(&words),
        lang.code(),
        origin.unwrap_or_default(),
    );
}

/// Show `turn`'s tool rows, progress and payloads in message `key`.
pub(crate) fn show(key: u32, turn: &Turn) {
    let tools = Array::new();
    for row in &turn.tools {
        tools.push(&Array::of2(
            &JsValue::from_str(&row.name),
            &JsValue::from(row.state as u32),
        ));
    }
    let (message, percent) = match &turn.activity {
        Some((message, Some(percent))) => (message.as_str(), i32::from(*percent)),
        _ => ("", -1),
    };
    js_update(
        key,
        &tools,
        percent,
        message,
        &strings_array(&turn.payloads),
    );
}

/// Show a stored reply's payloads (`{kind, data}` objects) in message `key`.
pub(crate) fn show_stored(key: u32, payloads: &Array) {
    js_update(key, &Array::new(), -1, "", payloads);
}

fn strings_array<S: AsRef<str>>(items: &[S]) -> Array {
    items
        .iter()
        .map(|s| JsValue::from_str(s.as_ref()))
        .collect()
}
