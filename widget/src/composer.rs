//! The message box and its send/stop button.
//!
//! Enter sends, Shift+Enter starts a new line, and Enter while an input method is
//! composing (Vietnamese IMEs) is left to the IME. One button serves as send and, while an
//! answer streams, as stop — so keyboard focus never lands on a vanished control.

use leptos::html::Textarea;
use leptos::prelude::*;
use web_sys::KeyboardEvent;

use crate::chat::Chat;

/// Move focus to the message box.
pub(crate) fn focus_input(input: NodeRef<Textarea>) {
    if let Some(el) = input.get_untracked() {
        let _ = el.focus();
    }
}

/// The message box.
#[component]
pub(crate) fn Composer(
    /// The chat (send, stop, busy).
    chat: Chat,
    /// The textarea, shared with components that move focus to it.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let strings = chat.strings;
    let draft = RwSignal::new(String::new());
    let submit = move || {
        if chat.send(&draft.get_untracked()) {
            draft.set(String::new());
        }
    };
    let on_keydown = move |ev: KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            submit();
        }
    };
    let on_click = move |_| {
        if chat.busy.get_untracked() {
            chat.halt();
        } else {
            submit();
        }
        focus_input(input);
    };
    let label = move || {
        if chat.busy.get() {
            strings.stop
        } else {
            strings.send
        }
    };
    view! {
        <div class="cw-composer">
            <label class="cw-sr" for="cw-input">{strings.input_label}</label>
            <textarea
                id="cw-input"
                class="cw-input"
                node_ref=input
                rows="1"
                enterkeyhint="send"
                placeholder=strings.placeholder
                aria-describedby="cw-hint"
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
                on:keydown=on_keydown
            ></textarea>
            <span id="cw-hint" class="cw-sr">{strings.input_hint}</span>
            <button
                type="button"
                class="cw-send"
                class=("cw-stop", move || chat.busy.get())
                aria-label=label
                title=label
                on:click=on_click
            >
                <svg viewBox="0 0 24 24" aria-hidden="true">
                    <path class="cw-fill cw-send-icon" d="M3 20.5L21 12 3 3.5V10l12 2-12 2z" />
                    <path class="cw-fill cw-stop-icon" d="M7 7h10v10H7z" />
                </svg>
            </button>
        </div>
    }
}
