//! # concierge-widget
//!
//! The chat panel visitors see: a Leptos client-side-rendered app, compiled to wasm
//! and served by the Worker at `/chat.html`, inside an iframe that the plain-JS loader
//! (`www/embed.js`) puts on the merchant's page.

use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;

mod app;

/// Mount the widget into `#concierge-root` (or the body when absent).
///
/// Named `boot` rather than `main`, which clashes with wasm-bindgen-test's runner.
#[wasm_bindgen(start)]
pub fn boot() {
    let root = document()
        .get_element_by_id("concierge-root")
        .and_then(|el| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el).ok());
    match root {
        Some(root) => leptos::mount::mount_to(root, app::App).forget(),
        None => leptos::mount::mount_to_body(app::App),
    }
}
