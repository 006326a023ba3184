//! # concierge-widget
//!
//! The chat panel visitors see: a Leptos client-side-rendered app, compiled to wasm and
//! served by the Worker at `/chat?site_key=pk_…` (`www/chat.html`, framable only by the site's
//! allowed origins), inside the iframe that the plain-JS loader (`www/embed.js`, built from
//! `widget/embed/embed.js`) puts on the merchant's page. Opened anywhere but in a frame, it
//! says so and does not run.
//!
//! ```html
//! <script src="https://<worker>/embed.js" data-site-key="pk_…" async></script>
//! ```
//!
//! The panel greets on first open, streams answers token by token (`fetch` +
//! `ReadableStream` + an SSE decoder — `EventSource` cannot POST), renders safe markdown,
//! keeps the conversation across reloads, and offers stop, retry and reset. Rich turns show
//! tool calls, a plan's progress and the turn's payloads (lists, tables, charts drawn as
//! inline SVG, sources, evidence, question chips), live and again from history; each
//! answer can be voted on (thumbs, optional comment) and copied. It is usable with the
//! keyboard alone and announces replies to screen readers.
//!
//! ## Layout
//! Pure modules, built and tested on the host (`cargo test -p concierge-widget`):
//! - [`theme`] — the merchant's colour, adjusted for WCAG AA;
//! - [`i18n`] — Vietnamese and English strings;
//! - [`options`] — what the loader passes in the URL fragment;
//! - [`turn`] — one streamed answer's state machine;
//! - [`stored`] — how a stored message looks (history and the live stream).
//!
//! The SSE framing is decoded by the core's push decoder
//! (`concierge_core::stream::sse::SseDecoder`); the panel reads the events' JSON with the
//! browser's `JSON` (see `api`) rather than the core's serde-based native decoder, to keep
//! serde_json out of the download.
//!
//! Browser modules (wasm32 only): `api` (fetch), `host` (messages to the loader), `chat`
//! (the conversation controller, a `use_chat` hook), `rich` (the bridge to `js/rich.js`,
//! which renders the answers' safe markdown and draws rich turns, feedback and copy in
//! plain JS to keep the download small) and one file per component: `app`, `header`,
//! `message_list`, `message`, `starters`, `composer`. The stylesheet is
//! `style/widget.css` (minified into `www/widget/widget.css` by the build).

// The pure modules serve the wasm app; on the host only their tests use them.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

pub(crate) mod i18n;
pub(crate) mod options;
pub(crate) mod stored;
pub(crate) mod theme;
pub(crate) mod turn;

#[cfg(target_arch = "wasm32")]
mod api;
#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod chat;
#[cfg(target_arch = "wasm32")]
mod composer;
#[cfg(target_arch = "wasm32")]
mod flow;
#[cfg(target_arch = "wasm32")]
mod header;
#[cfg(target_arch = "wasm32")]
mod host;
#[cfg(target_arch = "wasm32")]
mod live;
#[cfg(target_arch = "wasm32")]
mod message;
#[cfg(target_arch = "wasm32")]
mod message_list;
#[cfg(target_arch = "wasm32")]
mod rich;
#[cfg(target_arch = "wasm32")]
mod starters;

/// Read the loader's options and the page framing the panel (top-level, the panel only
/// says it works on the shop's website), fetch the site's widget config, then mount the
/// panel into `#concierge-root` (or the body when absent). Waiting for the config (one
/// small same-origin request) lets every label render in its final language, statically.
///
/// Named `boot` rather than `main`, which clashes with wasm-bindgen-test's runner.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn boot() {
    use leptos::prelude::*;
    use wasm_bindgen::JsCast;

    fn mount_root<V: IntoView + 'static>(view: impl FnOnce() -> V + 'static) {
        let root = document()
            .get_element_by_id("concierge-root")
            .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
        match root {
            Some(root) => {
                root.set_text_content(None);
                leptos::mount::mount_to(root, view).forget();
            }
            None => leptos::mount::mount_to_body(view),
        }
    }

    let mut options = app::read_options();
    options.parent_origin = host::embedder_origin(options.parent_origin.take());
    if options.parent_origin.is_none() {
        let text = options.lang.unwrap_or_default().strings().not_embedded;
        mount_root(move || view! { <p class="cw-refused" role="alert">{text}</p> });
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        let config = api::Api::new(&options).config().await.unwrap_or_default();
        mount_root(move || view! { <app::App options=options config=config /> });
    });
}
