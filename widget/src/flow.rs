//! The panel's conveniences around the conversation, drawn by `js/flow.js`, which watches
//! the panel's DOM (plain JS keeps the widget in its download budget): the colour scheme
//! (`data-theme`), the newest message kept in view with a "new messages" pill, the length
//! counter, earlier conversations to reopen, and "talk to a person" when the site turns
//! handoff on. What they do is specified in `js/flow.js` and tested in Chromium
//! (`tests/tests/e2e/browser_ux_flow.rs`).

use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::i18n::{Lang, Strings};

#[wasm_bindgen(module = "/js/flow.js")]
extern "C" {
    #[wasm_bindgen(js_name = setup)]
    fn js_setup(words: &Array, lang: &str, site_key: &str, handoff: bool);
}

/// Start `flow.js` for the panel being mounted (it waits for the DOM): the panel's words,
/// the site's key and whether the site turns handoff on.
pub(crate) fn setup(strings: &Strings, lang: Lang, site_key: &str, handoff: bool) {
    let array = Array::new();
    for word in strings.flow {
        array.push(&JsValue::from_str(word));
    }
    js_setup(&array, lang.code(), site_key, handoff);
}
