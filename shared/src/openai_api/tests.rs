//! The request's validation and mapping, and the completion's shape.

use super::*;
use crate::chat::Usage;
use crate::engine::TurnOutcome;
use alloc::string::ToString;
use alloc::vec;

fn body(json: &str) -> ChatCompletionBody {
    serde_json::from_str(json).expect("body JSON")
}

#[test]
fn stateless_history_drops_system_messages_and_joins_text_parts() {
    let request = body(
        r#"{"model":"m","stream":true,"stream_options":{"include_usage":true},
        "temperature":0.2,"messages":[{"role":"developer","content":"x"},
        {"role":"user","content":"a"},{"role":"assistant","content":"b"},
        {"role":"user","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]}]}"#,
    )
    .validate()
    .expect("valid");
    assert!(request.stream && request.include_usage);
    assert_eq!(
        request.target,
        ChatTarget::Stateless(vec![
            (Role::User, "a".to_string()),
            (Role::Assistant, "b".to_string()),
            (Role::User, "cd".to_string()),
        ])
    );
}

#[test]
fn chat_id_continues_with_the_last_user_message_only() {
    let request = body(
        r#"{"model":"m","chat_id":"c1","messages":[{"role":"user","content":"old"},
        {"role":"user","content":"new one"}]}"#,
    )
    .validate()
    .expect("valid");
    assert_eq!(
        request.target,
        ChatTarget::Continue {
            chat_id: "c1".into(),
            text: "new one".into()
        }
    );
    let new = body(r#"{"model":"m","chat_id":"new","messages":[{"role":"user","content":"hi"}]}"#)
        .validate()
        .expect("valid");
    assert_eq!(new.target, ChatTarget::New { text: "hi".into() });
    assert!(!new.include_usage);
}

#[test]
fn malformed_requests_are_refused_with_the_field_at_fault() {
    let cases = [
        (
            r#"{"messages":[{"role":"user","content":"a"}]}"#,
            RequestError::MissingModel,
        ),
        (r#"{"model":"m"}"#, RequestError::NoMessages),
        (r#"{"model":"m","messages":[]}"#, RequestError::NoMessages),
        (
            r#"{"model":"m","messages":[{"role":"system","content":"a"}]}"#,
            RequestError::NoMessages,
        ),
        (
            r#"{"model":"m","messages":[{"role":"tool","content":"a"}]}"#,
            RequestError::Role { index: 0 },
        ),
        (
            r#"{"model":"m","messages":[{"content":"a"}]}"#,
            RequestError::Role { index: 0 },
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}"#,
            RequestError::Content { index: 0 },
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null}]}"#,
            RequestError::Content { index: 1 },
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}"#,
            RequestError::LastNotUser,
        ),
        (
            r#"{"model":"m","chat_id":"a b","messages":[{"role":"user","content":"a"}]}"#,
            RequestError::ChatId,
        ),
    ];
    for (json, expected) in cases {
        assert_eq!(body(json).validate(), Err(expected), "{json}");
    }
    assert_eq!(RequestError::Role { index: 2 }.param(), "messages");
    assert!(
        RequestError::Content { index: 3 }
            .to_string()
            .starts_with("messages[3]")
    );
}

#[test]
fn a_completion_carries_the_reply_and_usage_or_zeros() {
    use crate::conversation::{Language, MessageKind, StoredMessage};
    let reply = StoredMessage {
        id: "r".into(),
        seq: 2,
        role: Role::Assistant,
        kind: MessageKind::Answer,
        content: "Xin chào".into(),
        metadata: Default::default(),
        created_at: 0,
        tool_steps: Vec::new(),
        payloads: Default::default(),
    };
    let mut outcome = TurnOutcome {
        user_message_id: "u".into(),
        reply,
        intent: None,
        confidence: None,
        language: Language::Vi,
        route: Vec::new(),
        usage: None,
    };
    let json = serde_json::to_value(ChatCompletion::of(&outcome, "c", "m", 7, None)).expect("JSON");
    assert_eq!(json["object"], "chat.completion");
    assert_eq!(json["choices"][0]["message"]["content"], "Xin chào");
    assert_eq!(json["choices"][0]["finish_reason"], "stop");
    assert_eq!(json["usage"]["total_tokens"], 0);
    assert!(json.get("chat_id").is_none());
    outcome.usage = Some(Usage {
        prompt_tokens: 3,
        completion_tokens: 4,
    });
    let json =
        serde_json::to_value(ChatCompletion::of(&outcome, "c", "m", 7, Some("k"))).expect("JSON");
    assert_eq!(json["usage"]["total_tokens"], 7);
    assert_eq!(json["chat_id"], "k");
}
