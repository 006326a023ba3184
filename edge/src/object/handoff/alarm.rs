//! The object's alarm at the end of a wait for a person: nobody took the conversation, so
//! it goes back to the assistant (state `none`) with a notice saying so.

use concierge_core::conversation::{MessageKind, Metadata, Scope};
use concierge_core::handoff::{HandoffState, Notice, Register};

use super::{KEY_POLITE, KEY_WAIT_UNTIL, load, log, none_since, save, store_and_publish};
use crate::bindings::d1_store::D1Store;
use crate::error::ApiError;
use crate::object::ObjectCtx;

/// The object's alarm fired: still waiting → nobody is free; the assistant carries on.
pub(crate) async fn alarm(obj: &ObjectCtx<'_>) {
    let record = load(obj).await;
    if record.state != HandoffState::Waiting {
        return;
    }
    // An alarm set for something else, before the wait is over: wait on.
    let storage = obj.state.storage();
    let until = storage.get::<String>(KEY_WAIT_UNTIL).await.ok().flatten();
    let until = until.and_then(|until| until.parse::<u64>().ok());
    if let Some(left) = until.and_then(|until| until.checked_sub(obj.now_ms()))
        && left > 1_000
    {
        let _ = storage
            .set_alarm(std::time::Duration::from_millis(left))
            .await;
        return;
    }
    if let Err(error) = time_out(obj).await {
        log(obj, "handoff timeout not recorded", &error);
    }
}

async fn time_out(obj: &ObjectCtx<'_>) -> Result<(), ApiError> {
    use concierge_core::boundary::ConversationStore;
    let now = obj.now_ms();
    // The state first (decided and kept before anything else runs), then the notice.
    save(obj, &none_since(now)).await?;
    let store = D1Store::new(obj.env)?;
    let scope = Scope::new(obj.site_id, obj.conversation_id);
    let conversation = store
        .load_conversation(scope)
        .await
        .map_err(ApiError::store)?
        .ok_or(ApiError::NotFound)?;
    let mut metadata = Metadata::new();
    metadata.insert("handoff".into(), Notice::Timeout.key().into());
    // In the register the wait began in (answer.rs).
    let polite = obj
        .state
        .storage()
        .get::<bool>(KEY_POLITE)
        .await
        .ok()
        .flatten();
    let register = if polite == Some(true) {
        Register::Polite
    } else {
        Register::Friendly
    };
    let content = Notice::Timeout.text(conversation.language, register, None);
    store_and_publish(obj, &store, MessageKind::Handoff, content, metadata, now).await?;
    Ok(())
}
