//! One message: the visitor's and a notice as plain text, the assistant's as safe markdown (drawn by
//! `js/rich.js`, without rental's role label), with the
//! typing indicator while it waits, the retry control when it failed, and regenerate on
//! the last finished answer (drawn as an icon on the row of the answer's actions; its text
//! stays its name for screen readers, `style/widget.css`). A person's reply is marked "Nhân viên" and their name and
//! looks apart (`cw-human`); a notice about the conversation (the handoff's state) is a
//! centred line (`cw-notice`, not a `cw-msg`).

use leptos::html::{Div, Textarea};
use leptos::prelude::*;

use crate::api::Role;
use crate::chat::{Chat, Entry, Look};
use crate::composer::focus_input;
use crate::i18n::Strings;
use crate::rich;
use crate::turn::{Failure, Phase};

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
    let plain = plain_text(entry.role, entry.look);
    let body = NodeRef::<Div>::new();
    Effect::new(move |_| {
        let Some(el) = body.get() else {
            return;
        };
        entry.text.with(|text| {
            if plain {
                el.set_text_content(Some(text));
            } else {
                rich::markdown(&el, text);
            }
        });
    });
    // Tool rows and the progress bar (`work`), payloads (`rich_box`): drawn by `rich`.
    // The stage line (`activity`) is shown while `entry.activity` is set and written by
    // `rich` in the panel's words.
    let work = NodeRef::<Div>::new();
    let rich_box = NodeRef::<Div>::new();
    let activity = NodeRef::<leptos::html::P>::new();
    Effect::new(move |_| {
        if let (Some(work), Some(rich_box), Some(activity)) =
            (work.get(), rich_box.get(), activity.get())
        {
            rich::mount(entry.key, &work, &rich_box, &activity);
        }
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
    let (class, who) = match (entry.look, user) {
        (Look::Notice, _) => ("cw-notice", String::new()),
        (Look::Human, _) => (
            "cw-msg cw-bot cw-human",
            format!(
                "{} · {}",
                strings.person,
                entry.activity.get_untracked().unwrap_or_default()
            ),
        ),
        (_, true) => ("cw-msg cw-user", format!("{}: ", strings.you)),
        _ => ("cw-msg cw-bot", format!("{}: ", strings.assistant)),
    };
    let human = entry.look == Look::Human;
    // The parts below are always in the DOM and shown or hidden by phase: cheaper (in
    // wasm size) than swapping views, and `hidden` removes them from the a11y tree too.
    let phase = move || entry.phase.get();
    let failure = move || match phase() {
        Phase::Failed(why) => failure_text(strings, why),
        _ => "",
    };
    view! {
        <div class=class data-state=move || phase().name()>
            <span class=if human { "cw-who" } else { "cw-sr" }>{who}</span>
            <div class="cw-work" node_ref=work></div>
            <div class="cw-body" node_ref=body></div>
            <div class="cw-typing" hidden=move || phase() != Phase::Waiting || entry.activity.with(Option::is_some)>
                <span class="cw-sr">{strings.typing}</span>
                <i></i>
                <i></i>
                <i></i>
            </div>
            <p
                class="cw-activity"
                role="status"
                aria-live="polite"
                hidden=move || phase() != Phase::Waiting || entry.activity.with(Option::is_none)
                node_ref=activity
            ></p>
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
            <button
                type="button"
                class="cw-regen"
                hidden=move || user || !chat.can_regenerate(&entry)
                on:click=move |_| chat.regenerate()
            >
                {strings.regenerate}
            </button>
        </div>
    }
}

/// Whether a message is drawn as plain text rather than markdown: the visitor's, and a
/// notice, whose text holds a person's name as the console typed it (`**Lan**` or a link
/// must show as typed, never as formatting).
pub(crate) fn plain_text(role: Role, look: Look) -> bool {
    role == Role::User || look == Look::Notice
}

fn failure_text(strings: &Strings, why: Failure) -> &'static str {
    match why {
        Failure::Failed => strings.error_failed,
        Failure::Network => strings.error_network,
        Failure::RateLimited => strings.error_rate_limited,
        Failure::Interrupted => strings.error_interrupted,
    }
}
