//! The site's starter prompts, offered until the visitor writes.

use leptos::html::Textarea;
use leptos::prelude::*;

use crate::chat::{Chat, Status};
use crate::composer::focus_input;

/// Buttons that send a suggested first question.
#[component]
pub(crate) fn Starters(
    /// The chat (starter prompts, send).
    chat: Chat,
    /// The message box, which gets focus after a prompt is sent.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let visible = move || {
        chat.status.get() == Status::Ready
            && !chat.busy.get()
            && !chat.visitor_has_written()
            && chat.starters.with(|s| !s.is_empty())
    };
    move || {
        visible().then(|| {
            let buttons = chat
                .starters
                .get()
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
                    aria-label=move || chat.lang.get().strings().starters_label
                >
                    {buttons}
                </div>
            }
        })
    }
}
