//! What the object persists ([`Saved`]: its names, its reserved event ids, the current
//! turn's record) and how an instance starts from it ([`Inner::load`]: a turn still
//! `running` whose reply is not stored died with the last instance and is recorded as
//! failed); the simulated reset
//! ([`Inner::reset`]) drops what is in memory and starts again from there.

use std::rc::Rc;

use wasm_bindgen::JsValue;

use super::log::{self, Log, Persist, Sink, TurnRecord};
use super::{Inner, Names};

/// The storage key of the object's persisted state ([`Saved`], in the KV API of its SQLite
/// storage): read when an instance starts (with the handoff's record), written when a turn
/// starts and when it ends other than completed.
const KEY_STATE: &str = "state";
/// The storage key of the deleted conversation's mark: all its object keeps of it.
const KEY_DELETED: &str = "deleted";

/// What the object persists.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Saved {
    #[serde(default)]
    names: Option<Names>,
    /// Event ids below this may have been used.
    #[serde(default)]
    reserved: u64,
    /// The current (or last) turn.
    #[serde(default)]
    turn: Option<TurnRecord>,
}

impl Inner {
    /// Reads what the last instance left: its names, its reserved ids, and its last turn —
    /// still `running`, it died with that instance: recorded as failed.
    /// The handoff's record is read in the same storage read, so a turn checks it from
    /// memory.
    pub(super) async fn load(self: Rc<Self>) {
        let keys = vec![KEY_STATE, super::handoff::KEY_HANDOFF, KEY_DELETED];
        let stored = self.state.storage().get_multiple(keys).await.ok();
        let text = |key: &str| stored.as_ref().and_then(|m| m.get(&key.into()).as_string());
        if text(KEY_DELETED).is_some() {
            self.deleted.set(true);
            return;
        }
        if stored.is_some() {
            let handoff = text(super::handoff::KEY_HANDOFF)
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default();
            *self.handoff.borrow_mut() = Some(handoff);
        }
        let saved: Saved = text(KEY_STATE)
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let Saved {
            names,
            reserved,
            turn: record,
        } = saved;
        self.names_saved.set(names.is_some());
        {
            let mut log = self.log.borrow_mut();
            log.next_id = reserved;
            log.reserved = reserved;
        }
        *self.names.borrow_mut() = names.clone();
        if let (Some(names), Some(record)) = (names, record)
            && record.state == "running"
        {
            self.recover(&names, record).await;
        }
    }

    /// A turn the last instance left `running`: completed if its reply is stored (a
    /// completed turn's end is not saved: its reply says it), else it died with that
    /// instance: its visitor's message is marked in the record, and one terminal `failed`
    /// is recorded for whoever resumes.
    async fn recover(&self, names: &Names, record: TurnRecord) {
        use concierge_core::boundary::ConversationStore;
        use concierge_core::conversation::Scope;
        let scope = Scope::new(&names.site_id, &names.conversation_id);
        // The record first (a turn of an instance from before it existed: imported).
        let _ = crate::bindings::record::open_for(&self.env, scope, false).await;
        let store = crate::bindings::d1_store::D1Store::new(&self.env);
        if let Ok(store) = &store
            && store
                .reply_stored(scope, &record.message_id)
                .await
                .unwrap_or(false)
        {
            return;
        }
        let marked = match store {
            Ok(store) => store
                .mark_answer_failed(
                    scope,
                    &record.user_message_id,
                    &record.message_id,
                    log::INTERRUPTED_CODE,
                )
                .await
                .is_ok(),
            Err(_) => false,
        };
        crate::bindings::d1_store::remembered::forget(scope);
        let line = serde_json::json!({
            "level": "warn", "msg": "turn interrupted", "site": names.site_id,
            "conversation_id": names.conversation_id, "message_id": record.message_id,
            "marked": marked,
        });
        worker::console_warn!("{line}");
        let persist = {
            let mut log = self.log.borrow_mut();
            let mut record =
                log.begin_turn(&record.user_message_id, &record.message_id, Vec::new());
            record.state = "done".into();
            let persist = log.push_turn(log::interrupted(), crate::runtime::now_ms());
            if let Some(turn) = log.turn.as_mut() {
                turn.record = record;
            }
            persist
        };
        self.persist(persist);
        self.save_turn();
    }

    /// Writes what a log change asks for (a new block of ids).
    pub(super) fn persist(&self, persist: Persist) {
        if persist.reserved.is_some() {
            self.save();
        }
    }

    /// Persists the object's state: its names, its reserved ids, the current turn's record
    /// (not waited on by anyone: `allowUnconfirmed`).
    pub(super) fn save(&self) {
        let saved = {
            let log = self.log.borrow();
            Saved {
                names: self.names.borrow().clone(),
                reserved: log.reserved,
                turn: log.turn.as_ref().map(|t| t.record.clone()),
            }
        };
        self.names_saved.set(saved.names.is_some());
        if let Ok(text) = serde_json::to_string(&saved) {
            self.put(KEY_STATE, &text);
        }
    }

