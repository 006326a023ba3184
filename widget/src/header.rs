//! The panel's title bar: the title, "new conversation", and (popup panels) close.

use leptos::html::Textarea;
use leptos::prelude::*;

use crate::chat::Chat;
use crate::composer::focus_input;

/// The panel's title bar.
#[component]
pub(crate) fn Header(
    /// The chat (strings, reset).
    chat: Chat,
    /// The title.
    title: String,
    /// Inline panels have no close button.
    inline: bool,
    /// The message box, which gets focus after a reset.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let strings = chat.strings;
    let reset = move |_| {
        chat.reset();
        focus_input(input);
    };
    view! {
        <header class="cw-header">
            <h1 class="cw-title">{title}</h1>
            <button
                type="button"
                class="cw-icon cw-new"
                aria-label=strings.new_conversation
                title=strings.new_conversation
                on:click=reset
            >
                <svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 5v14M5 12h14" /></svg>
            </button>
            <button
                type="button"
                class="cw-icon cw-close"
                hidden=inline
                aria-label=strings.close
                title=strings.close
                on:click=move |_| chat.host().close()
            >
                <svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 6l12 12M18 6L6 18" /></svg>
            </button>
        </header>
    }
}
