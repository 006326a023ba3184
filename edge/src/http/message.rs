//! A stored message as every surface shows it (history, live events, the console).

use concierge_core::conversation::StoredMessage;

/// A stored message as the API shows it.
pub(crate) fn message_json(message: &StoredMessage) -> serde_json::Value {
    let mut json = serde_json::json!({
        "id": message.id,
        "role": message.role,
        "content": message.content,
        "kind": message.kind.as_str(),
        "created_at": message.created_at,
        "metadata": message.metadata,
    });
    // A reply's structured content, as its `payload` events carried it (tool rounds stay
    // internal: they are the model's working, not the visitor's answer).
    if !message.payloads.is_empty() {
        json["payloads"] = serde_json::to_value(&message.payloads).unwrap_or_default();
    }
    // A person's reply (kind `human`): who wrote it, as the widget shows it.
    if let Some(author) = message.metadata.get("author") {
        json["author"] = author.clone();
    }
    json
}
