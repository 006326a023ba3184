//! What this isolate last read of each conversation's turn context, so the next turn on
//! it can start its answer without a D1 round trip first. Only a hint: the turn's write
//! reads the context again in the same batch and the engine compares (see
//! `concierge_core::engine`'s streamed turn), so an entry that is out of date — another
//! isolate's turn, a change made here — costs a second answer, never a wrong one.
//!
//! Every write through the store forgets its conversation; a streamed turn's end and a
//! conversation's creation read it again (off the visitor's path).
//!
//! Bounded: at most [`MAX_ENTRIES`] conversations (the least recently used leaves
//! first), and a context over [`MAX_BYTES`] of text is not kept.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use concierge_core::boundary::TurnContext;
use concierge_core::conversation::{Conversation, Scope};

/// Conversations remembered at most.
const MAX_ENTRIES: usize = 256;
/// Contexts with more text than this (message contents) are not remembered.
const MAX_BYTES: usize = 64 * 1024;

struct Entry {
    window: usize,
    context: TurnContext,
    /// When it was last used, on [`CLOCK`]'s scale.
    used: u64,
}

thread_local! {
    static TURNS: RefCell<HashMap<String, Entry>> = RefCell::new(HashMap::new());
    static CLOCK: Cell<u64> = const { Cell::new(0) };
}

fn key(scope: Scope<'_>) -> String {
    format!("{}\n{}", scope.site_id, scope.conversation_id)
}

fn tick() -> u64 {
    CLOCK.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

/// The context last read for `scope` with `window`, if remembered.
pub(crate) fn recall(scope: Scope<'_>, window: usize) -> Option<TurnContext> {
    let now = tick();
    TURNS.with(|turns| {
        let mut turns = turns.borrow_mut();
        let entry = turns.get_mut(&key(scope))?;
        entry.used = now;
        (entry.window == window).then(|| entry.context.clone())
    })
}

/// The conversation of `scope`, if remembered (its site and identity never change).
pub(crate) fn conversation(scope: Scope<'_>) -> Option<Conversation> {
    TURNS.with(|turns| {
        let turns = turns.borrow();
        turns
            .get(&key(scope))
            .map(|e| e.context.conversation.clone())
    })
}

/// Remembers `context` as read just now for `scope` with `window`.
pub(crate) fn remember(scope: Scope<'_>, window: usize, context: &TurnContext) {
    let text: usize = context.history.iter().map(|m| m.content.len()).sum();
    if text > MAX_BYTES {
        forget(scope);
        return;
    }
    let used = tick();
    TURNS.with(|turns| {
        let mut turns = turns.borrow_mut();
        let key = key(scope);
        if turns.len() >= MAX_ENTRIES && !turns.contains_key(&key) {
            let oldest = turns
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                turns.remove(&oldest);
            }
        }
        turns.insert(
            key,
            Entry {
                window,
                context: context.clone(),
                used,
            },
        );
    });
}

/// Forgets `scope` (it changed, or is gone).
pub(crate) fn forget(scope: Scope<'_>) {
    TURNS.with(|turns| turns.borrow_mut().remove(&key(scope)));
}