    /// Persists the current turn's record (with the rest of the state).
    pub(super) fn save_turn(&self) {
        self.save();
    }

    /// `storage.put(key, value, {allowUnconfirmed: true})`: outgoing messages (the turn's
    /// chunks, its model call) do not wait for the write to be confirmed.
    fn put(&self, key: &str, value: &str) {
        let storage = self.state.storage();
        let raw: &JsValue = storage.as_raw().as_ref();
        let put = js_sys::Reflect::get(raw, &"put".into())
            .ok()
            .and_then(|f| wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(f).ok());
        if let Some(put) = put {
            let options = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&options, &"allowUnconfirmed".into(), &true.into());
            let _ = put.call3(raw, &key.into(), &value.into(), &options);
        }
    }

    /// `POST https://object/forget`: the conversation was deleted. The object forgets it —
    /// the running turn stops, the live streams end with `closed` `conversation_deleted`,
    /// its memory (log, handoff, this isolate's remembered context) and its storage
    /// (`deleteAll`, its alarm) are cleared — and keeps only a mark that it was deleted, so
    /// every later request is 404 (as for an unknown conversation) in any isolate.
    pub(super) async fn forget(
        self: Rc<Self>,
        names: &Names,
    ) -> Result<(), crate::error::ApiError> {
        self.deleted.set(true);
        if let Some(running) = self.running.borrow_mut().take() {
            running.abort();
        }
        self.stopper.borrow_mut().take();
        self.close_watchers(super::streams::Closing::ConversationDeleted);
        let followers: Vec<Sink> = {
            let mut log = self.log.borrow_mut();
            let followers = log
                .turn
                .as_mut()
                .map(|t| t.followers.drain(..).collect())
                .unwrap_or_default();
            *log = Log::default();
            followers
        };
        // Broken, not ended: the Worker ends each with one terminal event (`/terminal`).
        for follower in &followers {
            follower.abort();
        }
        *self.handoff.borrow_mut() = None;
        let scope =
            concierge_core::conversation::Scope::new(&names.site_id, &names.conversation_id);
        crate::bindings::d1_store::remembered::forget(scope);
        let storage = self.state.storage();
        storage.delete_alarm().await?;
        storage.delete_all().await?;
        // Its record went with it (its tables too).
        crate::bindings::record::forgotten(&self.env);
        storage.put(KEY_DELETED, "1").await?;
        Ok(())
    }

    /// `GET https://object/state` (the debug route): what the object holds — its storage's
    /// keys, whether it is marked deleted, its handoff, its live streams, whether this
    /// isolate remembers the conversation.
    pub(super) async fn debug_state(&self) -> Result<worker::Response, crate::error::ApiError> {
        let listed = self.state.storage().list().await?;
        let keys: Vec<String> = js_sys::Array::from(&wasm_bindgen::JsValue::from(listed.keys()))
            .iter()
            .filter_map(|k| k.as_string())
            .collect();
        let remembered = self.names.borrow().as_ref().is_some_and(|names| {
            let scope =
                concierge_core::conversation::Scope::new(&names.site_id, &names.conversation_id);
            crate::bindings::d1_store::remembered::conversation(scope).is_some()
        });
        let body = serde_json::json!({
            "deleted": self.deleted.get(),
            "storage_keys": keys,
            "handoff": self.handoff.borrow().clone(),
            "watchers": self.log.borrow().watchers.len(),
            "remembered": remembered,
        });
        Ok(worker::Response::from_json(&body)?)
    }

    /// `POST https://object/abort` (the debug route): the object loses everything it held
    /// in memory, as when the platform resets it — the running turn stops where it is, the
    /// streams following it and the live streams break — and starts again from its storage
    /// (the start-up a new instance runs: a turn still `running` is recorded as failed).
    ///
    /// Not `ctx.abort()`: under `wrangler dev` the object shares its isolate, and so the Rust
    /// futures executor, with the Worker; an abort cancels the executor's pending microtask
    /// and every Rust future of the isolate stalls (seen: every later request "hung").
    pub(super) async fn reset(self: Rc<Self>) {
        if let Some(running) = self.running.borrow_mut().take() {
            running.abort();
        }
        let (followers, watchers) = {
            let mut log = self.log.borrow_mut();
            let followers: Vec<Sink> = log
                .turn
                .as_mut()
                .map(|t| t.followers.drain(..).collect())
                .unwrap_or_default();
            let watchers = std::mem::take(&mut log.watchers);
            *log = Log::default();
            *self.handoff.borrow_mut() = None;
            (followers, watchers)
        };
        // Started again first, so whoever the break sends back finds the failure recorded.
        self.clone().load().await;
        for follower in &followers {
            follower.abort();
        }
        for watcher in &watchers {
            watcher.writer.abort(log::RESET);
        }
    }
}
