//! What the flow and its steps share: the model call that collects a text, the step log
//! line, and the seed's summary accumulation.

use alloc::format;
use alloc::string::String;

use crate::boundary::{ChatRequest, LogRecord, Logger, ModelCall};
use crate::engine::{self, Platform};
use crate::error::Error;

/// The seed's accumulation: `existing + "\n\n" + new`, or just `new` when there is no
/// summary yet.
pub fn accumulate_summary(existing: &str, new: &str) -> String {
    if existing.trim().is_empty() {
        String::from(new)
    } else {
        format!("{existing}\n\n{new}")
    }
}

pub(super) fn step(logger: &dyn Logger, conversation_id: &str, step: &'static str, msg: &str) {
    logger.log(&LogRecord::Step {
        conversation_id,
        step,
        msg,
    });
}

/// Runs `request` on `model` (the site's when `None`) and collects its text.
pub(super) async fn complete<P: Platform>(
    platform: &P,
    model: Option<&str>,
    request: &ChatRequest,
) -> Result<String, Error> {
    let call = ModelCall::new(request).on_model(model);
    engine::complete(platform.model(), &call)
        .await
        .map_err(Error::ChatModel)
}
