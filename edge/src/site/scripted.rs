//! Scripted turns, for tests and development only: `POST /debug/conversations/{id}/script`
//! stages a sequence of events, and that conversation's next streamed turn
//! (`POST /conversations/{id}/messages`) plays them instead of the site's template: through
//! the real engine (the visitor's message and the reply are stored, `payloads` included, so
//! history shows them), encoded by the real native encoder.
//!
//! It exists only while the var `DEBUG_ROUTES` is on (`make dev`, the tests); in
//! production (`wrangler.toml` has it off) the staging route is a 404 like any unknown
//! path and turns never look for a script. A staged script lives in the `CONFIG` KV
//! namespace under the site's cache key for the conversation for 60 s, and is played once.
//!
//! A script's steps (JSON, `{"type": …}`):
//!
//! | step | fields | emits |
//! |---|---|---|
//! | `chunk` | `text` | a text chunk (the reply's text is every chunk) |
//! | `tool_start` | `call_id`, `name`, `input`? | `tool_start` |
//! | `tool_end` | `call_id`, `name`, `ok`, `output`? | `tool_end` |
//! | `progress` | `message`, `percentage`?, `stage`? | `progress` |
//! | `payload` | `kind`, `data` (a typed payload: list, table, chart, …) | `payload`, stored with the reply |
//! | `wait` | `ms` (≤ 5000) | nothing: a pause |

use concierge_core::boundary::{CacheKey, KvCache, Timer};
use concierge_core::conversation::MessageKind;
use concierge_core::engine::{Answer, Platform, Turn, store_reply};
use concierge_core::error::Error;
use concierge_core::payload::Payload;
use concierge_core::turn::TurnEvent;
use serde::Deserialize;

/// The var that turns scripted turns (and the other debug routes) on.
pub(crate) const FLAG: &str = "DEBUG_ROUTES";

/// The longest pause a script may ask for.
pub(crate) const MAX_WAIT_MS: u64 = 5_000;

/// The most steps a script may have.
pub(crate) const MAX_STEPS: usize = 200;

/// How long a staged script waits for its turn (KV's shortest TTL).
pub(crate) const TTL_SECONDS: u32 = 60;

/// One step of a script.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Step {
    Chunk {
        text: String,
    },
    ToolStart {
        call_id: String,
        name: String,
        #[serde(default)]
        input: serde_json::Value,
    },
    ToolEnd {
        call_id: String,
        name: String,
        ok: bool,
        #[serde(default)]
        output: serde_json::Value,
    },
    Progress {
        message: String,
        #[serde(default)]
        percentage: Option<f32>,
        #[serde(default)]
        stage: Option<String>,
    },
    Payload(Payload),
    Wait {
        ms: u64,
    },
}

/// A staged script: what the staging route accepts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Script {
    pub steps: Vec<Step>,
}

impl Script {
    /// Refuses scripts too long or too slow to be tests.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            return Err("`steps` must hold 1 to 200 steps.");
        }
        if self
            .steps
            .iter()
            .any(|s| matches!(s, Step::Wait { ms } if *ms > MAX_WAIT_MS))
        {
            return Err("A `wait` is at most 5000 ms.");
        }
        Ok(())
    }
}

/// Where a conversation's staged script is kept.
pub(crate) fn key(site_id: &str, conversation_id: &str) -> CacheKey {
    CacheKey::for_site(site_id, &["debug-script", conversation_id])
}

/// The script staged for `turn`'s conversation, taken (a script plays once); `None` when
/// there is none.
pub(crate) async fn take<C: KvCache>(cache: &C, turn: &Turn<'_>) -> Option<Script> {
    let key = key(&turn.conversation.site_id, &turn.conversation.id);
    let staged = cache.get(&key).await.ok().flatten()?;
    if staged.is_empty() {
        return None;
    }
    // KV cannot delete through the cache boundary: an empty value means "played".
    let _ = cache.put(&key, "", TTL_SECONDS).await;
    serde_json::from_str(&staged).ok()
}

/// Plays `script` as `turn`'s answer and stores the reply (its text is the chunks').
pub(crate) async fn play<P: Platform>(
    platform: &P,
    turn: &mut Turn<'_>,
    script: Script,
) -> Result<Answer, Error> {
    let mut text = String::new();
    for step in script.steps {
        match step {
            Step::Chunk { text: chunk } => {
                text.push_str(&chunk);
                turn.sink.emit(TurnEvent::Chunk { text: chunk });
            }
            Step::ToolStart {
                call_id,
                name,
                input,
            } => turn.sink.emit(TurnEvent::ToolStart {
                call_id,
                name,
                input,
            }),
            Step::ToolEnd {
                call_id,
                name,
                ok,
                output,
            } => turn.sink.emit(TurnEvent::ToolEnd {
                call_id,
                name,
                ok,
                output,
            }),
            Step::Progress {
                message,
                percentage,
                stage,
            } => turn.sink.emit(TurnEvent::Progress {
                message,
                percentage,
                stage,
            }),
            Step::Payload(payload) => turn.payload(payload),
            Step::Wait { ms } => platform.timer().sleep(ms.min(MAX_WAIT_MS)).await,
        }
    }
    let reply = store_reply(
        platform,
        turn,
        MessageKind::Answer,
        text,
        Default::default(),
        Vec::new(),
    )
    .await?;
    Ok(Answer {
        reply,
        intent: None,
        confidence: None,
        usage: None,
        route: vec!["scripted"],
    })
}
