//! What this isolate last read of each conversation's turn context, so the next turn on
//! it can start its answer without a D1 round trip first. Only a hint: the turn's write
//! reads the context again in the same batch and the engine compares (see
//! `concierge_core::engine`'s streamed turn), so an entry that is out of date — another
//! isolate's turn, a change made here — costs a second answer, never a wrong one.
//!
//! Every write through the store forgets its conversation; a conversation's creation reads
//! it again (off the visitor's path). A turn needs no read at its end: the visitor's
//! message's insert [`stage`]s the context it leaves (the one read or checked with it, and
//! the message), and the reply's insert — when nothing else was written in between — adds
//! the reply and remembers the result ([`take_staged`]). The reply's batch reads only
//! whether retrieval could find anything, which indexing changes behind the turn's back.
//!
//! Bounded: at most [`MAX_ENTRIES`] conversations (the least recently used leaves
//! first), and a context over [`MAX_BYTES`] of text is not kept.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use concierge_core::boundary::TurnContext;
use concierge_core::conversation::{Conversation, Scope, StoredMessage};

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
    /// Contexts with a turn's visitor's message, until its reply (see the module docs).
    static STAGED: RefCell<HashMap<String, (usize, TurnContext)>> = RefCell::new(HashMap::new());
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

/// Forgets `scope` (it changed, or is gone), staged context included.
pub(crate) fn forget(scope: Scope<'_>) {
    let key = key(scope);
    TURNS.with(|turns| turns.borrow_mut().remove(&key));
    STAGED.with(|staged| staged.borrow_mut().remove(&key));
}

/// What is remembered of `scope` (its window and context), taken out.
pub(crate) fn take(scope: Scope<'_>) -> Option<(usize, TurnContext)> {
    TURNS
        .with(|turns| turns.borrow_mut().remove(&key(scope)))
        .map(|entry| (entry.window, entry.context))
}

/// Stages `context` — the conversation as the store holds it just after a turn's visitor's
/// message, its last `window` messages — for that turn's reply (see the module docs).
pub(crate) fn stage(scope: Scope<'_>, window: usize, context: TurnContext) {
    forget(scope);
    STAGED.with(|staged| {
        let mut staged = staged.borrow_mut();
        // Bounded as the remembered contexts; a turn whose context is dropped reads again.
        if staged.len() >= MAX_ENTRIES {
            staged.clear();
        }
        staged.insert(key(scope), (window, context));
    });
}

/// The context staged for `scope`'s reply, taken out: `None` when something else was
/// written to the conversation since its visitor's message.
pub(crate) fn take_staged(scope: Scope<'_>) -> Option<(usize, TurnContext)> {
    STAGED.with(|staged| staged.borrow_mut().remove(&key(scope)))
}

/// `context` with `message`, stored under `seq`, as its newest message, keeping the last
/// `window` messages (as the store reads them).
pub(crate) fn appended(
    mut context: TurnContext,
    message: &StoredMessage,
    seq: u64,
    window: usize,
) -> TurnContext {
    context.history.push(StoredMessage {
        seq,
        ..message.clone()
    });
    let excess = context.history.len().saturating_sub(window);
    context.history.drain(..excess);
    context
}
