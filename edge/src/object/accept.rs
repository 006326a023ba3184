//! A background turn's acceptance in the object ([`accept`]): the visitor's message stored,
//! the job queued.

use concierge_core::boundary::ConversationStore;
use concierge_core::conversation::Scope;
use concierge_core::engine::{self, Received};
use concierge_core::turn::{TurnInput, TurnJob};
use worker::{Env, Response};

use super::log::LiveEvent;
use crate::bindings::services::Services;
use crate::bindings::turn_queue;
use crate::error::ApiError;
use crate::templates::SiteAssistant;

/// `Prefer: respond-async`: the visitor's message is stored now and its answer produced on
/// the turn queue (durable, retried); 202 with the ids. The reply id is the one its answer
/// is stored under (a repeat with the same key of an answered message: the stored one's).
pub(crate) async fn accept(
    env: &Env,
    publish: &dyn Fn(LiveEvent),
    services: &Services,
    assistant: &SiteAssistant,
    input: &TurnInput,
    draft: bool,
) -> Result<Response, ApiError> {
    let received = engine::receive(services, assistant, input).await?;
    if let Received::Refused { reply, .. } = &received {
        // Refused before anything was stored (`guarded`'s guardrail): nothing to queue,
        // the refusal is the answer.
        let refused = serde_json::json!({
            "conversation_id": input.conversation_id,
            "refused": true,
            "message": {"role": "assistant", "kind": reply.kind.as_str(), "content": reply.content},
        });
        return Ok(Response::from_json(&refused)?);
    }
    // The visitor's message's embedding (the object outlives the response).
    wasm_bindgen_futures::spawn_local(services.queue_flush());
    if let Received::Pending(pending) = &received {
        let job = TurnJob {
            site_id: input.site_id.clone(),
            conversation_id: input.conversation_id.clone(),
            user_message_id: pending.start.message.id.clone(),
            message_id: pending.reply_id.clone(),
            draft,
        };
        if let Err(err) = turn_queue::send(env, job, 0, 0).await {
            // Stored but not queued: the message is marked, and a repeat with its key
            // (or a new post) tries again.
            let scope = Scope::new(&input.site_id, &input.conversation_id);
            let code = "turn_not_queued";
            let marked = services
                .store
                .mark_answer_failed(scope, &pending.start.message.id, &pending.reply_id, code)
                .await;
            let line = serde_json::json!({
                "level": "error", "msg": "turn not queued", "error": err.to_string(),
                "marked": marked.is_ok(),
            });
            worker::console_error!("{line}");
            return Err(ApiError::TurnNotQueued);
        }
    }
    if let Received::Pending(pending) = &received {
        // The other clients of the conversation see the visitor's message now; its answer
        // streams to them when its turn runs.
        let message = crate::http::message::message_json(&pending.start.message);
        publish(LiveEvent::Message(message));
    }
    let accepted = serde_json::json!({
        "conversation_id": input.conversation_id,
        "user_message_id": received.user_message_id(),
        "message_id": received.reply_id(),
    });
    Ok(Response::from_json(&accepted)?.with_status(202))
}
