//! One message: the visitor's as plain text, the assistant's as safe markdown, with the
//! typing indicator while it waits, and the retry control when it failed.

use leptos::html::{Div, Textarea};
use leptos::prelude::*;

use crate::api::Role;
use crate::chat::{Chat, Entry};
use crate::composer::focus_input;
use crate::dom;
use crate::i18n::Strings;
use crate::payload::Painter;
use crate::rich;
use crate::turn::{Failure, Phase, ToolState};

/// One message bubble.
#[component]
pub(crate) fn Message(
    /// The chat (strings, retry).
    chat: Chat,
    /// The message.
    entry: Entry,
    /// The message box, which gets focus after a retry.
    input: NodeRef<Textarea>,
) -> impl IntoView {
    let strings = chat.strings;
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
    let rich_box = NodeRef::<Div>::new();
    Effect::new(move |_| {
        let Some(el) = rich_box.get() else {
            return;
        };
        entry.payloads.with(|payloads| {
            let site = chat.site_origin();
            let painter = Painter {
                doc: document(),
                lang: chat.lang,
                strings,
                site: site.as_deref(),
            };
            painter.paint(&el, payloads);
        });
    });
    // Chips carry their question; a tap sends it.
    let chip = move |ev: leptos::ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        let question = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-q]").ok().flatten())
            .and_then(|el| el.get_attribute("data-q"));
        if let Some(question) = question
            && chat.send(&question)
        {
            focus_input(input);
        }
    };
    let who = if user { strings.you } else { strings.assistant };
    // The parts below are always in the DOM and shown or hidden by phase: cheaper (in
    // wasm size) than swapping views, and `hidden` removes them from the a11y tree too.
    let phase = move || entry.phase.get();
    let failure = move || match phase() {
        Phase::Failed(why) => failure_text(strings, why),
        _ => "",
    };
    view! {
        <div class=if user { "cw-msg cw-user" } else { "cw-msg cw-bot" } data-state=move || phase().name()>
            <span class="cw-sr">{who} ": "</span>
            <div class="cw-body" node_ref=body></div>
            <div class="cw-typing" hidden=move || phase() != Phase::Waiting || entry.activity.with(Option::is_some)>
                <span class="cw-sr">{strings.typing}</span>
                <i></i>
                <i></i>
                <i></i>
            </div>
            <ul class="cw-tools" hidden=move || entry.tools.with(Vec::is_empty)>
                <For
                    each=move || entry.tools.get()
                    key=|row| (row.id.clone(), row.state)
                    children=move |row| {
                        let state = match row.state {
                            ToolState::Working => 0,
                            ToolState::Done => 1,
                            ToolState::Failed => 2,
                        };
                        view! {
                            <li class="cw-tool" data-state=["working", "done", "failed"][state]>
                                {rich::tool_words(&row.name)} ": " {strings.tool_states[state]}
                            </li>
                        }
                    }
                />
            </ul>
            <div
                class="cw-activity"
                role="status"
                aria-live="polite"
                hidden=move || phase() != Phase::Waiting || entry.activity.with(Option::is_none)
            >
                <p>{move || entry.activity.get().map(|a| a.0)}</p>
                {move || {
                    entry
                        .activity
                        .get()
                        .and_then(|a| a.1)
                        .map(|pct| view! { <progress max="100" value=pct aria-label=entry.activity.get().map(|a| a.0)></progress> })
                }}
            </div>
            <div class="cw-rich" node_ref=rich_box on:click=chip></div>
            <div class="cw-failed" hidden=move || !matches!(phase(), Phase::Failed(_))>
                <p class="cw-error">{failure}</p>
                <button
                    type="button"
                    class="cw-retry"
                    hidden=move || !chat.is_last(&entry)
                    on:click=move |_| {
                        chat.retry();
                        focus_input(input);
                    }
                >
                    {strings.retry}
                </button>
            </div>
            <p class="cw-note" hidden=move || phase() != Phase::Stopped>{strings.stopped}</p>
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
