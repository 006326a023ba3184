//! The root component: applies the theme and language, creates the chat and lays out
//! the panel. Owns the panel-wide keyboard rules: Esc closes a popup panel,
//! and Tab/Shift+Tab wrap around inside it (focus stays in the open panel; the loader
//! returns it to the launcher on close). An inline panel is part of the page and traps
//! nothing.

use leptos::html::Textarea;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{HtmlElement, KeyboardEvent, UrlSearchParams};

use crate::api::SiteConfig;
use crate::chat::use_chat;
use crate::composer::{Composer, focus_input};
use crate::flow;
use crate::header::Header;
use crate::host::Command;
use crate::message_list::MessageList;
use crate::options::{KEYS, Mode, Options};
use crate::starters::Starters;
use crate::theme::Theme;

/// What Tab cycles through.
const FOCUSABLE: &str = ".cw-panel button:not([disabled]), .cw-panel textarea, .cw-panel a[href], .cw-panel [tabindex=\"0\"]";

/// The chat panel, for the loader's `options` and the site's `config`.
#[component]
pub(crate) fn App(
    /// From the URL fragment.
    options: Options,
    /// From `GET /widget/config` (the default when it failed).
    config: SiteConfig,
) -> impl IntoView {
    let inline = options.mode == Mode::Inline;
    apply_theme(&Theme::new(options.color.as_deref()));
    let (lang, title) = options.resolve(config.language, config.title.as_deref());
    if let Some(root) = document().document_element() {
        let _ = root.set_attribute("lang", lang.code());
    }
    flow::setup(lang.strings(), lang, &options.site_key, config.handoff);
    let chat = use_chat(options, lang);
    let input = NodeRef::<Textarea>::new();

    let host = chat.host();
    let _ = host.listen(move |command| match command {
        Command::Focus => focus_input(input),
        Command::Reset => chat.reset(),
        Command::Identify(token) => chat.identify(token),
    });
    if !inline {
        let _ = window_event_listener(leptos::ev::keydown, move |ev| match ev.key().as_str() {
            "Escape" => {
                ev.prevent_default();
                chat.host().close();
            }
            "Tab" => wrap_focus(&ev),
            _ => {}
        });
    }
    host.ready();

    view! {
        <div
            class="cw-panel"
            class=("cw-inline", inline)
            data-status=move || chat.status.get().name()
        >
            <Header chat=chat title=title inline=inline input=input />
            <MessageList chat=chat input=input />
            <Starters chat=chat prompts=config.starter_prompts input=input />
            <Composer chat=chat input=input />
        </div>
    }
}

/// The options in the page's URL: the public key from the query, the rest from the
/// fragment.
pub(crate) fn read_options() -> Options {
    let location = window().location();
    let params = |part: Result<String, JsValue>| {
        UrlSearchParams::new_with_str(part.unwrap_or_default().get(1..).unwrap_or_default()).ok()
    };
    let site_key = params(location.search())
        .and_then(|query| query.get("site_key"))
        .unwrap_or_default();
    let fragment = params(location.hash());
    Options::from_pairs(
        &site_key,
        KEYS.iter().filter_map(|key| {
            let value = fragment.as_ref()?.get(key)?;
            Some((*key, value))
        }),
    )
}

/// Set the theme's CSS custom properties on `<html>`.
fn apply_theme(theme: &Theme) {
    let Some(root) = document()
        .document_element()
        .and_then(|el| el.dyn_into::<HtmlElement>().ok())
    else {
        return;
    };
    let style = root.style();
    for (name, value) in theme.css_vars() {
        let _ = style.set_property(name, &value);
    }
}

/// Keep Tab inside the panel: past the last control, back to the first, and vice versa.
fn wrap_focus(ev: &KeyboardEvent) {
    let doc = document();
    let Ok(list) = doc.query_selector_all(FOCUSABLE) else {
        return;
    };
    // Visible controls only (`offsetParent` is null under a `hidden` ancestor).
    let controls: Vec<HtmlElement> = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<HtmlElement>().ok())
        .filter(|el| el.offset_parent().is_some())
        .collect();
    let (Some(first), Some(last)) = (controls.first(), controls.last()) else {
        return;
    };
    let active = doc.active_element();
    let is_active = |el: &HtmlElement| active.as_ref().is_some_and(|a| el.is_same_node(Some(a)));
    let inside = controls.iter().any(is_active);
    let target = if ev.shift_key() && (!inside || is_active(first)) {
        last
    } else if !ev.shift_key() && (!inside || is_active(last)) {
        first
    } else {
        return;
    };
    ev.prevent_default();
    let _ = target.focus();
}
