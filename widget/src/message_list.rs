//! The conversation: an `aria-live` log of messages that keeps the newest in view. The
//! stylesheet does that (`flex-direction: column-reverse` anchors the scroll position to
//! the bottom while an answer grows), so no script runs per token.
//!
//! The log is `aria-busy` while an answer streams, so screen readers announce the
//! finished answer once instead of every token.

use leptos::html::Textarea;
use leptos::prelude::*;

use crate::chat::{Chat, Status};
use crate::message::Message;

/// The message log, with the loading and start-failure notices.
#[component]
pub(crate) fn MessageList(
    /// The chat (entries, status, busy).
    chat: Chat,
    /// The message box, which gets focus after a retry.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let strings = chat.strings;
    let status = move || chat.status.get();
    view! {
        <div
            class="cw-log"
            role="log"
            aria-live="polite"
            aria-label=strings.messages_label
            aria-busy=move || if chat.busy.get() { "true" } else { "false" }
            tabindex="0"
        >
            <div class="cw-stack">
                <For
                    each=move || chat.entries.get()
                    key=|entry| entry.key
                    children=move |entry| view! { <Message chat=chat entry=entry input=input /> }
                />
                <p class="cw-note" hidden=move || status() != Status::Loading>{strings.loading}</p>
                <div class="cw-failed" role="alert" hidden=move || status() != Status::Failed>
                    <p class="cw-error">{strings.error_start}</p>
                    <button type="button" class="cw-retry" on:click=move |_| chat.start(false)>
                        {strings.retry}
                    </button>
                </div>
            </div>
        </div>
    }
}
