//! One message: the visitor's as plain text, the assistant's as safe markdown, with the
//! typing indicator while it waits, and the retry control when it failed.

use leptos::html::{Div, Textarea};
use leptos::prelude::*;

use crate::api::Role;
use crate::chat::{Chat, Entry};
use crate::composer::focus_input;
use crate::dom;
use crate::i18n::Strings;
use crate::turn::{Failure, Phase};

/// One message bubble.
#[component]
pub(crate) fn Message(
    /// The chat (language, retry).
    chat: Chat,
    /// The message.
    entry: Entry,
    /// The message box, which gets focus after a retry.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let strings = move || chat.lang.get().strings();
    let user = entry.role == Role::User;
    let body = NodeRef::<Div>::new();
    Effect::new(move |_| {
        let Some(el) = body.get() else {
            return;
        };
        entry.text.with(|text| {
            if user {
                el.set_text_content(Some(text));
            } else {
                dom::render_markdown(&el, text);
            }
        });
    });
    let who = move || {
        if user {
            strings().you
        } else {
            strings().assistant
        }
    };
    let status = move || match entry.phase.get() {
        Phase::Waiting => Some(match entry.activity.get() {
            Some(what) => view! { <p class="cw-activity">{what}</p> }.into_any(),
            None => view! {
                <div class="cw-typing">
                    <span class="cw-sr">{strings().typing}</span>
                    <i></i><i></i><i></i>
                </div>
            }
            .into_any(),
        }),
        Phase::Failed(why) => Some(
            view! {
                <div class="cw-failed">
                    <p class="cw-error">{failure_text(strings(), why)}</p>
                    {move || chat.is_last(&entry).then(|| view! {
                        <button
                            type="button"
                            class="cw-retry"
                            on:click=move |_| {
                                chat.retry();
                                focus_input(input);
                            }
                        >
                            {strings().retry}
                        </button>
                    })}
                </div>
            }
            .into_any(),
        ),
        Phase::Stopped => Some(view! { <p class="cw-note">{strings().stopped}</p> }.into_any()),
        Phase::Streaming | Phase::Done => None,
    };
    view! {
        <div
            class=if user { "cw-msg cw-user" } else { "cw-msg cw-bot" }
            data-state=move || entry.phase.get().name()
        >
            <span class="cw-sr">{who} ": "</span>
            <div class="cw-body" node_ref=body></div>
            {status}
        </div>
    }
}

fn failure_text(strings: &Strings, why: Failure) -> &'static str {
    match why {
        Failure::Failed => strings.error_failed,
        Failure::Network => strings.error_network,
        Failure::RateLimited => strings.error_rate_limited,
        Failure::Interrupted => strings.error_interrupted,
    }
}
