//! The site's starter prompts, offered until the visitor writes.

use leptos::html::Textarea;
use leptos::prelude::*;

use crate::chat::{Chat, Status};
use crate::composer::focus_input;

/// Buttons that send a suggested first question.
#[component]
pub(crate) fn Starters(
    /// The chat (strings, send).
    chat: Chat,
    /// The prompts, from the site's config.
    prompts: Vec<String>,
    /// The message box, which gets focus after a prompt is sent.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let hidden =
        move || chat.status.get() != Status::Ready || chat.busy.get() || chat.visitor_has_written();
    let empty = prompts.is_empty();
    let buttons = prompts
        .into_iter()
        .map(|prompt| {
            let text = prompt.clone();
            view! {
                <button
                    type="button"
                    class="cw-starter"
                    on:click=move |_| {
                        chat.send(&text);
                        focus_input(input);
                    }
                >
                    {prompt}
                </button>
            }
        })
        .collect_view();
    view! {
        <div
            class="cw-starters"
            role="group"
            aria-label=chat.strings.starters_label
            hidden=move || empty || hidden()
        >
            {buttons}
        </div>
    }
}
