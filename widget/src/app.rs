//! The root component: reads the loader's options, applies the theme, creates the chat
//! and lays out the panel. Owns the panel-wide keyboard rules: Esc closes a popup panel,
//! and Tab/Shift+Tab wrap around inside it (focus stays in the open panel; the loader
//! returns it to the launcher on close). An inline panel is part of the page and traps
//! nothing.

use leptos::html::Textarea;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlElement, KeyboardEvent, UrlSearchParams};

use crate::chat::use_chat;
use crate::composer::{Composer, focus_input};
use crate::header::Header;
use crate::host::Command;
use crate::message_list::MessageList;
use crate::options::{KEYS, Mode, Options};
use crate::starters::Starters;
use crate::theme::Theme;

/// What Tab cycles through.
const FOCUSABLE: &str = ".cw-panel button:not([disabled]), .cw-panel textarea, .cw-panel a[href], .cw-panel [tabindex=\"0\"]";

/// The chat panel.
#[component]
pub(crate) fn App() -> impl IntoView {
    let options = read_options();
    let inline = options.mode == Mode::Inline;
    apply_theme(&Theme::new(options.color.as_deref()));
    let chat = use_chat(options);
    let input = NodeRef::<Textarea>::new();

    Effect::new(move |_| {
        let lang = chat.lang.get().code();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("lang", lang);
        }
    });
    let host = chat.host();
    let _ = host.listen(move |command| match command {
        Command::Focus => focus_input(input),
        Command::Reset => chat.reset(),
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
            <Header chat=chat inline=inline input=input />
            <MessageList chat=chat input=input />
            <Starters chat=chat input=input />
            <Composer chat=chat input=input />
        </div>
    }
}

/// The options in the URL fragment.
fn read_options() -> Options {
    let hash = window().location().hash().unwrap_or_default();
    let Ok(params) = UrlSearchParams::new_with_str(hash.trim_start_matches('#')) else {
        return Options::default();
    };
    Options::from_pairs(
        KEYS.iter()
            .filter_map(|key| params.get(key).map(|value| (*key, value))),
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
    let count = list.length();
    if count == 0 {
        return;
    }
    let (first, last) = (list.item(0), list.item(count - 1));
    let active = doc.active_element();
    let is_active = |node: &Option<web_sys::Node>| match (node, &active) {
        (Some(node), Some(active)) => node.is_same_node(Some(active)),
        _ => false,
    };
    let outside = active.is_none() || (0..count).all(|i| !is_active(&list.item(i)));
    let target = if ev.shift_key() && (is_active(&first) || outside) {
        last
    } else if !ev.shift_key() && (is_active(&last) || outside) {
        first
    } else {
        return;
    };
    if let Some(el) = target.and_then(|n| n.dyn_into::<HtmlElement>().ok()) {
        ev.prevent_default();
        let _ = el.focus();
    }
}
