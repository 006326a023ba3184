//! A turn's events as native events.

use alloc::string::String;

use super::{Completed, Failed, NativeEvent, Progress, Started, ToolEnd, ToolStart};
use crate::turn::TurnEvent;

/// The native event for a turn's `event`, one to one; `request_id` is reported in `started`.
///
/// `Payload { kind, data }` becomes the `payload` event's data `{"kind","data"}`; a
/// `Started` keeps its conversation and reply ids (the visitor message's id is not part of
/// the native stream).
pub fn from_turn(event: &TurnEvent, request_id: Option<&str>) -> NativeEvent {
    match event {
        TurnEvent::Started {
            conversation_id,
            message_id,
            ..
        } => NativeEvent::Started(Started {
            conversation_id: Some(conversation_id.clone()),
            message_id: Some(message_id.clone()),
            request_id: request_id.map(String::from),
        }),
        TurnEvent::Chunk { text } => NativeEvent::Chunk(text.clone()),
        TurnEvent::ToolStart {
            call_id,
            name,
            input,
        } => NativeEvent::ToolStart(ToolStart {
            call_id: call_id.clone(),
            name: name.clone(),
            input: input.clone(),
        }),
        TurnEvent::ToolEnd {
            call_id,
            name,
            ok,
            output,
        } => NativeEvent::ToolEnd(ToolEnd {
            call_id: call_id.clone(),
            name: name.clone(),
            ok: *ok,
            output: output.clone(),
        }),
        TurnEvent::Progress {
            message,
            percentage,
            stage,
        } => NativeEvent::Progress(Progress {
            message: message.clone(),
            percentage: *percentage,
            stage: stage.clone(),
        }),
        TurnEvent::Payload { kind, data } => {
            let mut payload = serde_json::Map::new();
            payload.insert("kind".into(), serde_json::Value::String(kind.clone()));
            payload.insert("data".into(), data.clone());
            NativeEvent::Payload(serde_json::Value::Object(payload))
        }
        TurnEvent::Completed {
            message_id,
            kind,
            intent,
            confidence,
            usage,
            reply,
        } => NativeEvent::Completed(Completed {
            intent: intent.map(String::from),
            confidence: *confidence,
            usage: *usage,
            reply: reply.as_ref().map(|r| r.data.clone()),
            ..Completed::new(
                message_id.clone(),
                reply.as_ref().map_or(kind.as_str(), |r| r.kind),
            )
        }),
        TurnEvent::Failed { code, message } => NativeEvent::Failed(Failed::new(*code, *message)),
    }
}
